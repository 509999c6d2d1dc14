"""Changes to a consumer group shared by heartbeats, timers, pauses and admin calls.

Bumping the group epoch (when subscriptions or the subscribed topics change),
computing the target for it, fencing a member, deleting a group, and the two
member timers: the session (every heartbeat pushes it back) and the rebalance
time-out (a member that does not revoke partitions in time is fenced).
"""

from __future__ import annotations

from typing import Any

from kcsim.protocol.errors import ErrorCode

from .model import ConsumerGroup, ConsumerMember, MemberState
from .records import current_record, epoch_record, group_tombstones, member_tombstones
from .subscriptions import metadata_hash, refresh_regexes, subscription_metadata
from .target import compute_target

SESSION = "cg-session"
REBALANCE = "cg-rebalance"


def session_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return (SESSION, group_id, member_id)


def rebalance_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return (REBALANCE, group_id, member_id)


class ConsumerGroups:
    def __init__(self, runtime: Any) -> None:
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
        key = rebalance_key(group.group_id, member.member_id)
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            rt.deadlines.schedule(key, rt.now + max(member.rebalance_timeout_ms, 0),
                                  member.member_epoch)
        else:
            rt.deadlines.cancel(key)

    def fence(self, group: ConsumerGroup, member_id: str) -> None:
        """Remove a member (left, or timed out) and bump the epoch so others rebalance."""
        rt = self.rt
        for record in member_tombstones(group.group_id, member_id):
            rt.write(record)
        self.refresh_epoch(group, bump=True)
        if not group.members:
            # Kafka gives a group its last member left the empty target at once; with
            # members left, the target follows at their next heartbeat.
            compute_target(rt, group, group.group_epoch, {})
        self.cancel_timers(group.group_id, member_id)

    def leave_classic(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> int:
        """A classic LeaveGroup naming a member of a consumer group: Kafka removes it as if
        it had left with epoch -1. The error for that member."""
        if instance_id is not None:
            member = group.static_member(instance_id)
            if member is None:
                return int(ErrorCode.UNKNOWN_MEMBER_ID)
            if member_id and member.member_id != member_id:
                return int(ErrorCode.FENCED_INSTANCE_ID)
            member_id = member.member_id
        elif member_id not in group.members:
            return int(ErrorCode.UNKNOWN_MEMBER_ID)
        self.fence(group, member_id)
        return int(ErrorCode.NONE)

    def cancel_timers(self, group_id: str, member_id: str) -> None:
        self.rt.deadlines.cancel(session_key(group_id, member_id))
        self.rt.deadlines.cancel(rebalance_key(group_id, member_id))

    def schedule_session(self, group_id: str, member_id: str) -> None:
        rt = self.rt
        rt.deadlines.schedule(session_key(group_id, member_id),
                              rt.now + rt.config.consumer_group_session_timeout_ms)

    def delete(self, group: ConsumerGroup) -> None:
        for member_id in list(group.members):
            self.cancel_timers(group.group_id, member_id)
        for record in group_tombstones(group):
            self.rt.write(record)

    # -- timers -------------------------------------------------------------------

    def fire(self, key: tuple, payload: Any) -> None:
        kind, group_id, member_id = key
        group = self.rt.consumer_groups.get(group_id)
        if group is None or member_id not in group.members:
            return
        # A rebalance time-out only fences a member still stuck at the epoch it was armed for.
        stuck = kind == REBALANCE and group.members[member_id].member_epoch == payload
        if kind == SESSION or stuck:
            self.fence(group, member_id)

    def start_loaded(self) -> None:
        """Groups read back from the log: sessions (and pending revocations) start now."""
        rt = self.rt
        loaded, rt.loaded_consumer = rt.loaded_consumer, set()
        for group_id in sorted(loaded):
            group = rt.consumer_groups.get(group_id)
            if group is None:
                continue
            for member in group.members.values():
                self.schedule_session(group_id, member.member_id)
                if member.state is MemberState.UNREVOKED_PARTITIONS:
                    rt.deadlines.schedule(rebalance_key(group_id, member.member_id),
                                          rt.now + max(member.rebalance_timeout_ms, 0),
                                          member.member_epoch)
