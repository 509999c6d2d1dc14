"""The fold of consumer-group records into the groups, at replay and live alike.

Each record kind changes one thing (Kafka's GroupMetadataManager.replay): the
group epoch, a member's subscription, a member's target, the target epoch, or
a member's current assignment. A group appears with its first record and goes
with its epoch tombstone; a classic group with no members standing on the same
id (offsets only, or Empty) gives way, as Kafka replaces simple groups. A
member or group removed takes its timers with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.coordinator.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberKey,
    ConsumerGroupMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
)

from ..shared.timers import rebalance_key, session_key
from .model import EMPTY, ConsumerGroup, ConsumerMember, MemberState
from .records import from_topic_partitions

if TYPE_CHECKING:
    from kcsim.storage.records import Record

    from ..shared.runtime import GroupRuntime


class ConsumerFold:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.rt = runtime

    def register(self) -> None:
        folds = self.rt.folds
        folds[ConsumerGroupMetadataKey] = self.group_epoch
        folds[ConsumerGroupMemberKey] = self.member
        folds[ConsumerGroupTargetAssignmentMemberKey] = self.target
        folds[ConsumerGroupTargetAssignmentMetadataKey] = self.target_epoch
        folds[ConsumerGroupCurrentMemberAssignmentKey] = self.current

    # -- groups -------------------------------------------------------------

    def _group(self, group_id: str, create: bool) -> ConsumerGroup | None:
        return self.rt.folded_group(self.rt.consumer_groups, group_id, create, ConsumerGroup)

    def group_epoch(self, record: Record) -> None:
        gid = record.key.group
        value = record.value
        if value is None:
            gone = self.rt.consumer_groups.pop(gid, None)
            for member_id in gone.members if gone is not None else ():
                self._cancel_timers(gid, member_id)
            return
        group = self._group(gid, True)
        assert group is not None
        group.group_epoch = value.epoch
        group.metadata_hash = value.metadata_hash

    def target_epoch(self, record: Record) -> None:
        group = self._group(record.key.group, record.value is not None)
        if group is not None:
            value = record.value
            group.assignment_epoch = -1 if value is None else value.assignment_epoch
            group.assignment_timestamp = 0 if value is None else value.assignment_timestamp

    def target(self, record: Record) -> None:
        key = record.key
        group = self._group(key.group, record.value is not None)
        if group is None:
            return
        if record.value is None:
            group.target.pop(key.member_id, None)
        else:
            group.target[key.member_id] = from_topic_partitions(record.value.topic_partitions)

    # -- members ------------------------------------------------------------

    def member(self, record: Record) -> None:
        key = record.key
        value = record.value
        group = self._group(key.group, value is not None)
        if group is None:
            return
        member = group.members.get(key.member_id)
        if value is None:
            if member is not None:
                group.release(member)
                group.set_subscription(member, None)
                del group.members[key.member_id]
                self._cancel_timers(key.group, key.member_id)
            return
        if member is None:
            member = group.members[key.member_id] = ConsumerMember(key.member_id)
        before = member.copy()
        member.instance_id = value.instance_id
        member.rack_id = value.rack_id
        member.client_id = value.client_id
        member.client_host = value.client_host
        member.subscribed_topic_names = frozenset(value.subscribed_topic_names)
        member.subscribed_topic_regex = value.subscribed_topic_regex
        member.server_assignor = value.server_assignor
        member.rebalance_timeout_ms = value.rebalance_timeout_ms
        group.set_subscription(before, member)

    def current(self, record: Record) -> None:
        key = record.key
        value = record.value
        group = self._group(key.group, value is not None)
        if group is None:
            return
        member = group.members.get(key.member_id)
        if member is None:
            if value is None:
                return
            member = group.members[key.member_id] = ConsumerMember(key.member_id)
        group.release(member)
        if value is None:
            member.member_epoch = 0
            member.previous_member_epoch = 0
            member.state = MemberState.STABLE
            member.assigned = EMPTY
            member.pending_revocation = EMPTY
            return
        member.member_epoch = value.member_epoch
        member.previous_member_epoch = value.previous_member_epoch
        member.state = MemberState.of(value.state)
        member.assigned = from_topic_partitions(value.assigned)
        member.pending_revocation = from_topic_partitions(value.partitions_pending_revocation)
        group.claim(member)

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        """A member removed from the state takes its timers with it."""
        self.rt.deadlines.cancel(session_key(group_id, member_id))
        self.rt.deadlines.cancel(rebalance_key(group_id, member_id))
