"""A share group and its members as its records leave them (Kafka's ShareGroup).

Membership is KIP-848's (a group epoch, member epochs, subscriptions by topic name,
a target assignment per member), without revocation: a partition may be shared, so a
member takes its target at once. :class:`ShareGroups` is the fold of the ShareGroup*
records, the same live and at replay; :func:`member_records` and :func:`target_records`
build them in Kafka's order.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kcsim.coordinator.records import (
    ShareGroupCurrentMemberAssignmentKey,
    ShareGroupCurrentMemberAssignmentValue,
    ShareGroupMemberKey,
    ShareGroupMemberValue,
    ShareGroupMetadataKey,
    ShareGroupMetadataValue,
    ShareGroupTargetAssignmentMemberKey,
    ShareGroupTargetAssignmentMemberValue,
    ShareGroupTargetAssignmentMetadataKey,
    ShareGroupTargetAssignmentMetadataValue,
    TopicPartitions,
)
from kcsim.storage.records import Record

from .assignor import Assignment

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ShareGroup", "ShareGroups", "ShareMember", "member_records", "target_records"]

STABLE = 0  # the only MemberState a share member has


def _topic_partitions(assignment: Assignment) -> list[TopicPartitions]:
    return [
        TopicPartitions(t.bytes, sorted(ps))
        for t, ps in sorted(assignment.items(), key=lambda kv: kv[0].bytes)
    ]


def _assignment(tps: list[TopicPartitions]) -> Assignment:
    return {uuid.UUID(bytes=tp.topic_id): frozenset(tp.partitions) for tp in tps}


@dataclass
class ShareMember:
    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    member_epoch: int = 0
    previous_member_epoch: int = 0
    assigned: Assignment = field(default_factory=dict)


@dataclass
class ShareGroup:
    group_id: str
    epoch: int = 0
    metadata_hash: int = 0
    assignment_epoch: int = 0
    assignment_timestamp: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    targets: dict[str, Assignment] = field(default_factory=dict)
    # the most members the group held at once: Kafka's table of them never shrinks, and
    # the order it lists them in (which the assignor follows) depends on its size
    peak_members: int = 0

    @property
    def state(self) -> str:
        """Kafka's ShareGroupState: Empty, Stable, or Dead once removed."""
        return "Stable" if self.members else "Empty"

    def member(self, member_id: str) -> ShareMember:
        m = self.members.get(member_id)
        if m is None:
            m = self.members[member_id] = ShareMember(member_id)
            self.peak_members = max(self.peak_members, len(self.members))
        return m


class ShareGroups:
    """Every share group, folded from its records."""

    def __init__(self, groups: dict[str, ShareGroup] | None = None) -> None:
        self.groups: dict[str, ShareGroup] = {} if groups is None else groups

    def get(self, group_id: str) -> ShareGroup | None:
        return self.groups.get(group_id)

    def _group(self, group_id: str) -> ShareGroup:
        g = self.groups.get(group_id)
        if g is None:
            g = self.groups[group_id] = ShareGroup(group_id)
        return g

    def apply(self, record: Record) -> None:
        k, v = record.key, record.value
        if isinstance(k, ShareGroupMetadataKey):
            if v is None:
                self.groups.pop(k.group, None)
            elif isinstance(v, ShareGroupMetadataValue):
                g = self._group(k.group)
                g.epoch, g.metadata_hash = v.epoch, v.metadata_hash
        elif isinstance(k, ShareGroupMemberKey):
            if v is None:
                g0 = self.groups.get(k.group)
                if g0 is not None:
                    g0.members.pop(k.member_id, None)
            elif isinstance(v, ShareGroupMemberValue):
                m = self._group(k.group).member(k.member_id)
                m.rack_id, m.client_id, m.client_host = v.rack_id, v.client_id, v.client_host
                m.subscribed_topic_names = frozenset(v.subscribed_topic_names)
        elif isinstance(k, ShareGroupTargetAssignmentMetadataKey):
            if isinstance(v, ShareGroupTargetAssignmentMetadataValue):
                g = self._group(k.group)
                g.assignment_epoch, g.assignment_timestamp = v.assignment_epoch, v.assignment_timestamp
        elif isinstance(k, ShareGroupTargetAssignmentMemberKey):
            if v is None:
                g0 = self.groups.get(k.group)
                if g0 is not None:
                    g0.targets.pop(k.member_id, None)
            elif isinstance(v, ShareGroupTargetAssignmentMemberValue):
                self._group(k.group).targets[k.member_id] = _assignment(v.topic_partitions)
        elif isinstance(k, ShareGroupCurrentMemberAssignmentKey):
            g0 = self.groups.get(k.group)
            if isinstance(v, ShareGroupCurrentMemberAssignmentValue) and g0 is not None:
                m = g0.member(k.member_id)
                m.member_epoch, m.previous_member_epoch = v.member_epoch, v.previous_member_epoch
                m.assigned = _assignment(v.assigned)


def member_records(group: str, member: ShareMember) -> list[Record]:
    """A member's subscription and its current assignment."""
    return [
        Record(
            ShareGroupMemberKey(group, member.member_id),
            ShareGroupMemberValue(
                member.rack_id,
                member.client_id,
                member.client_host,
                sorted(member.subscribed_topic_names),
            ),
        ),
        Record(
            ShareGroupCurrentMemberAssignmentKey(group, member.member_id),
            ShareGroupCurrentMemberAssignmentValue(
                member.member_epoch,
                member.previous_member_epoch,
                STABLE,
                _topic_partitions(member.assigned),
            ),
        ),
    ]


def target_records(
    group: str, epoch: int, targets: Mapping[str, Assignment], now_ms: int
) -> list[Record]:
    """A new target assignment: each member's, then the epoch it was computed at."""
    records = [
        Record(
            ShareGroupTargetAssignmentMemberKey(group, member),
            ShareGroupTargetAssignmentMemberValue(_topic_partitions(assignment)),
        )
        for member, assignment in sorted(targets.items())
    ]
    records.append(
        Record(
            ShareGroupTargetAssignmentMetadataKey(group),
            ShareGroupTargetAssignmentMetadataValue(epoch, now_ms),
        )
    )
    return records
