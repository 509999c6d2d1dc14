"""Kafka's own record classes read kcsim's `__consumer_offsets`.

A scenario leaves classic, KIP-848 and paused groups, a deleted offset, a deleted group and
expired offsets behind; a Java consumer reads the whole topic and decodes every record with
`GroupCoordinatorRecordSerde` from kafka-group-coordinator 4.4. The KIP-1249 record has a
type id Kafka does not know: the reader checks that Kafka's serde refuses it and decodes it
from the KIP's schema itself. What the records add up to must be what the broker says the
groups hold, in the partitions Kafka would put them in, and the same after a restart.

The topic is written from its first read on: read before the scenario, it shows each change
as it happened; read only after it, it shows the state the scenario left, one record per key.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kcsim.admin import AdminClient, OffsetSpec, TopicPartition
from kcsim.coordinator.kafka_format import OFFSETS_TOPIC, PAUSED_RECORD_TYPE, partition_for

from . import javaclient
from .offsets_topic_scenario import read_with_kafka_serde, run

pytestmark = [pytest.mark.java, pytest.mark.timeout(240)]

OFFSET_COMMIT, GROUP_METADATA, CONSUMER_GROUP = 1, 2, 3
MEMBER, TARGET_EPOCH, TARGET_MEMBER, CURRENT_MEMBER = 5, 6, 7, 8


def group_of(line: dict[str, Any]) -> str:
    key = line["key"]
    return str(key.get("group", key.get("groupId")))


def fold(lines: list[dict[str, Any]]) -> dict[tuple[int, str], Any]:
    """The newest value of each key: what a compacted topic ends in."""
    state: dict[tuple[int, str], Any] = {}
    for line in lines:
        key = (line["type"], repr(sorted(line["key"].items())))
        if line["value"] is None:
            state.pop(key, None)
        else:
            state[key] = line
    return state


def live(state: dict[tuple[int, str], Any], record_type: int, group: str) -> list[Any]:
    return [line for (t, _), line in state.items() if t == record_type and group_of(line) == group]


@pytest.mark.kcsim(initial_rebalance_delay_ms=0)
@pytest.mark.parametrize("first_read", ["before", "after"])
def test_kafka_serde_decodes_every_record_to_the_groups_the_scenario_left(
        kcsim_persistent: Any, unique_name: Any, first_read: str) -> None:
    javaclient.skip_without_java()
    if first_read == "before":
        with AdminClient(kcsim_persistent.bootstrap, timeout=15) as admin:
            ends = admin.list_offsets({TopicPartition(OFFSETS_TOPIC, p): OffsetSpec.LATEST
                                       for p in range(50)}).all()
        assert {info.offset for info in ends.values()} == {0}
    s = run(kcsim_persistent, unique_name)
    lines, summary = read_with_kafka_serde(kcsim_persistent.bootstrap)

    assert summary["records"] == len(lines)
    assert summary["paused_refused_by_kafka_serde"] == sum(
        line["type"] == PAUSED_RECORD_TYPE for line in lines) > 0
    for line in lines:  # each in the partition Kafka's coordinator would write it to
        assert line["partition"] == partition_for(group_of(line), 50), line
    by_partition: dict[int, list[int]] = {}
    for line in lines:
        by_partition.setdefault(line["partition"], []).append(line["offset"])
    for offsets in by_partition.values():  # dense: nothing else writes there
        assert sorted(offsets) == list(range(len(offsets)))
    for line in lines:
        if line["type"] == OFFSET_COMMIT and line["value"] is not None:
            assert line["value_version"] == 4
            assert line["timestamp"] == line["value"]["commitTimestamp"]

    state = fold(lines)
    with AdminClient(kcsim_persistent.bootstrap, timeout=15) as admin:
        committed = admin.list_group_offsets(
            [s.classic, s.consumer, s.deleted, s.expired]).all()
        topic_id = admin.describe_topics(s.topic).all()[s.topic].topic_id
    for group in (s.classic, s.consumer, s.deleted, s.expired):
        shown = {(line["key"]["topic"], line["key"]["partition"]): line["value"]["offset"]
                 for line in live(state, OFFSET_COMMIT, group)}
        assert shown == {(tp.topic, tp.partition): o.offset
                         for tp, o in committed[group].items()}, group
    assert {line["key"]["partition"] for line in live(state, OFFSET_COMMIT, s.classic)} == {0, 1}
    assert committed[s.deleted] == {} and committed[s.expired] == {}
    if first_read == "before":
        _history_shows_each_change(lines, s)
    else:  # filled at the first read: the state left, each key once, no tombstone
        assert len(state) == len(lines)
        assert all(line["value"] is not None for line in lines)
        assert not {s.deleted, s.expired} & {group_of(line) for line in lines}

    # The classic group is Empty after its member left, at the generation it reached.
    [empty] = live(state, GROUP_METADATA, s.classic)
    assert empty["value"]["members"] == [] and empty["value"]["generation"] >= 1
    assert empty["value"]["protocolType"] == "consumer"

    # The KIP-848 group: its epoch and target assignment epoch stay, its member is gone.
    assert live(state, CONSUMER_GROUP, s.consumer)[0]["value"]["epoch"] >= 1
    assert live(state, TARGET_EPOCH, s.consumer)
    for record_type in (MEMBER, TARGET_MEMBER, CURRENT_MEMBER):
        assert not live(state, record_type, s.consumer), record_type

    # The paused partitions, in the KIP's schema under kcsim's record type.
    [paused] = live(state, PAUSED_RECORD_TYPE, s.consumer)
    assert paused["value"]["pausedTopicPartitions"] == [
        {"topicId": _kafka_uuid(topic_id), "partitions": [0, 1]}]

    # Deleted offsets and groups end in tombstones, and nothing of them is left.
    for group in (s.deleted, s.expired):
        assert not [key for key in state if group in key[1]]

    kcsim_persistent.restart()
    again, _ = read_with_kafka_serde(kcsim_persistent.bootstrap)
    assert sorted(again, key=_position) == sorted(lines, key=_position)


def _history_shows_each_change(lines: list[dict[str, Any]], s: Any) -> None:
    """What a topic read before the scenario shows: each change as it was made."""
    history = {group_of(line) for line in lines}
    assert {s.deleted, s.expired} <= history  # they were written, then deleted
    # The classic group: a generation with its member, before it became Empty.
    metadata = [line for line in lines
                if line["type"] == GROUP_METADATA and group_of(line) == s.classic]
    stable = [m["value"] for m in metadata if m["value"] and m["value"]["members"]]
    assert stable and stable[-1]["protocolType"] == "consumer" and stable[-1]["generation"] >= 1
    assert stable[-1]["members"][0]["assignment"] and stable[-1]["protocol"]
    # The KIP-848 member, its target and current assignment: written, then deleted.
    for record_type in (MEMBER, TARGET_MEMBER, CURRENT_MEMBER):
        written = [line for line in lines
                   if line["type"] == record_type and group_of(line) == s.consumer]
        assert written and written[-1]["value"] is None, record_type
        assert any(line["value"] for line in written), record_type


def _position(line: dict[str, Any]) -> tuple[int, int]:
    return line["partition"], line["offset"]


def _kafka_uuid(topic_id: Any) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")
