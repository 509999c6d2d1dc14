"""The rebalance protocol of classic groups: join phase, sync phase, sessions.

Follows Kafka's GroupMetadataManager step for step (prepareRebalance,
completeClassicGroupJoin, the initial-rebalance delay, heartbeat and pending-
sync expiry). Handlers and timers call in here; responses to parked requests
and records go out through the runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from kcsim.protocol.errors import ErrorCode

from ..shared import emit
from ..shared.timers import TimerKey, heartbeat_key, join_key, sync_key
from .fold import persist_group
from .paused_assignment import assigned_partitions, without_paused
from .records import group_metadata_value
from .responses import current_members, generation_response, join_error, sync_response
from .state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    Request,
    Rule,
    rule,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..shared.runtime import GroupRuntime
    from .classic import ClassicGroup, Member


class InitialDelay(NamedTuple):
    """The join timer of a group's first rebalance: Kafka's group.initial.rebalance.delay.ms,
    extended while members keep arriving, for at most `remaining` more."""

    delay: int
    remaining: int


class Rebalancer:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.rt = runtime

    # -- sessions -----------------------------------------------------------

    def reschedule_heartbeat(
        self, group: ClassicGroup, member: Member, timeout_ms: int | None = None
    ) -> None:
        timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
        key = member.timer_key  # made once per member: every heartbeat moves it
        if key is None:
            key = member.timer_key = heartbeat_key(group.group_id, member.member_id)
        self.rt.deadlines.schedule(key, self.rt.now + timeout)

    def cancel_heartbeat(self, group: ClassicGroup, member_id: str) -> None:
        self.rt.deadlines.cancel(heartbeat_key(group.group_id, member_id))

    def start_loaded(self, group_id: str) -> None:
        """A group read back from the log: sessions start now, as at a Kafka coordinator load."""
        group = self.rt.groups.get(group_id)
        if group is None:
            return
        for member in group.members.values():
            self.reschedule_heartbeat(group, member)
        if len(group.members) > self.rt.config.group_max_size:
            self.prepare_rebalance(group, "config-changed")

    def on_heartbeat_expired(self, key: TimerKey, _: object) -> None:
        group_id, member_id = key.group_id, key.member_id
        group = self.rt.groups.get(group_id)
        if group is None or group.state is DEAD:
            return
        if group.is_pending_member(member_id):
            group.remove(member_id)
            if group.state is PREPARING_REBALANCE and group.has_all_members_joined():
                self.complete_join(group)
            return
        member = group.members.get(member_id)
        if member is not None and not member.has_satisfied_heartbeat():
            self.remove_member_and_update_group(group, member)

    def remove_member_and_update_group(self, group: ClassicGroup, member: Member) -> None:
        """A member whose session expired leaves; the others rebalance."""
        emit.classic(self.rt, group.group_id, "member-left", "session-timeout", member.member_id)
        waiter = group.take_join_waiter(member)
        if waiter is not None:
            self.rt.respond(waiter.token, join_error(waiter.version, ErrorCode.UNKNOWN_MEMBER_ID))
        self.rt.drop(member.sync_waiter)
        group.remove(member.member_id)
        does = rule(Request.LEAVE, group.state)
        if does is Rule.LEAVE_REBALANCE:
            self.maybe_prepare_rebalance_or_complete_join(group, "member-left")
        elif does is Rule.LEAVE_JOIN_MAY_END and group.has_all_members_joined():
            self.complete_join(group)

    def remove_member_silently(self, group: ClassicGroup, member_id: str) -> None:
        """Drop a member whose parked requests Kafka leaves unanswered: it did not rejoin
        or sync within the rebalance time-out."""
        member = group.members.get(member_id)
        if member is not None:
            emit.classic(self.rt, group.group_id, "member-left", "rebalance-timeout", member_id)
            if member.join_waiter is not None:
                self.rt.drop(group.take_join_waiter(member))
            self.rt.drop(group.take_sync_waiter(member))
        group.remove(member_id)
        self.cancel_heartbeat(group, member_id)

    # -- join phase ---------------------------------------------------------

    def maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup, cause: str) -> None:
        if group.can_rebalance():
            self.prepare_rebalance(group, cause)
        else:
            self.maybe_complete_join_phase(group)

    def prepare_rebalance(self, group: ClassicGroup, cause: str) -> None:
        """Start a rebalance; `cause` says why (an event's cause)."""
        if group.state is COMPLETING_REBALANCE:
            self.reset_and_propagate_assignment_with_error(group, ErrorCode.REBALANCE_IN_PROGRESS)
        self.remove_sync_expiration(group)
        initial = group.state is EMPTY
        if initial:
            delay = self.rt.config.initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self.rt.deadlines.schedule(
                join_key(group.group_id), self.rt.now + delay, InitialDelay(delay, remaining)
            )
        group.transition_to(PREPARING_REBALANCE, self.rt.now)
        emit.classic(self.rt, group.group_id, "rebalance-started", cause)
        if not initial:
            self.maybe_complete_join_else_schedule(group)

    def maybe_complete_join_else_schedule(self, group: ClassicGroup) -> None:
        if group.has_all_members_joined():
            self.complete_join(group)
        else:
            self.rt.deadlines.schedule(
                join_key(group.group_id), self.rt.now + group.rebalance_timeout_ms()
            )

    def maybe_complete_join_phase(self, group: ClassicGroup) -> None:
        """Complete the join phase once everybody rejoined, except during the initial delay."""
        if group.state is not PREPARING_REBALANCE or group.in_initial_rebalance():
            return
        if not group.has_all_members_joined():
            return
        self.complete_join(group)

    def on_join_timer(self, key: TimerKey, initial: object) -> None:
        """The join phase is over: the initial delay (maybe extended) or the rebalance time-out."""
        group = self.rt.groups.get(key.group_id)
        if group is None:
            return
        if isinstance(initial, InitialDelay):
            self.try_complete_initial_rebalance(group, initial.delay, initial.remaining)
        else:
            self.complete_join(group)

    def try_complete_initial_rebalance(
        self, group: ClassicGroup, delay: int, remaining: int
    ) -> None:
        """Kafka's extension rule: while members keep arriving, wait another delay.

        The extensions never exceed the rebalance timeout.
        """
        if group.new_member_added and remaining != 0:
            group.note_new_member(False)
            new_delay = min(self.rt.config.initial_rebalance_delay_ms, remaining)
            new_remaining = max(remaining - delay, 0)
            self.rt.deadlines.schedule(
                join_key(group.group_id),
                self.rt.now + new_delay,
                InitialDelay(new_delay, new_remaining),
            )
        else:
            self.complete_join(group)

    def complete_join(self, group: ClassicGroup) -> None:
        rt = self.rt
        rt.deadlines.cancel(join_key(group.group_id))
        for member in group.not_yet_rejoined():
            if not member.is_static:
                self.remove_member_silently(group, member.member_id)
        if group.state is DEAD:
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            rt.deadlines.schedule(
                join_key(group.group_id), rt.now + _postpone_ms(group)
            )
            return
        group.init_next_generation(rt.now)
        emit.classic(rt, group.group_id, "generation-bumped",
                     detail={"generation": group.generation})
        if group.state is EMPTY:
            persist_group(rt, group, group_metadata_value(group, {}))
            emit.classic(rt, group.group_id, "empty")
            return
        leader_view = None
        for member in group.members.values():
            waiter = group.take_join_waiter(member)
            if waiter is not None:
                members = None
                if group.is_leader(member.member_id):
                    leader_view = leader_view or current_members(group)
                    members = leader_view
                rt.respond(
                    waiter.token,
                    generation_response(waiter.version, group, member.member_id, members=members),
                )
            self.reschedule_heartbeat(group, member)
            group.mark_joined(member)
            group.await_sync(member.member_id)
        rt.deadlines.schedule(
            sync_key(group.group_id), rt.now + group.rebalance_timeout_ms(), group.generation
        )

    # -- sync phase ---------------------------------------------------------

    def remove_sync_expiration(self, group: ClassicGroup) -> None:
        group.clear_pending_sync()
        self.rt.deadlines.cancel(sync_key(group.group_id))

    def on_sync_expired(self, key: TimerKey, generation: object) -> None:
        group = self.rt.groups.get(key.group_id)
        if group is None or generation != group.generation:
            return
        if group.state is not COMPLETING_REBALANCE and group.state is not STABLE:
            return
        if group.pending_sync:
            for member_id in list(group.pending_sync):
                self.remove_member_silently(group, member_id)
            self.prepare_rebalance(group, "member-left")

    def remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.synced(member_id)
        if group.state is COMPLETING_REBALANCE or group.state is STABLE:
            if not group.pending_sync:
                self.rt.deadlines.cancel(sync_key(group.group_id))
        else:
            self.rt.deadlines.cancel(sync_key(group.group_id))

    def reset_and_propagate_assignment_with_error(self, group: ClassicGroup, error: int) -> None:
        assert group.state is COMPLETING_REBALANCE
        for member in group.members.values():
            group.set_assignment(member, b"")
        self.propagate_assignment(group, error)

    def set_and_propagate_assignment(
        self, group: ClassicGroup, assignment: Mapping[str, bytes]
    ) -> None:
        assert group.state is COMPLETING_REBALANCE
        for member in group.members.values():
            group.set_assignment(member, assignment.get(member.member_id, b""))
        self.propagate_assignment(group, ErrorCode.NONE)

    def propagate_assignment(self, group: ClassicGroup, error: int) -> None:
        ok = error == ErrorCode.NONE
        protocol_type = group.protocol_type if ok else None
        protocol_name = group.protocol_name if ok else None
        for member in group.members.values():
            waiter = group.take_sync_waiter(member)
            if waiter is not None:
                self.rt.respond(
                    waiter.token,
                    sync_response(
                        error,
                        protocol_type=protocol_type,
                        protocol_name=protocol_name,
                        assignment=member.assignment,
                    ),
                )
                self.reschedule_heartbeat(group, member)

    def complete_sync_from_leader(self, group: ClassicGroup, assignments: dict[str, bytes]) -> None:
        """The leader's assignment: store the generation, then answer every parked SyncGroup."""
        full = {m: assignments.get(m, b"") for m in group.members}
        full = dict(without_paused(self.rt, group, full))
        persist_group(self.rt, group, group_metadata_value(group, full))
        if self.rt.config.events:
            self._assignment_events(group, full)
        self.set_and_propagate_assignment(group, full)
        group.transition_to(STABLE, self.rt.now)
        emit.classic(self.rt, group.group_id, "stable")

    def _assignment_events(self, group: ClassicGroup, assignments: Mapping[str, bytes]) -> None:
        """`assignment-changed` for each member whose assignment the leader changed: the
        partitions it gained and lost (consumer-protocol groups), else its new size."""
        consumer = group.uses_consumer_protocol()
        for member in group.members.values():
            new = assignments.get(member.member_id, b"")
            if new == member.assignment:
                continue
            if consumer:
                detail = emit.moved(assigned_partitions(member.assignment),
                                    assigned_partitions(new))
            else:
                detail = {"bytes": len(new)}
            emit.classic(self.rt, group.group_id, "assignment-changed", "",
                         member.member_id, detail)


def _postpone_ms(group: ClassicGroup) -> int:
    """How long a join phase that no member rejoined waits to try again: the rebalance
    timeout, as in Kafka, until the absent (static) members' sessions expire. Members may
    send a zero or negative rebalance timeout; waiting that long would retry at once,
    forever, so they wait out the longest session instead."""
    timeout = group.rebalance_timeout_ms()
    if timeout > 0:
        return timeout
    return max((m.session_timeout_ms for m in group.members.values()), default=1)
