"""`kcsim consumer-groups` run as a subprocess against kcsim, with groups made by real clients."""

from __future__ import annotations

import csv
import io
import json
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from ..admin.conftest import NOW_MS, record_timestamp
from ..admin.helpers import (
    commit_as_member,
    committed,
    create_topic,
    first_offsets_consumed,
    kcsim_serves_consumer_groups,
    needs_pause_api,
    produce,
    run_cli,
    running_group,
)

if TYPE_CHECKING:
    from pathlib import Path

OFFSETS_HEADER = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                  "CONSUMER-ID", "HOST", "CLIENT-ID"]
COMMITTED = {0: 3, 1: 5, 2: 10}


def table(stdout: str) -> list[list[str]]:
    """The whitespace-separated cells of each non-blank line."""
    return [line.split() for line in stdout.splitlines() if line.strip()]


def column_starts(line: str, cells: list[str]) -> list[int]:
    starts, pos = [], 0
    for c in cells:
        pos = line.index(c, pos)
        starts.append(pos)
        pos += len(c)
    return starts


# -- --list -------------------------------------------------------------------


def test_list_shows_groups_and_filters_by_state(bootstrap: str, topic: str, unique_name: Any) -> None:
    empty, stable = unique_name("empty"), unique_name("stable")
    commit_as_member(bootstrap, empty, topic, {0: 1})
    with running_group(bootstrap, stable, topic, {0: 2}):
        plain = run_cli(bootstrap, "--list")
        assert plain.returncode == 0, plain.stderr
        assert {empty, stable} <= set(plain.stdout.split())

        states = run_cli(bootstrap, "--list", "--state")
        rows = table(states.stdout)
        assert rows[0] == ["GROUP", "STATE"]
        assert {r[0]: r[1] for r in rows[1:]}.items() >= {empty: "Empty", stable: "Stable"}.items()

        only_stable = run_cli(bootstrap, "--list", "--state", "stable")
        listed = [r[0] for r in table(only_stable.stdout)[1:]]
        assert stable in listed and empty not in listed

        typed = json.loads(run_cli(bootstrap, "--list", "--type", "--output", "json").stdout)
        by_group = {g["group"]: g for g in typed}
        assert by_group[stable]["type"] == "classic" and by_group[stable]["state"] == "Stable"
        assert by_group[empty]["protocol_type"] == "consumer"


def test_list_rejects_an_unknown_state(bootstrap: str) -> None:
    result = run_cli(bootstrap, "--list", "--state", "sleepy")
    assert result.returncode == 2
    assert "Invalid state list 'sleepy'" in result.stderr


# -- --describe ---------------------------------------------------------------


def test_describe_a_stable_group_shows_lag_per_partition(
    bootstrap: str, topic: str, unique_name: Any
) -> None:
    group = unique_name("g")
    with running_group(bootstrap, group, topic, COMMITTED):
        result = run_cli(bootstrap, "--describe", "--group", group)
        assert result.returncode == 0, result.stderr
        assert "no active members" not in result.stderr
        lines = [line for line in result.stdout.splitlines() if line.strip()]
        header, rows = lines[0].split(), [line.split() for line in lines[1:]]
        assert header == OFFSETS_HEADER
        by_partition = {int(r[2]): r for r in rows}
        assert {p: (int(r[3]), int(r[4]), int(r[5])) for p, r in by_partition.items()} == {
            0: (3, 10, 7), 1: (5, 10, 5), 2: (10, 10, 0)}
        for r in rows:
            assert r[0] == group and r[1] == topic
            assert r[6].startswith("cli-test-") and r[8] == "cli-test"
        # Kafka's alignment: every value starts under its header.
        starts = column_starts(lines[0], header)
        for line, cells in zip(lines[1:], rows):
            assert column_starts(line, cells) == starts

        explicit = run_cli(bootstrap, "--describe", "--group", group, "--offsets")
        assert table(explicit.stdout) == table(result.stdout)


