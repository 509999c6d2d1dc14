"""Changes to a consumer group shared by heartbeats, timers, pauses and admin calls.

Bumping the group epoch (when subscriptions or the subscribed topics change),
computing the target for it, fencing a member, and the two member timers: the
session (every heartbeat pushes it back) and the rebalance time-out (a member
that does not revoke partitions in time is fenced). A member's timers go with
it when the fold removes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..shared.record_helpers import member_tombstones
from ..shared.timers import TimerKey, rebalance_key, session_key
from .model import ConsumerGroup, ConsumerMember, MemberState
from .records import current_record, epoch_record
from .subscriptions import metadata_hash, refresh_regexes, subscription_metadata
from .target import compute_target

if TYPE_CHECKING:
    from ..shared.runtime import GroupRuntime

class ConsumerGroups:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.rt = runtime

    # -- epochs and targets ----------------------------------------------------

    def refresh_epoch(self, group: ConsumerGroup, bump: bool) -> None:
        """Bump the group epoch if asked to or if the subscribed topics changed."""
        rt = self.rt
        refresh_regexes(group, rt.topics, rt.now)
        meta = subscription_metadata(group, rt.topics)
        new_hash = metadata_hash(meta)
        if bump or new_hash != group.metadata_hash:
            rt.write(epoch_record(group.group_id, group.group_epoch + 1, new_hash))

    def maybe_assign(self, group: ConsumerGroup) -> None:
        """Compute the target for the group epoch if it is newer than the target's."""
        if group.group_epoch > group.assignment_epoch and group.members:
            compute_target(self.rt, group, group.group_epoch,
                           subscription_metadata(group, self.rt.topics))

    def reassign_now(self, group: ConsumerGroup) -> None:
        """New target at once (the assignable partitions changed, e.g. a pause)."""
        self.refresh_epoch(group, bump=True)
        self.maybe_assign(group)

    # -- members ----------------------------------------------------------------

    def write_current(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        """Persist a member's new current assignment and arm or disarm its rebalance time-out."""
        rt = self.rt
        rt.write(current_record(group.group_id, member))
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            self.schedule_revocation(group.group_id, member)
        else:
            rt.deadlines.cancel(rebalance_key(group.group_id, member.member_id))

    def fence(self, group: ConsumerGroup, member_id: str) -> None:
        """Remove a member (left, or timed out) and bump the epoch so others rebalance."""
        rt = self.rt
        for record in member_tombstones(group.group_id, member_id):
            rt.write(record)
        self.refresh_epoch(group, bump=True)

    def schedule_session(self, group_id: str, member_id: str) -> None:
        rt = self.rt
        rt.deadlines.schedule(session_key(group_id, member_id),
                              rt.now + rt.config.consumer_group_session_timeout_ms)

    def schedule_revocation(self, group_id: str, member: ConsumerMember) -> None:
        """The member must give up partitions within its rebalance time-out, at this epoch."""
        rt = self.rt
        rt.deadlines.schedule(rebalance_key(group_id, member.member_id),
                              rt.now + max(member.rebalance_timeout_ms, 0), member.member_epoch)

    # -- timers -------------------------------------------------------------------

    def on_session_expired(self, key: TimerKey, _: object) -> None:
        group = self.rt.consumer_groups.get(key.group_id)
        if group is not None and key.member_id in group.members:
            self.fence(group, key.member_id)

    def on_revocation_expired(self, key: TimerKey, epoch: object) -> None:
        """Fence a member still stuck at the epoch its rebalance time-out was armed for."""
        group = self.rt.consumer_groups.get(key.group_id)
        member = None if group is None else group.members.get(key.member_id)
        if group is not None and member is not None and member.member_epoch == epoch:
            self.fence(group, key.member_id)

    def start_loaded(self, group_id: str) -> None:
        """A group read back from the log: sessions (and pending revocations) start now."""
        group = self.rt.consumer_groups.get(group_id)
        if group is None:
            return
        for member in group.members.values():
            self.schedule_session(group_id, member.member_id)
            if member.state is MemberState.UNREVOKED_PARTITIONS:
                self.schedule_revocation(group_id, member)
