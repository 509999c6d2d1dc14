"""Changes to a consumer group shared by heartbeats, timers, pauses and admin calls.

Bumping the group epoch (when subscriptions or the subscribed topics change),
computing the target for it, fencing a member, and the two member timers: the
session (every heartbeat pushes it back) and the rebalance time-out (a member
that does not revoke partitions in time is fenced). A member's timers go with
it when the fold removes it.

A new target is computed at most once per assignment interval (Kafka 4.3+,
`group.consumer.assignment.interval.ms` or the group's own
`consumer.assignment.interval.ms`): a heartbeat that bumps the group epoch sooner
leaves the target as it was, and the group `Assigning`, until a heartbeat comes
once the interval has passed (Kafka arms no timer for it). When it was last
computed is durable (the target epoch record's timestamp), so a restart keeps to
the same schedule; a group that empties starts afresh and assigns at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode

from ..shared import emit
from ..shared.record_helpers import member_tombstones
from ..shared.timers import TimerKey, rebalance_key, session_key
from .model import Assignment, ConsumerGroup, ConsumerMember, MemberState
from .records import current_record, epoch_record, target_epoch_record
from .subscriptions import metadata_hash, refresh_regexes, subscription_metadata
from .target import compute_target

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..shared.paused import PausedSet
    from ..shared.runtime import GroupRuntime


class ConsumerGroups:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.rt = runtime

    # -- epochs and targets ----------------------------------------------------
    #
    # Each takes `view`: the group as the records this call has written so far will
    # make it (`ConsumerGroup.with_member`), since they fold in only once it returns.

    def next_epoch(self, view: ConsumerGroup, bump: bool, cause: str = "") -> int:
        """The group epoch after this call: one more (written) if asked (for `cause`) or if
        the subscribed topics changed ("metadata-changed"), else the same."""
        rt = self.rt
        self.refresh_regexes(view)
        new_hash = metadata_hash(subscription_metadata(view, rt.topics))
        if bump or new_hash != view.metadata_hash:
            epoch = view.group_epoch + 1
            rt.write(epoch_record(view.group_id, epoch, new_hash))
            emit.consumer(rt, view.group_id, "epoch-bumped", cause if bump else "metadata-changed",
                          detail={"epoch": epoch})
            return epoch
        return view.group_epoch

    def targets(
        self, view: ConsumerGroup, epoch: int, paused: PausedSet | None = None,
        at_once: bool = False,
    ) -> tuple[int, Mapping[str, Assignment]]:
        """The target epoch and every member's target after this call: computed (and
        written) for `epoch` if it is newer than the target's and a new target is due
        (or wanted `at_once`)."""
        rt = self.rt
        if epoch > view.assignment_epoch and view.members and (
                at_once or self.assignment_due(view)):
            if paused is None:
                paused = rt.paused.get(view.group_id)
            meta = subscription_metadata(view, rt.topics)
            return epoch, compute_target(rt, view, epoch, meta, paused)
        return view.assignment_epoch, view.target

    def assignment_due(self, group: ConsumerGroup) -> bool:
        """Whether a new target may be computed now (Kafka's canComputeNextTargetAssignment):
        none was yet, there is no interval, or it has passed since the last.

        A last target stamped after now means the clock went back (a process restart
        loses what a test advanced it by): that one does not hold the group back."""
        last = group.assignment_timestamp
        now = self.rt.now
        return (last == 0 or now < last
                or now >= last + self.rt.group_configs.assignment_interval_ms(group.group_id))

    def reassign_now(self, group: ConsumerGroup, paused: PausedSet, cause: str) -> None:
        """New target at once, whatever the assignment interval: the assignable partitions
        changed (a pause or resume, `cause`, written in this call)."""
        self.targets(group, self.next_epoch(group, bump=True, cause=cause), paused, at_once=True)

    def refresh_regexes(self, view: ConsumerGroup, force: bool = False) -> None:
        """Match the group's regular expressions against the topics again when due (soft state,
        journaled: a call that raises leaves the old matches)."""
        rt = self.rt
        resolved, refreshed = view.resolved_regex, view.regex_refreshed_at

        def undo() -> None:
            view.resolved_regex, view.regex_refreshed_at = resolved, refreshed

        rt.journal.on_undo(undo)
        refresh_regexes(view, rt.topics, rt.now, force)

    # -- members ----------------------------------------------------------------

    def write_current(self, group_id: str, member: ConsumerMember) -> None:
        """Persist a member's new current assignment and arm or disarm its rebalance time-out."""
        rt = self.rt
        rt.write(current_record(group_id, member))
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            self.schedule_revocation(group_id, member)
        else:
            rt.deadlines.cancel(rebalance_key(group_id, member.member_id))

    def fence(self, group: ConsumerGroup, member_id: str, cause: str) -> None:
        """Remove a member (left, or timed out: `cause`) and bump the epoch so others
        rebalance."""
        rt = self.rt
        for record in member_tombstones(group.group_id, member_id):
            rt.write(record)
        emit.consumer(rt, group.group_id, "member-left", cause, member_id)
        view = group.with_member(group.members[member_id], None)
        epoch = self.next_epoch(view, bump=True, cause="member-left")
        if not view.members:
            # Kafka gives a group its last member left the empty target at once; with
            # members left, the target follows at their next heartbeat.
            rt.write(target_epoch_record(group.group_id, epoch))
            emit.consumer(rt, group.group_id, "empty")

    def leave_classic(self, group: ConsumerGroup,
                      identities: list[tuple[str, str | None]]) -> list[int]:
        """A classic LeaveGroup naming members of a consumer group: Kafka removes each as if
        it had left with epoch -1. The error for each (member id, instance id)."""
        view, errors = group, []
        for member_id, instance_id in identities:
            if instance_id is not None:
                member = view.static_member(instance_id)
                if member is None:
                    errors.append(int(ErrorCode.UNKNOWN_MEMBER_ID))
                    continue
                if member_id and member.member_id != member_id:
                    errors.append(int(ErrorCode.FENCED_INSTANCE_ID))
                    continue
                member_id = member.member_id
            elif member_id not in view.members:
                errors.append(int(ErrorCode.UNKNOWN_MEMBER_ID))
                continue
            self.fence(view, member_id, "removed")
            view = view.with_member(view.members[member_id], None)
            errors.append(int(ErrorCode.NONE))
        return errors

    def schedule_session(self, group_id: str, member_id: str) -> None:
        rt = self.rt
        rt.deadlines.schedule(session_key(group_id, member_id),
                              rt.now + rt.group_configs.session_timeout_ms(group_id))

    def schedule_revocation(self, group_id: str, member: ConsumerMember) -> None:
        """The member must give up partitions within its rebalance time-out, at this epoch."""
        rt = self.rt
        rt.deadlines.schedule(rebalance_key(group_id, member.member_id),
                              rt.now + max(member.rebalance_timeout_ms, 0), member.member_epoch)

    # -- timers -------------------------------------------------------------------

    def on_session_expired(self, key: TimerKey, _: object) -> None:
        group = self.rt.consumer_groups.get(key.group_id)
        if group is not None and key.member_id in group.members:
            self.fence(group, key.member_id, "session-timeout")

    def on_revocation_expired(self, key: TimerKey, epoch: object) -> None:
        """Fence a member still stuck at the epoch its rebalance time-out was armed for."""
        group = self.rt.consumer_groups.get(key.group_id)
        member = None if group is None else group.members.get(key.member_id)
        if group is not None and member is not None and member.member_epoch == epoch:
            self.fence(group, key.member_id, "rebalance-timeout")

    def start_loaded(self, group_id: str) -> None:
        """A group read back from the log: sessions (and pending revocations) start now."""
        group = self.rt.consumer_groups.get(group_id)
        if group is None:
            return
        for member in group.members.values():
            self.schedule_session(group_id, member.member_id)
            if member.state is MemberState.UNREVOKED_PARTITIONS:
                self.schedule_revocation(group_id, member)