def test_describe_an_empty_group_warns_and_shows_no_consumers(
    bootstrap: str, topic: str, unique_name: Any
) -> None:
    group = unique_name("g")
    commit_as_member(bootstrap, group, topic, {0: 4, 2: 10})
    result = run_cli(bootstrap, "--describe", "--group", group)
    assert result.returncode == 0, result.stderr
    assert f"Consumer group '{group}' has no active members." in result.stderr
    rows = table(result.stdout)
    assert rows[0] == OFFSETS_HEADER
    assert [r[2:] for r in rows[1:]] == [["0", "4", "10", "6", "-", "-", "-"],
                                         ["2", "10", "10", "0", "-", "-", "-"]]

    parsed = json.loads(run_cli(bootstrap, "--describe", "--group", group,
                                "--output", "json").stdout)
    assert parsed == [{"group": group, "state": "Empty", "partitions": [
        {"topic": topic, "partition": 0, "leader_epoch": parsed[0]["partitions"][0]["leader_epoch"],
         "current_offset": 4, "log_end_offset": 10, "lag": 6,
         "consumer_id": None, "host": None, "client_id": None},
        {"topic": topic, "partition": 2, "leader_epoch": parsed[0]["partitions"][1]["leader_epoch"],
         "current_offset": 10, "log_end_offset": 10, "lag": 0,
         "consumer_id": None, "host": None, "client_id": None},
    ]}]

    as_csv = run_cli(bootstrap, "--describe", "--group", group, "--output", "csv")
    records = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert [(r["partition"], r["lag"], r["consumer_id"]) for r in records] == [
        ("0", "6", ""), ("2", "0", "")]


def test_describe_members_and_state(bootstrap: str, topic: str, unique_name: Any) -> None:
    group = unique_name("g")
    with running_group(bootstrap, group, topic, COMMITTED):
        members = table(run_cli(bootstrap, "--describe", "--group", group, "--members").stdout)
        assert members[0] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
        assert len(members) == 2 and members[1][0] == group and members[1][-1] == "3"

        verbose = run_cli(bootstrap, "--describe", "--group", group, "--members", "--verbose")
        rows = table(verbose.stdout)
        assert rows[0][-4:] == ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH",
                                "TARGET-ASSIGNMENT"]
        assert f"{topic}:0,1,2" in rows[1]

        state = run_cli(bootstrap, "--describe", "--group", group, "--state")
        lines = [line for line in state.stdout.splitlines() if line.strip()]
        assert lines[0].split() == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY",
                                    "STATE", "#MEMBERS"]
        host, port = bootstrap.split(":")
        assert f"{host}:{port}  (1)" in lines[1]
        assert lines[1].split()[-2:] == ["Stable", "1"]

        parsed = json.loads(run_cli(bootstrap, "--describe", "--group", group, "--state",
                                    "--output", "json").stdout)
        assert parsed[0]["state"] == "Stable" and parsed[0]["members"] == 1
        assert parsed[0]["coordinator"] == {"id": 1, "host": host, "port": int(port)}

        members_json = json.loads(run_cli(bootstrap, "--describe", "--group", group, "--members",
                                          "--output", "json").stdout)
        assert members_json[0]["members"][0]["client_id"] == "cli-test"
        assert members_json[0]["members"][0]["partitions"] == 3


def test_describe_several_groups_and_a_missing_one(bootstrap: str, topic: str,
                                                   unique_name: Any) -> None:
    a, b, missing = unique_name("a"), unique_name("b"), unique_name("missing")
    commit_as_member(bootstrap, a, topic, {0: 1})
    commit_as_member(bootstrap, b, topic, {1: 2})
    result = run_cli(bootstrap, "--describe", "--group", a, "--group", missing, "--group", b)
    assert result.returncode == 3
    assert f"Consumer group '{missing}' does not exist." in result.stderr
    groups = {r[0] for r in table(result.stdout)[1:] if r[0] != "GROUP"}
    assert groups == {a, b}


# -- --delete and --delete-offsets ------------------------------------------------


