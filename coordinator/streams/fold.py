"""The fold of streams-group records into the groups, at replay and live alike.

Each record kind changes one thing (Kafka's GroupMetadataManager.replay): the group
epoch, the topology, a member's metadata, its target, the target epoch, or its current
assignment. A group appears with its first record and goes with its epoch tombstone;
an Empty classic group on the same id (offsets only) gives way, as for consumer groups.
A member or group removed takes its timers with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.coordinator.records import (
    StreamsGroupCurrentMemberAssignmentKey,
    StreamsGroupMemberKey,
    StreamsGroupMetadataKey,
    StreamsGroupTargetAssignmentMemberKey,
    StreamsGroupTargetAssignmentMetadataKey,
    StreamsGroupTopologyKey,
    StreamsTaskIds,
)

from ..shared.timers import (
    streams_initial_delay_key,
    streams_rebalance_key,
    streams_session_key,
)
from .model import EMPTY_TASKS, MemberState, StreamsGroup, StreamsMember, TaskTuple
from .records import from_task_ids

if TYPE_CHECKING:
    from kcsim.storage.records import Record

    from ..shared.runtime import GroupRuntime


class StreamsFold:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.rt = runtime

    def register(self) -> None:
        folds = self.rt.folds
        folds[StreamsGroupMetadataKey] = self.group_epoch
        folds[StreamsGroupTopologyKey] = self.topology
        folds[StreamsGroupMemberKey] = self.member
        folds[StreamsGroupTargetAssignmentMemberKey] = self.target
        folds[StreamsGroupTargetAssignmentMetadataKey] = self.target_epoch
        folds[StreamsGroupCurrentMemberAssignmentKey] = self.current

    def _group(self, group_id: str, create: bool) -> StreamsGroup | None:
        return self.rt.folded_group(self.rt.streams_groups, group_id, create, StreamsGroup)

    def group_epoch(self, record: Record) -> None:
        value = record.value
        if value is None:
            self._forget(record.key.group)
            return
        group = self._group(record.key.group, True)
        assert group is not None
        group.group_epoch, group.metadata_hash = value.epoch, value.metadata_hash
        group.validated_topology_epoch = value.validated_topology_epoch
        group.last_assignment_configs = value.last_assignment_configs

    def _forget(self, group_id: str) -> None:
        gone = self.rt.streams_groups.pop(group_id, None)
        for member_id in () if gone is None else gone.members:
            self._cancel_timers(group_id, member_id)
        self.rt.deadlines.cancel(streams_initial_delay_key(group_id))

    def topology(self, record: Record) -> None:
        group = self._group(record.key.group, record.value is not None)
        if group is not None:
            group.topology = record.value

    def target_epoch(self, record: Record) -> None:
        value = record.value
        group = self._group(record.key.group, value is not None)
        if group is not None:  # a tombstone: the group is emptied, its target gone
            group.assignment_epoch, group.assignment_timestamp = (
                (-1, 0) if value is None else (value.assignment_epoch, value.assignment_timestamp))

    def target(self, record: Record) -> None:
        key, value = record.key, record.value
        group = self._group(key.group, value is not None)
        if group is None:
            return
        if value is None:
            group.target.pop(key.member_id, None)
            return
        group.target[key.member_id] = _tasks(value.active_tasks, value.standby_tasks,
                                             value.warmup_tasks)

    def member(self, record: Record) -> None:
        key, value = record.key, record.value
        group = self._group(key.group, value is not None)
        member = None if group is None else group.members.get(key.member_id)
        if group is None or (value is None and member is None):
            return
        if value is None:
            assert member is not None
            group.release(member)
            group.index_member(member, None)
            del group.members[key.member_id]
            self._cancel_timers(key.group, key.member_id)
            return
        if member is None:
            member = group.members[key.member_id] = StreamsMember(key.member_id)
        before = member.copy()
        (member.instance_id, member.rack_id, member.client_id, member.client_host,
         member.rebalance_timeout_ms, member.topology_epoch, member.process_id,
         member.user_endpoint) = (
            value.instance_id, value.rack_id, value.client_id, value.client_host,
            value.rebalance_timeout_ms, value.topology_epoch, value.process_id,
            value.user_endpoint)
        member.client_tags = tuple(value.client_tags)
        group.index_member(before, member)

    def current(self, record: Record) -> None:
        key, value = record.key, record.value
        group = self._group(key.group, value is not None)
        member = None if group is None else group.members.get(key.member_id)
        if group is None or (value is None and member is None):
            return
        if member is None:
            member = group.members[key.member_id] = StreamsMember(key.member_id)
        group.release(member)
        if value is None:  # back to a member that holds nothing
            member.member_epoch = member.previous_member_epoch = 0
            member.state = MemberState.STABLE
            member.assigned = member.pending_revocation = EMPTY_TASKS
            return
        member.member_epoch = value.member_epoch
        member.previous_member_epoch = value.previous_member_epoch
        member.state = MemberState(value.state)
        member.assigned = _tasks(value.active_tasks, value.standby_tasks, value.warmup_tasks)
        member.pending_revocation = _tasks(value.active_tasks_pending_revocation,
                                           value.standby_tasks_pending_revocation,
                                           value.warmup_tasks_pending_revocation)
        group.claim(member)

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        self.rt.deadlines.cancel(streams_session_key(group_id, member_id))
        self.rt.deadlines.cancel(streams_rebalance_key(group_id, member_id))


def _tasks(active: list[StreamsTaskIds], standby: list[StreamsTaskIds],
           warmup: list[StreamsTaskIds]) -> TaskTuple:
    return TaskTuple(from_task_ids(active), from_task_ids(standby), from_task_ids(warmup))
