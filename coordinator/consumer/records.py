"""The records a consumer group is persisted as, built in one place.

The same five record kinds as Kafka (group epoch, member subscription, target
assignment of each member, target assignment epoch, current assignment of each
member); tombstones are written in Kafka's order so replay never sees a member
without its subscription record behind it.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kcsim.coordinator.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberKey,
    ConsumerGroupMemberValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    TopicPartitions,
)
from kcsim.storage.records import Record

from .model import in_topic_order

if TYPE_CHECKING:
    from .model import Assignment, ConsumerMember


def to_topic_partitions(assignment: Assignment) -> list[TopicPartitions]:
    return [TopicPartitions(topic_id.bytes, partitions)
            for topic_id, partitions in in_topic_order(assignment)]


def from_topic_partitions(stored: list[TopicPartitions]) -> Assignment:
    out: dict[uuid.UUID, frozenset[int]] = {}
    for tp in stored:
        if tp.partitions:
            topic_id = uuid.UUID(bytes=bytes(tp.topic_id))
            out[topic_id] = out.get(topic_id, frozenset()) | frozenset(tp.partitions)
    return out


def epoch_record(group_id: str, epoch: int, metadata_hash: int) -> Record:
    return Record(ConsumerGroupMetadataKey(group_id), ConsumerGroupMetadataValue(epoch, metadata_hash))


def member_record(group_id: str, m: ConsumerMember) -> Record:
    return Record(
        ConsumerGroupMemberKey(group_id, m.member_id),
        ConsumerGroupMemberValue(
            instance_id=m.instance_id,
            rack_id=m.rack_id,
            client_id=m.client_id,
            client_host=m.client_host,
            subscribed_topic_names=sorted(m.subscribed_topic_names),
            subscribed_topic_regex=m.subscribed_topic_regex,
            server_assignor=m.server_assignor,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
        ),
    )


def target_record(group_id: str, member_id: str, assignment: Assignment) -> Record:
    return Record(
        ConsumerGroupTargetAssignmentMemberKey(group_id, member_id),
        ConsumerGroupTargetAssignmentMemberValue(to_topic_partitions(assignment)),
    )


def target_epoch_record(group_id: str, epoch: int, timestamp: int = 0) -> Record:
    """The target epoch, and when its target was computed (0: none was, the group emptied)."""
    return Record(
        ConsumerGroupTargetAssignmentMetadataKey(group_id),
        ConsumerGroupTargetAssignmentMetadataValue(epoch, timestamp),
    )


def current_record(group_id: str, m: ConsumerMember) -> Record:
    return Record(
        ConsumerGroupCurrentMemberAssignmentKey(group_id, m.member_id),
        ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=m.member_epoch,
            previous_member_epoch=m.previous_member_epoch,
            state=int(m.state),
            assigned=to_topic_partitions(m.assigned),
            partitions_pending_revocation=to_topic_partitions(m.pending_revocation),
        ),
    )