def test_delete_groups(bootstrap: str, topic: str, unique_name: Any) -> None:
    empty, stable, missing = unique_name("empty"), unique_name("stable"), unique_name("missing")
    commit_as_member(bootstrap, empty, topic, COMMITTED)
    with running_group(bootstrap, stable, topic, COMMITTED):
        busy = run_cli(bootstrap, "--delete", "--group", stable)
        assert busy.returncode == 1
        assert "NON_EMPTY_GROUP" in busy.stderr and "Hint:" in busy.stderr

        gone = run_cli(bootstrap, "--delete", "--group", empty)
        assert gone.returncode == 0, gone.stderr
        assert f"Deletion of requested consumer groups ('{empty}') was successful." in gone.stdout
        assert empty not in run_cli(bootstrap, "--list").stdout.split()
        assert committed(bootstrap, empty, topic) == {0: None, 1: None, 2: None}

        absent = run_cli(bootstrap, "--delete", "--group", missing, "--output", "json")
        assert absent.returncode == 3
        assert json.loads(absent.stdout) == [{"group": missing, "deleted": False, "error": {
            "name": "GROUP_ID_NOT_FOUND", "message": "The group id does not exist.",
            "hint": "check the group name with --list"}}]


def test_delete_offsets_of_a_topic(bootstrap: str, topic: str, unique_name: Any) -> None:
    other = unique_name("other")
    create_topic(bootstrap, other)
    produce(bootstrap, other, 2)
    group = unique_name("g")
    commit_as_member(bootstrap, group, topic, COMMITTED)
    commit_as_member(bootstrap, group, other, {0: 1, 1: 1})

    one = run_cli(bootstrap, "--delete-offsets", "--group", group, "--topic", f"{other}:1")
    assert one.returncode == 0, one.stderr
    assert committed(bootstrap, group, other) == {0: 1, 1: None, 2: None}

    whole = run_cli(bootstrap, "--delete-offsets", "--group", group, "--topic", topic)
    assert whole.returncode == 0, whole.stderr
    assert f"Request succeeded for deleting offsets from group {group}." in whole.stdout
    rows = table(whole.stdout.split("\n", 1)[1])
    assert rows[0] == ["TOPIC", "PARTITION", "STATUS"]
    assert rows[1:] == [[topic, str(p), "Successful"] for p in range(3)]
    assert committed(bootstrap, group, topic) == {0: None, 1: None, 2: None}
    assert committed(bootstrap, group, other) == {0: 1, 1: None, 2: None}


def test_delete_offsets_of_a_topic_the_group_consumes_is_refused(
    bootstrap: str, topic: str, unique_name: Any
) -> None:
    group = unique_name("g")
    with running_group(bootstrap, group, topic, COMMITTED):
        result = run_cli(bootstrap, "--delete-offsets", "--group", group, "--topic", topic)
        assert result.returncode == 1
        assert "GROUP_SUBSCRIBED_TO_TOPIC" in result.stderr
        assert committed(bootstrap, group, topic) == COMMITTED


# -- --reset-offsets ------------------------------------------------------------


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


RESETS = {
    "to-earliest": (["--to-earliest"], {0: 0, 1: 0, 2: 0}),
    "to-latest": (["--to-latest"], {0: 10, 1: 10, 2: 10}),
    "to-current": (["--to-current"], COMMITTED),
    "to-offset": (["--to-offset", "4"], {0: 4, 1: 4, 2: 4}),
    "to-offset-clamped": (["--to-offset", "99"], {0: 10, 1: 10, 2: 10}),
    "shift-by-back": (["--shift-by", "-4"], {0: 0, 1: 1, 2: 6}),
    "shift-by-forward": (["--shift-by", "3"], {0: 6, 1: 8, 2: 10}),
    "to-datetime": (["--to-datetime", iso(record_timestamp(0, 4))], {0: 4, 1: 4, 2: 4}),
    "to-datetime-zoned": (["--to-datetime", iso(record_timestamp(0, 6)) + "+00:00"],
                          {0: 6, 1: 6, 2: 6}),
    "by-duration": (["--by-duration", "PT35M"], {0: 7, 1: 7, 2: 7}),
}


def plan_of(stdout: str) -> dict[int, int]:
    """The NEW-OFFSET table, after any `Warn:` lines (which Kafka's tool prints first)."""
    rows = table("\n".join(line for line in stdout.splitlines() if not line.startswith("Warn:")))
    assert rows[0] == ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]
    return {int(r[2]): int(r[3]) for r in rows[1:]}


