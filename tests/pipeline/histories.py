"""Coordinator histories written straight into a record log, as the server writes them.

A history is a list of steps; each step is one append of the server's own
record types (one 10-partition OffsetCommit is one append, hence one batch
frame), stamped with a time that only moves forward. "compact" steps mark
where a test compacts.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from kcsim.coordinator.records import (
    ConsumerGroupMemberKey,
    ConsumerGroupMemberValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    GroupMemberValue,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    PausedTopic,
    PausedTopicPartitionsKey,
    PausedTopicPartitionsValue,
    TopicPartitions,
)
from kcsim.server.state.record_types import RECORD_TYPES
from kcsim.server.state.topic_records import TopicKey, TopicValue
from kcsim.storage import Record, RecordLog

if TYPE_CHECKING:
    from pathlib import Path

TOPIC = "orders"
TOPIC_ID = uuid.UUID(int=7).bytes
GROUPS = ("g0", "g1", "g2")
PARTITIONS = 4


def member(member_id: str) -> GroupMemberValue:
    return GroupMemberValue(member_id, None, "client", "/127.0.0.1", 30000, 10000, "consumer",
                            [("range", b"")], b"")


def topic_records() -> list[Record]:
    return [Record(TopicKey(TOPIC), TopicValue(TOPIC_ID, PARTITIONS))]


def step_records(step: tuple[Any, ...], now: int) -> list[Record]:
    """The records one step appends (an empty list for a compaction point)."""
    kind = step[0]
    if kind == "commit":
        _, group, offsets = step
        return [Record(OffsetCommitKey(group, TOPIC, p), OffsetCommitValue(o, -1, "", now, -1))
                for p, o in offsets]
    if kind == "delete_offsets":
        _, group, partitions = step
        return [Record(OffsetCommitKey(group, TOPIC, p), None) for p in partitions]
    if kind == "classic":
        _, group, generation, members = step
        value = GroupMetadataValue("consumer", generation, "range" if members else None,
                                   f"m{members[0]}" if members else None, now,
                                   [member(f"m{m}") for m in members])
        return [Record(GroupMetadataKey(group), value)]
    if kind == "delete_group":
        return [Record(GroupMetadataKey(step[1]), None)]
    if kind == "pause":
        _, group, partitions = step
        value = (PausedTopicPartitionsValue([PausedTopic(TOPIC_ID, TOPIC, sorted(partitions))])
                 if partitions else None)
        return [Record(PausedTopicPartitionsKey(group), value)]
    if kind == "consumer_member":
        _, group, member_id, present = step
        value = (ConsumerGroupMemberValue(None, None, "client", "/127.0.0.1", [TOPIC], None,
                                          "uniform", 45000) if present else None)
        return [Record(ConsumerGroupMemberKey(group, member_id), value)]
    if kind == "epoch":
        _, group, epoch, members = step
        return [Record(ConsumerGroupMetadataKey(group), ConsumerGroupMetadataValue(epoch, 0))] + [
            Record(ConsumerGroupTargetAssignmentMemberKey(group, m),
                   ConsumerGroupTargetAssignmentMemberValue(
                       [TopicPartitions(TOPIC_ID, [i % PARTITIONS])]))
            for i, m in enumerate(members)]
    if kind == "compact":
        return []
    raise ValueError(kind)


groups = st.sampled_from(GROUPS)
partition_sets = st.frozensets(st.integers(0, PARTITIONS - 1), max_size=PARTITIONS)
steps = st.one_of(
    st.tuples(st.just("commit"), groups,
              st.lists(st.tuples(st.integers(0, PARTITIONS - 1), st.integers(0, 10_000)),
                       min_size=1, max_size=PARTITIONS, unique_by=lambda t: t[0])),
    st.tuples(st.just("delete_offsets"), groups, st.lists(st.integers(0, PARTITIONS - 1),
                                                          min_size=1, max_size=2, unique=True)),
    st.tuples(st.just("classic"), groups, st.integers(0, 50),
              st.lists(st.integers(0, 5), max_size=3, unique=True)),
    st.tuples(st.just("delete_group"), groups),
    st.tuples(st.just("pause"), groups, partition_sets),
    st.tuples(st.just("consumer_member"), st.just("c0"), st.sampled_from(("a", "b", "c")),
              st.booleans()),
    st.tuples(st.just("epoch"), st.just("c0"), st.integers(1, 40),
              st.lists(st.sampled_from(("a", "b", "c")), max_size=3, unique=True)),
    st.tuples(st.just("compact")),
)
# Each step: (step, milliseconds since the previous one).
histories = st.lists(st.tuples(steps, st.integers(0, 40)), min_size=5, max_size=60)


def open_log(data_dir: Path, segment_bytes: int) -> RecordLog:
    return RecordLog.open(data_dir / "meta", types=RECORD_TYPES, segment_bytes=segment_bytes)


def replayed(data_dir: Path) -> list[Record]:
    """Every record a server's start-up would replay from ``data_dir``."""
    with RecordLog.open(data_dir / "meta", types=RECORD_TYPES, read_only=True) as log:
        return list(log.replay())
