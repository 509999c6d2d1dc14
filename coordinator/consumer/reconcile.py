"""Moving a member from its current assignment towards its target (Kafka's CurrentAssignmentBuilder).

A member first gives up what the target takes away (UNREVOKED_PARTITIONS, same
epoch) and only once its heartbeat no longer reports those partitions does it
move to the target epoch; a partition still held by another member is handed
over only when that member has released it (UNRELEASED_PARTITIONS). So no
partition is ever owned by two members.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from .model import EMPTY, Assignment, ConsumerMember, MemberState

if TYPE_CHECKING:
    from kcsim.protocol.messages.consumer_group import ConsumerGroupHeartbeatRequest

    OwnedTopic = ConsumerGroupHeartbeatRequest.TopicPartitions

Owner = Callable[[uuid.UUID, int], str | None]
Owned = dict[uuid.UUID, set[int]]  # the partitions a heartbeat says the member holds


def owned_partitions(owned: list[OwnedTopic] | None) -> Owned | None:
    """The request's TopicPartitions as a map (None when the request did not say)."""
    if owned is None:
        return None
    out: Owned = {}
    for tp in owned:
        out.setdefault(tp.topic_id, set()).update(tp.partitions)
    return out


def owns_any(owned: Owned | None, partitions: Assignment) -> bool:
    """Whether the member may still hold some of `partitions` (unknown counts as yes)."""
    if owned is None:
        return True
    for topic_id, held in owned.items():
        pending = partitions.get(topic_id)
        if pending and not pending.isdisjoint(held):
            return True
    return False


def reconcile(
    member: ConsumerMember,
    target_epoch: int,
    target: Assignment,
    owner: Owner,
    owned: Owned | None,
) -> ConsumerMember:
    """The member's next current assignment; the same object when nothing changes."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, member.member_epoch, target_epoch, target, owner, owned)
        return member
    if state is MemberState.UNREVOKED_PARTITIONS:
        if owns_any(owned, member.pending_revocation):
            return member
        return _next(member, member.member_epoch + 1, target_epoch, target, owner, owned)
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _next(member, member.member_epoch, target_epoch, target, owner, owned)
    # UNKNOWN (a state from a newer coordinator): the caller fenced it unless it owns nothing.
    return _next(member, target_epoch, target_epoch, target, owner, owned)


def _next(
    member: ConsumerMember,
    epoch: int,
    target_epoch: int,
    target: Assignment,
    owner: Owner,
    owned: Owned | None,
) -> ConsumerMember:
    has_unreleased = False
    assigned: dict[uuid.UUID, frozenset[int]] = {}
    revoking: dict[uuid.UUID, frozenset[int]] = {}
    incoming: dict[uuid.UUID, frozenset[int]] = {}
    current = member.assigned
    for topic_id in set(target) | set(current):
        wanted = target.get(topic_id, frozenset())
        held = current.get(topic_id, frozenset())
        keep = held & wanted
        revoke = held - keep
        add = wanted - keep
        if add:
            free = frozenset(p for p in add if owner(topic_id, p) is None)
            if len(free) != len(add):
                has_unreleased = True
            add = free
        if keep:
            assigned[topic_id] = keep
        if revoke:
            revoking[topic_id] = revoke
        if add:
            incoming[topic_id] = add

    nxt = member.copy()
    if revoking and owns_any(owned, revoking):
        nxt.state = MemberState.UNREVOKED_PARTITIONS
        nxt.previous_member_epoch, nxt.member_epoch = member.member_epoch, epoch
        nxt.assigned = assigned
        nxt.pending_revocation = revoking
    else:
        for topic_id, add in incoming.items():
            assigned[topic_id] = assigned.get(topic_id, frozenset()) | add
        if incoming:
            nxt.state = (
                MemberState.UNRELEASED_PARTITIONS if has_unreleased else MemberState.STABLE
            )
        elif has_unreleased:
            nxt.state = MemberState.UNRELEASED_PARTITIONS
        else:
            nxt.state = MemberState.STABLE
        nxt.previous_member_epoch, nxt.member_epoch = member.member_epoch, target_epoch
        nxt.assigned = assigned
        nxt.pending_revocation = EMPTY
    return member if nxt.current() == member.current() else nxt
