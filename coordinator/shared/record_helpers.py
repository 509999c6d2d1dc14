"""Records any part of the coordinator writes about a group: its offsets, its classic
metadata, and the tombstones that remove a KIP-848 or KIP-1071 group or one of its
members.

The tombstones follow Kafka's order (current assignment, target, then subscription;
the group's epoch last), so replay never sees a member without its subscription
record behind it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.coordinator.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberKey,
    ConsumerGroupMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    StreamsGroupCurrentMemberAssignmentKey,
    StreamsGroupMemberKey,
    StreamsGroupMetadataKey,
    StreamsGroupTargetAssignmentMemberKey,
    StreamsGroupTargetAssignmentMetadataKey,
    StreamsGroupTopologyKey,
)
from kcsim.storage.records import Record

if TYPE_CHECKING:
    from collections.abc import Iterable


def group_record(group_id: str, value: GroupMetadataValue | None) -> Record:
    return Record(GroupMetadataKey(group_id), value)


def offset_record(
    group_id: str, topic: str, partition: int, value: OffsetCommitValue | None
) -> Record:
    return Record(OffsetCommitKey(group_id, topic, partition), value)


def member_tombstones(group_id: str, member_id: str) -> list[Record]:
    """Kafka's removeMember order: current assignment, target, then subscription."""
    return [
        Record(ConsumerGroupCurrentMemberAssignmentKey(group_id, member_id), None),
        Record(ConsumerGroupTargetAssignmentMemberKey(group_id, member_id), None),
        Record(ConsumerGroupMemberKey(group_id, member_id), None),
    ]


def consumer_group_tombstones(group_id: str, member_ids: Iterable[str]) -> list[Record]:
    """Everything a KIP-848 group wrote, deleted (Kafka's createGroupTombstoneRecords order)."""
    members = list(member_ids)
    records = [Record(ConsumerGroupCurrentMemberAssignmentKey(group_id, m), None) for m in members]
    records += [Record(ConsumerGroupTargetAssignmentMemberKey(group_id, m), None) for m in members]
    records.append(Record(ConsumerGroupTargetAssignmentMetadataKey(group_id), None))
    records += [Record(ConsumerGroupMemberKey(group_id, m), None) for m in members]
    records.append(Record(ConsumerGroupMetadataKey(group_id), None))
    return records


def streams_member_tombstones(group_id: str, member_id: str) -> list[Record]:
    """A streams member gone, in Kafka's order: current assignment, target, then metadata."""
    return [
        Record(StreamsGroupCurrentMemberAssignmentKey(group_id, member_id), None),
        Record(StreamsGroupTargetAssignmentMemberKey(group_id, member_id), None),
        Record(StreamsGroupMemberKey(group_id, member_id), None),
    ]


def streams_group_tombstones(group_id: str, member_ids: Iterable[str]) -> list[Record]:
    """Everything a streams group wrote, deleted, in Kafka's createGroupTombstoneRecords
    order: current assignments, targets, the target epoch, members, the epoch, the
    topology."""
    members = list(member_ids)
    records = [Record(StreamsGroupCurrentMemberAssignmentKey(group_id, m), None) for m in members]
    records += [Record(StreamsGroupTargetAssignmentMemberKey(group_id, m), None) for m in members]
    records.append(Record(StreamsGroupTargetAssignmentMetadataKey(group_id), None))
    records += [Record(StreamsGroupMemberKey(group_id, m), None) for m in members]
    records.append(Record(StreamsGroupMetadataKey(group_id), None))
    records.append(Record(StreamsGroupTopologyKey(group_id), None))
    return records