@pytest.mark.parametrize("mode", list(RESETS))
def test_reset_offsets_dry_run_then_execute(
    bootstrap: str, topic: str, unique_name: Any, mode: str
) -> None:
    flags, expected = RESETS[mode]
    if mode == "by-duration":
        # The records' times count back from when the module was imported; keep the
        # cut 35 minutes before that moment, however long the suite ran since.
        flags = ["--by-duration", f"PT{35 * 60 + (time.time() * 1000 - NOW_MS) // 1000:.0f}S"]
    group = unique_name("g")
    commit_as_member(bootstrap, group, topic, COMMITTED)
    scope = ["--reset-offsets", "--group", group, "--all-topics", *flags]

    dry = run_cli(bootstrap, *scope, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert plan_of(dry.stdout) == expected
    assert committed(bootstrap, group, topic) == COMMITTED

    done = run_cli(bootstrap, *scope, "--execute")
    assert done.returncode == 0, done.stderr
    assert plan_of(done.stdout) == expected
    assert committed(bootstrap, group, topic) == expected


def test_reset_without_execute_is_a_dry_run_with_a_warning(
    bootstrap: str, topic: str, unique_name: Any
) -> None:
    group = unique_name("g")
    commit_as_member(bootstrap, group, topic, COMMITTED)
    result = run_cli(bootstrap, "--reset-offsets", "--group", group, "--topic", f"{topic}:1",
                     "--to-earliest")
    assert result.returncode == 0
    assert "WARN: No action will be performed as the --execute option is missing." in result.stderr
    assert plan_of(result.stdout) == {1: 0}
    assert committed(bootstrap, group, topic) == COMMITTED


def test_reset_some_partitions_then_a_real_consumer_starts_there(
    bootstrap: str, topic: str, unique_name: Any
) -> None:
    group = unique_name("g")
    commit_as_member(bootstrap, group, topic, {0: 9, 1: 9, 2: 9})
    result = run_cli(bootstrap, "--reset-offsets", "--group", group, "--topic", f"{topic}:0,2",
                     "--to-offset", "2", "--execute")
    assert result.returncode == 0, result.stderr
    assert plan_of(result.stdout) == {0: 2, 2: 2}
    assert first_offsets_consumed(bootstrap, group, topic) == {0: 2, 1: 9, 2: 2}


def test_reset_warns_when_a_datetime_is_past_every_record(
    bootstrap: str, topic: str, unique_name: Any
) -> None:
    group = unique_name("g")
    commit_as_member(bootstrap, group, topic, COMMITTED)
    result = run_cli(bootstrap, "--reset-offsets", "--group", group, "--topic", f"{topic}:0",
                     "--to-datetime", "2999-01-01T00:00:00.000", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert plan_of(result.stdout) == {0: 10}
    assert f"Partition 0 from topic {topic} is empty. Falling back to latest" in result.stdout


def test_reset_from_an_exported_plan(
    bootstrap: str, topic: str, unique_name: Any, tmp_path: Path
) -> None:
    source, target = unique_name("source"), unique_name("target")
    commit_as_member(bootstrap, source, topic, COMMITTED)
    commit_as_member(bootstrap, target, topic, {0: 0, 1: 0, 2: 0})
    exported = run_cli(bootstrap, "--reset-offsets", "--group", source, "--all-topics",
                       "--to-current", "--dry-run", "--export")
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.split() == [f"{topic},{p},{o}" for p, o in COMMITTED.items()]

    plan = tmp_path / "plan.csv"
    plan.write_text(exported.stdout)
    applied = run_cli(bootstrap, "--reset-offsets", "--group", target, "--from-file", str(plan),
                      "--execute")
    assert applied.returncode == 0, applied.stderr
    assert committed(bootstrap, target, topic) == COMMITTED

    both = run_cli(bootstrap, "--reset-offsets", "--group", source, "--group", target,
                   "--topic", f"{topic}:0", "--to-earliest", "--dry-run", "--export")
    assert sorted(both.stdout.split()) == sorted([f"{source},{topic},0,0", f"{target},{topic},0,0"])


def test_reset_json_output(bootstrap: str, topic: str, unique_name: Any) -> None:
    group = unique_name("g")
    commit_as_member(bootstrap, group, topic, COMMITTED)
    result = run_cli(bootstrap, "--reset-offsets", "--group", group, "--topic", f"{topic}:2",
                     "--shift-by", "-5", "--execute", "--output", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [{"group": group, "state": "Empty", "executed": True,
                                          "partitions": [{"topic": topic, "partition": 2,
                                                          "new_offset": 5}]}]


def test_reset_of_a_stable_group_is_refused(bootstrap: str, topic: str, unique_name: Any) -> None:
    group = unique_name("g")
    with running_group(bootstrap, group, topic, COMMITTED):
        result = run_cli(bootstrap, "--reset-offsets", "--group", group, "--topic",
                         f"{topic}:0,1", "--to-earliest", "--execute")
        assert result.returncode == 4
        assert (f"Assignments can only be reset if the group '{group}' is inactive, "
                "but the current state is Stable.") in result.stderr
        assert committed(bootstrap, group, topic) == COMMITTED


def test_reset_of_unknown_partitions_is_not_found(bootstrap: str, topic: str,
                                                   unique_name: Any) -> None:
    group = unique_name("g")
    commit_as_member(bootstrap, group, topic, COMMITTED)
    result = run_cli(bootstrap, "--reset-offsets", "--group", group, "--topic", f"{topic}:7",
                     "--to-earliest", "--execute")
    assert result.returncode == 3
    assert f'The partitions "{topic}-7" do not exist' in result.stderr
    assert "UNKNOWN_TOPIC_OR_PARTITION" in result.stderr


# -- usage and connection errors ----------------------------------------------------


@pytest.mark.parametrize(("args", "message"), [
    ([], "Command must include exactly one action"),
    (["--list", "--describe"], "Command must include exactly one action"),
    (["--describe"], "Option --describe takes one of these options: --all-groups, --group"),
    (["--describe", "--group", "g", "--members", "--state"], "takes at most one of"),
    (["--reset-offsets", "--group", "g", "--all-topics"], "requires one of the following"),
    (["--reset-offsets", "--group", "g", "--to-earliest"], "One of the reset scopes"),
    (["--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--to-latest"],
     "is not valid with"),
    (["--reset-offsets", "--group", "g", "--all-topics", "--to-datetime", "yesterday"],
     "is not 'YYYY-MM-DDTHH:mm:SS.sss'"),
    (["--reset-offsets", "--group", "g", "--all-topics", "--by-duration", "1h"],
     "is not a duration"),
    (["--delete", "--group", "g", "--topic", "t"], "--topic can only be used with"),
    (["--list", "--group", "g"], "--group can only be used with"),
])
def test_usage_errors_exit_2(bootstrap: str, args: list[str], message: str) -> None:
    result = run_cli(bootstrap, *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "usage:" in result.stderr


def test_no_broker_is_a_broker_error_with_a_hint(unused_port: int) -> None:
    result = run_cli(f"127.0.0.1:{unused_port}", "--list", timeout_ms=300)
    assert result.returncode == 1
    assert "NETWORK_EXCEPTION" in result.stderr
    assert f"Hint: is a broker listening at 127.0.0.1:{unused_port}?" in result.stderr


@pytest.fixture
def unused_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- KIP-1249: --pause, --resume, --paused-partitions ------------------------------------


@needs_pause_api
def test_pause_reset_and_resume_a_running_group(
    bootstrap: str, topic: str, unique_name: Any
) -> None:
    group = unique_name("g")
    protocol = "consumer" if kcsim_serves_consumer_groups() else "classic"
    with running_group(bootstrap, group, topic, COMMITTED, protocol=protocol):
        paused = run_cli(bootstrap, "--pause", "--group", group, "--topic", f"{topic}:0")
        assert paused.returncode == 0, paused.stderr
        assert table(paused.stdout)[1:] == [[group, topic, "0", "Paused"]]

        listed = json.loads(run_cli(bootstrap, "--paused-partitions", "--group", group,
                                    "--output", "json").stdout)
        assert [(p["topic"], p["partition"]) for p in listed[0]["partitions"]] == [(topic, 0)]

        refused = run_cli(bootstrap, "--reset-offsets", "--group", group, "--topic",
                          f"{topic}:0,1", "--to-earliest", "--execute")
        assert refused.returncode == 4
        assert f"These partitions are not paused: {topic}-1." in refused.stderr
        assert committed(bootstrap, group, topic) == COMMITTED

        reset = run_cli(bootstrap, "--reset-offsets", "--group", group, "--topic", f"{topic}:0",
                        "--to-earliest", "--execute")
        assert reset.returncode == 0, reset.stderr
        assert committed(bootstrap, group, topic)[0] == 0

        resumed = run_cli(bootstrap, "--resume", "--group", group, "--all-topics")
        assert resumed.returncode == 0, resumed.stderr
        assert table(resumed.stdout)[1:] == [[group, topic, "0", "Resumed"]]
        after = json.loads(run_cli(bootstrap, "--paused-partitions", "--group", group,
                                   "--output", "json").stdout)
        assert after[0]["partitions"] == []


def test_pause_against_a_broker_without_kip_1249_names_the_gap() -> None:
    from ..admin.fake_broker import FakeBroker

    with FakeBroker({}) as kafka_like:
        result = run_cli(kafka_like.bootstrap, "--pause", "--group", "g", "--topic", "orders:0")
    assert result.returncode == 1
    assert "UNSUPPORTED_VERSION" in result.stderr and "KIP-1249" in result.stderr
    assert "Hint: pausing needs a kcsim broker" in result.stderr


# -- progress ---------------------------------------------------------------------------


def run_cli_on_terminal(bootstrap: str, *args: str) -> str:
    """Run the command with a pseudo-terminal as stdout and stderr; returns what it showed."""
    import os
    import pty
    import sys

    from ..admin.helpers import REPO

    pid, fd = pty.fork()
    if pid == 0:  # the child: become the command
        os.chdir(REPO)
        os.execv(sys.executable, [sys.executable, "-m", "kcsim", "consumer-groups",
                                  "--bootstrap-server", bootstrap, *args])
    shown = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.waitpid(pid, 0)
    return shown.decode(errors="replace")


def test_progress_shows_on_a_terminal_and_not_in_a_pipe(
    bootstrap: str, topic: str, unique_name: Any
) -> None:
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    from ..admin.helpers import consumer

    groups = [unique_name(f"g{i}") for i in range(12)]
    for group in groups:
        c = consumer(bootstrap, group)
        c.commit(offsets=[KafkaTopicPartition(topic, 0, 5)], asynchronous=False)
        c.close()
    args = ["--reset-offsets", *[a for g in groups for a in ("--group", g)],
            "--topic", f"{topic}:0", "--to-earliest", "--dry-run"]
    piped = run_cli(bootstrap, *args)
    assert piped.returncode == 0, piped.stderr
    assert "resetting offsets" not in piped.stderr
    plan_rows = table(piped.stdout)[1:]
    assert len(plan_rows) == 12 and {r[3] for r in plan_rows} == {"0"}
    assert "resetting offsets" in run_cli_on_terminal(bootstrap, *args)


def test_describe_names_offsets_pending_in_an_open_transaction(
    bootstrap: str, topic: str, unique_name: Any
) -> None:
    """A transactional producer sent offset 7 of partition 0 to its open transaction: the
    group shows its last committed offset (3) and says that one is pending; once the
    transaction commits, 7 is the group's offset and nothing is pending."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka import TopicPartition as CkPartition

    from kcsim.admin import AdminClient, TopicPartition

    group = unique_name("g")
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique_name("tx")})
    try:
        consumer.commit(offsets=[CkPartition(topic, 0, 3)], asynchronous=False)
        producer.init_transactions(10)
        producer.begin_transaction()
        producer.send_offsets_to_transaction([CkPartition(topic, 0, 7)],
                                             consumer.consumer_group_metadata(), 10)
        with AdminClient(bootstrap, timeout=10) as admin:
            assert admin.pending_transactional_offsets(
                group, [TopicPartition(topic, p) for p in range(3)]) == {TopicPartition(topic, 0)}
        result = run_cli(bootstrap, "--describe", "--group", group)
        assert result.returncode == 0, result.stderr
        assert (f"Consumer group '{group}' has offsets pending in an open transaction for "
                f"{topic}-0; CURRENT-OFFSET is the last committed offset.") in result.stderr
        assert [r[:4] for r in table(result.stdout)[1:]] == [[group, topic, "0", "3"]]
        producer.commit_transaction(10)
        result = run_cli(bootstrap, "--describe", "--group", group)
        assert "open transaction" not in result.stderr
        assert [r[:4] for r in table(result.stdout)[1:]] == [[group, topic, "0", "7"]]
    finally:
        consumer.close()
