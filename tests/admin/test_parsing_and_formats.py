"""Offline pieces of the command: Kafka-style tables, JSON/CSV, time and topic arguments,
reset plan files, option rules; and the wire correlator."""

from __future__ import annotations

import argparse
import json
import struct
from datetime import timedelta

import pytest

from kcsim.admin import AdminError, TopicPartition
from kcsim.admin.wire import Correlator, ProtocolViolation, negotiate
from kcsim.protocol.codecs import codec
from kcsim.protocol.errors import ErrorCode
from kcsim.tools.group_command.options import add_arguments, validate
from kcsim.tools.group_command.render import (
    Column,
    Section,
    format_table,
    rows_csv,
    sections_json,
)
from kcsim.tools.group_command.report import (
    BROKER_ERROR,
    NOT_FOUND,
    REFUSED,
    Reporter,
    UsageError,
)
from kcsim.tools.group_command.scope import parse_reset_plan, parse_topic_arg
from kcsim.tools.group_command.timespec import parse_datetime_ms, parse_duration

# -- tables as Kafka prints them ------------------------------------------------------


def test_table_matches_kafka_printf_widths() -> None:
    columns = [Column("group", "GROUP", grows=True), Column("topic", "TOPIC", grows=True),
               Column("partition", "PARTITION", 10), Column("lag", "LAG"),
               Column("client", "CLIENT-ID")]
    rows = [{"group": "g", "topic": "a-rather-long-topic-name", "partition": 0, "lag": None,
             "client": "c1"}]
    header, row = format_table(columns, rows)
    # Kafka: "%-15s %-24s %-10s %-15s %s" with the topic column widened to its longest value.
    assert header == f"{'GROUP':<15} {'TOPIC':<24} {'PARTITION':<10} {'LAG':<15} CLIENT-ID"
    assert row == f"{'g':<15} {'a-rather-long-topic-name':<24} {'0':<10} {'-':<15} c1"


def test_fixed_columns_do_not_grow_and_lines_have_no_trailing_spaces() -> None:
    columns = [Column("a", "A", 3), Column("b", "B", 3)]
    assert format_table(columns, [{"a": "toolong", "b": ""}]) == ["A   B", "toolong"]


def test_json_and_csv_of_sections() -> None:
    error = AdminError(ErrorCode.GROUP_ID_NOT_FOUND)
    sections = [Section("g1", [{"group": "g1", "partition": 0, "lag": None}], state="Empty"),
                Section("g2", error=error)]
    assert json.loads(sections_json(sections, "partitions")) == [
        {"group": "g1", "state": "Empty", "partitions": [{"partition": 0, "lag": None}]},
        {"group": "g2", "error": {"name": "GROUP_ID_NOT_FOUND",
                                  "message": "The group id does not exist.",
                                  "hint": "check the group name with --list"}},
    ]
    columns = [Column("group", "GROUP"), Column("partition", "PARTITION"), Column("lag", "LAG")]
    assert rows_csv(columns, sections[0].rows) == "group,partition,lag\ng1,0,"


# -- errors and exit codes -------------------------------------------------------------


def test_errors_carry_kafka_names_and_hints() -> None:
    error = AdminError(ErrorCode.NON_EMPTY_GROUP)
    assert (error.name, error.message) == ("NON_EMPTY_GROUP", "The group is not empty.")
    assert "stop the group's consumers" in error.hint
    assert AdminError(ErrorCode.NOT_COORDINATOR).coordinator_moved
    assert AdminError(9999).name == "UNKNOWN(9999)"


def test_the_most_serious_outcome_sets_the_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    report = Reporter()
    report.not_found("gone")
    assert report.exit_code == NOT_FOUND
    report.refuse("active")
    assert report.exit_code == REFUSED
    report.error(AdminError(ErrorCode.NON_EMPTY_GROUP), "group 'g'")
    report.not_found("gone again")
    assert report.exit_code == BROKER_ERROR
    err = capsys.readouterr().err
    assert "Error: group 'g': NON_EMPTY_GROUP: The group is not empty.\n  Hint: " in err


# -- arguments -------------------------------------------------------------------------


def test_datetimes_are_utc_unless_zoned() -> None:
    assert parse_datetime_ms("2024-03-01T12:00:00.000") == 1709294400000
    assert parse_datetime_ms("2024-03-01T12:00:00.250Z") == 1709294400250
    assert parse_datetime_ms("2024-03-01T14:00:00.000+02:00") == 1709294400000
    assert parse_datetime_ms("2024-03-01T14:00:00.000+0200") == 1709294400000
    for bad in ("2024-03-01", "yesterday", "2024-13-01T00:00:00.000"):
        with pytest.raises(ValueError, match="is not 'YYYY-MM-DDTHH"):
            parse_datetime_ms(bad)


