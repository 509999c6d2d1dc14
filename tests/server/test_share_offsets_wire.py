"""A share group's start offsets over a real socket: DescribeShareGroupOffsets (90),
AlterShareGroupOffsets (91) and DeleteShareGroupOffsets (92), with Kafka's errors."""

from __future__ import annotations

from typing import Any

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode as E

from .test_share_wire import (
    ACCEPT,
    GROUP,
    TOPIC,
    Member,
    acquired,
    connect,
    joined,
    produce,
    topic_id,
    world,  # noqa: F401 (a fixture)
)

DESCRIBE_OFFSETS, ALTER_OFFSETS, DELETE_OFFSETS = 90, 91, 92
DescribeOffsets = request_class(DESCRIBE_OFFSETS)
AlterOffsets = request_class(ALTER_OFFSETS)
DeleteOffsets = request_class(DELETE_OFFSETS)


def describe(wire: Any, group: str = GROUP, topics: list[str] | None = None,
             version: int = 1) -> Any:
    R = DescribeOffsets
    asked = None if topics is None else [
        R.DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=[0]) for t in topics]
    r = wire.call(DESCRIBE_OFFSETS, version, R(groups=[
        R.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=asked)]))
    return r.groups[0]


def offsets(group: Any) -> dict[tuple[str, int], tuple[int, int, int]]:
    return {(t.topic_name, p.partition_index): (p.start_offset, p.lag, p.error_code)
            for t in group.topics for p in t.partitions}


def alter(wire: Any, start: int, topic: str = TOPIC, group: str = GROUP) -> Any:
    R = AlterOffsets
    return wire.call(ALTER_OFFSETS, 0, R(group_id=group, topics=[
        R.AlterShareGroupOffsetsRequestTopic(topic_name=topic, partitions=[
            R.AlterShareGroupOffsetsRequestPartition(partition_index=0, start_offset=start)])]))


def delete(wire: Any, topic: str = TOPIC, group: str = GROUP) -> Any:
    R = DeleteOffsets
    return wire.call(DELETE_OFFSETS, 0, R(group_id=group, topics=[
        R.DeleteShareGroupOffsetsRequestTopic(topic_name=topic)]))


def consume_all(member: Member, count: int) -> list[tuple[int, int, int]]:
    got = acquired(member.fetch(max_records=count))
    member.ack([(first, last, ACCEPT) for first, last, _ in got])
    return got


def test_altering_to_an_earlier_offset_while_empty_redelivers_from_there(
        kcsim: Any, world: Any) -> None:  # noqa: F811
    wire, tid = world
    a = joined(wire, tid)  # the partition starts at the end of the log
    produce(wire, 5)
    produce(wire, 5)
    assert consume_all(a, 10) == [(0, 9, 1)]
    assert offsets(describe(wire)) == {(TOPIC, 0): (10, 0, 0)}
    assert alter(wire, 3).error_code == E.NON_EMPTY_GROUP  # a member could hold records
    assert delete(wire).error_code == E.NON_EMPTY_GROUP
    a.heartbeat(epoch=-1)
    r = alter(wire, 3)
    assert (r.error_code, r.responses[0].topic_id,
            r.responses[0].partitions[0].error_code) == (0, tid, 0)
    assert offsets(describe(wire)) == {(TOPIC, 0): (3, 7, 0)}
    assert offsets(describe(wire, version=0)) == {(TOPIC, 0): (3, -1, 0)}  # no lag in v0
    b = Member(wire, "member-b", tid)
    b.heartbeat()
    # every record from 3 on is delivered again, as if for the first time
    assert consume_all(b, 20) == [(3, 9, 1)]
    assert offsets(describe(wire)) == {(TOPIC, 0): (10, 0, 0)}


def test_deleting_a_topic_s_offsets_forgets_its_share_state(kcsim: Any, world: Any) -> None:  # noqa: F811
    wire, tid = world
    a = joined(wire, tid)
    produce(wire, 4)
    assert consume_all(a, 4) == [(0, 3, 1)]
    a.heartbeat(epoch=-1)
    r = delete(wire)
    assert (r.error_code, r.responses[0].error_code, r.responses[0].topic_id) == (0, 0, tid)
    assert offsets(describe(wire)) == {}  # all topics: none has share state now
    assert offsets(describe(wire, topics=[TOPIC])) == {(TOPIC, 0): (-1, -1, 0)}


def test_share_group_offsets_errors(kcsim: Any, world: Any) -> None:  # noqa: F811
    wire, tid = world
    assert describe(wire, group="nobody").error_code == E.GROUP_ID_NOT_FOUND
    assert alter(wire, 0, group="nobody").error_code == E.GROUP_ID_NOT_FOUND
    assert delete(wire, group="nobody").error_code == E.GROUP_ID_NOT_FOUND
    a = Member(wire, "member-a", tid)
    a.heartbeat()
    a.heartbeat(epoch=-1)
    assert offsets(describe(wire, topics=["missing"])) == {
        ("missing", 0): (-1, -1, E.UNKNOWN_TOPIC_OR_PARTITION)}
    r = alter(wire, 0, topic="missing")
    assert (r.error_code, r.responses[0].partitions[0].error_code) == (
        0, E.UNKNOWN_TOPIC_OR_PARTITION)
    r = delete(wire, topic="missing")
    assert (r.error_code, r.responses[0].error_code) == (0, E.UNKNOWN_TOPIC_OR_PARTITION)


def test_an_altered_start_offset_survives_a_restart(kcsim_persistent: Any) -> None:
    with connect(kcsim_persistent) as wire:
        wire.create_topic(TOPIC, 1)
        tid = topic_id(wire)
        a = joined(wire, tid)
        produce(wire, 6)
        assert consume_all(a, 6) == [(0, 5, 1)]
        a.heartbeat(epoch=-1)
        assert alter(wire, 2).error_code == 0
    kcsim_persistent.restart()
    with connect(kcsim_persistent) as wire:
        assert offsets(describe(wire)) == {(TOPIC, 0): (2, 4, 0)}
        b = Member(wire, "member-b", tid)
        b.heartbeat()
        assert consume_all(b, 10) == [(2, 5, 1)]