def test_durations_read_like_java_duration_parse() -> None:
    assert parse_duration("PT30M") == timedelta(minutes=30)
    assert parse_duration("P1DT2H3M4.5S") == timedelta(days=1, hours=2, minutes=3, seconds=4.5)
    assert parse_duration("pt1h") == timedelta(hours=1)
    assert parse_duration("-PT1H") == timedelta(hours=-1)
    for bad in ("P", "PT", "1h", "P1W", "P1DT"):
        with pytest.raises(ValueError, match=r"duration|no time after"):
            parse_duration(bad)


def test_topic_arguments() -> None:
    assert parse_topic_arg("orders") == ("orders", None)
    assert parse_topic_arg("orders:0,2") == ("orders", [0, 2])
    with pytest.raises(UsageError, match="Invalid partition 'x'"):
        parse_topic_arg("orders:x")
    with pytest.raises(UsageError, match="expected topic name and partitions"):
        parse_topic_arg("a:b:c")


def test_reset_plans_with_and_without_group_column() -> None:
    assert parse_reset_plan("t,0,5\nt,1,6\n", ["g"]) == {
        "g": {TopicPartition("t", 0): 5, TopicPartition("t", 1): 6}}
    assert parse_reset_plan("g1,t,0,5\n\ng2,t,0,7\n", []) == {
        "g1": {TopicPartition("t", 0): 5}, "g2": {TopicPartition("t", 0): 7}}
    with pytest.raises(UsageError, match="needs exactly one --group"):
        parse_reset_plan("t,0,5", ["g1", "g2"])
    with pytest.raises(UsageError, match="line 1"):
        parse_reset_plan("t,zero,5", ["g"])


def options(*argv: str) -> object:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return validate(parser.parse_args(["--bootstrap-server", "b:9092", *argv]))


def test_option_rules() -> None:
    opts = options("--reset-offsets", "--group", "g", "--topic", "t", "--shift-by", "-3")
    assert (opts.scenario, opts.scenario_value, opts.execute) == ("shift_by", -3, False)
    assert options("--list", "--state", "stable,EMPTY").states == ("Stable", "Empty")
    assert options("--describe", "--all-groups", "--members").view == "members"
    assert options("--describe", "--group", "g", "--state").view == "state"
    for argv, message in [
        (("--describe", "--group", "g", "--state", "Stable"), "does not take a value"),
        (("--list", "--type", "streams"), "Invalid types list"),
        (("--delete-offsets", "--group", "g"), "--delete-offsets takes"),
        (("--pause", "--group", "g"), "takes one of --topic, --all-topics"),
        (("--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--execute",
          "--dry-run"), "only accepts one of --execute and --dry-run"),
        (("--describe", "--group", "g", "--all-groups"), "cannot be used with --all-groups"),
    ]:
        with pytest.raises(UsageError, match=message):
            options(*argv)


# -- the wire correlator ----------------------------------------------------------------


def _frame(correlation_id: int, body: bytes) -> bytes:
    payload = struct.pack(">i", correlation_id) + body
    return struct.pack(">i", len(payload)) + payload


def test_correlator_matches_responses_arriving_in_pieces() -> None:
    correlator = Correlator("test")
    request_class = codec(18, "request").cls
    first, frame = correlator.request(18, 0, request_class())
    second, _ = correlator.request(18, 0, request_class())
    assert struct.unpack_from(">ihhi", frame, 0)[1:] == (18, 0, first)
    response_codec = codec(18, "response")
    body = response_codec.encode(response_codec.cls(error_code=0, api_keys=[]), 0)
    data = _frame(second, body) + _frame(first, body)
    got = []
    for i in range(0, len(data), 3):  # three bytes at a time
        got += correlator.receive(data[i:i + 3])
    assert [r.correlation_id for r in got] == [second, first]
    assert correlator.in_flight == 0


def test_correlator_drops_answers_nobody_waits_for_and_rejects_bad_frames() -> None:
    correlator = Correlator("test")
    cid, _ = correlator.request(18, 0, codec(18, "request").cls())
    correlator.forget(cid)
    response_codec = codec(18, "response")
    body = response_codec.encode(response_codec.cls(error_code=0, api_keys=[]), 0)
    assert correlator.receive(_frame(cid, body)) == []
    with pytest.raises(ProtocolViolation):
        correlator.receive(struct.pack(">i", -5))


def test_version_negotiation_takes_the_highest_common_version() -> None:
    served = {9: (0, 10)}
    assert negotiate(served, 9, 1, 9) == 9
    assert negotiate(served, 9, 11, 12) is None
    assert negotiate(served, 42, 0, 2) is None
