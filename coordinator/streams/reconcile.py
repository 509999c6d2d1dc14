"""Moving a member from its current tasks towards its target (Kafka's streams
CurrentAssignmentBuilder), as KIP-848 reconciles partitions.

A member first gives up the tasks its target takes away (UNREVOKED_TASKS, same epoch);
once its heartbeat no longer reports them, it moves to the target epoch. An active task
another member still holds is handed over only once that member has released it
(UNRELEASED_TASKS). So no active task ever has two owners. Standby and warm-up tasks
follow the same revoke-then-assign steps but have no single owner to wait for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .model import EMPTY_TASKS, MemberState, StreamsMember, Tasks, TaskTuple

if TYPE_CHECKING:
    from kcsim.protocol.messages.streams_group import StreamsGroupHeartbeatRequest

    RequestTaskIds = StreamsGroupHeartbeatRequest.TaskIds

Owner = Callable[[str, int], str | None]  # an active task's holder


def owned_tasks(active: list[RequestTaskIds] | None, standby: list[RequestTaskIds] | None,
                warmup: list[RequestTaskIds] | None) -> TaskTuple | None:
    """The tasks a heartbeat says the member holds (None when it did not say)."""
    if active is None or standby is None or warmup is None:
        return None
    return TaskTuple(_tasks(active), _tasks(standby), _tasks(warmup))


def _tasks(ids: list[RequestTaskIds]) -> Tasks:
    out: dict[str, frozenset[int]] = {}
    for t in ids:
        if t.partitions:
            out[t.subtopology_id] = out.get(t.subtopology_id, frozenset()) | frozenset(t.partitions)
    return out


def holds_any(owned: TaskTuple | None, tasks: TaskTuple) -> bool:
    """Whether the member may still hold some of `tasks` (not saying counts as yes)."""
    if owned is None:
        return True
    for held, pending in zip(owned, tasks):
        for sub, partitions in pending.items():
            mine = held.get(sub)
            if mine and not mine.isdisjoint(partitions):
                return True
    return False


def is_subset(owned: TaskTuple | None, assigned: TaskTuple) -> bool:
    """Whether every task the member reports is one of its assigned tasks."""
    if owned is None:
        return False
    for held, given in zip(owned, assigned):
        for sub, partitions in held.items():
            if not partitions <= given.get(sub, frozenset()):
                return False
    return True


def reconcile(member: StreamsMember, target_epoch: int, target: TaskTuple, owner: Owner,
              owned: TaskTuple | None) -> StreamsMember:
    """The member's next current assignment; the same object when nothing changes."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, target_epoch, target, owner, owned)
        return member
    if state is MemberState.UNREVOKED_TASKS:
        if holds_any(owned, member.pending_revocation):
            return member
        return _next(member, target_epoch, target, owner, owned)
    return _next(member, target_epoch, target, owner, owned)


def _next(member: StreamsMember, target_epoch: int, target: TaskTuple, owner: Owner,
          owned: TaskTuple | None) -> StreamsMember:
    kept: list[Tasks] = []
    revoked: list[Tasks] = []
    added: list[Tasks] = []
    unreleased = False
    for kind, (held, wanted) in enumerate(zip(member.assigned, target)):
        keep: dict[str, frozenset[int]] = {}
        revoke: dict[str, frozenset[int]] = {}
        add: dict[str, frozenset[int]] = {}
        for sub in set(held) | set(wanted):
            h, w = held.get(sub, frozenset()), wanted.get(sub, frozenset())
            if h & w:
                keep[sub] = h & w
            if h - w:
                revoke[sub] = h - w
            new = w - h
            if new and kind == 0:  # an active task waits for its holder to let it go
                free = frozenset(p for p in new if owner(sub, p) in (None, member.member_id))
                unreleased = unreleased or free != new
                new = free
            if new:
                add[sub] = new
        kept.append(keep)
        revoked.append(revoke)
        added.append(add)
    nxt = member.copy()
    revoking = TaskTuple(*revoked)
    if not revoking.is_empty() and holds_any(owned, revoking):
        nxt.state = MemberState.UNREVOKED_TASKS
        nxt.previous_member_epoch = member.member_epoch
        nxt.assigned = TaskTuple(*kept)
        nxt.pending_revocation = revoking
    else:
        nxt.assigned = TaskTuple(*(_union(k, a) for k, a in zip(kept, added)))
        nxt.state = MemberState.UNRELEASED_TASKS if unreleased else MemberState.STABLE
        nxt.previous_member_epoch, nxt.member_epoch = member.member_epoch, target_epoch
        nxt.pending_revocation = EMPTY_TASKS
    return member if nxt.current() == member.current() else nxt


def _union(a: Tasks, b: Tasks) -> Tasks:
    out = dict(a)
    for sub, ps in b.items():
        out[sub] = out.get(sub, frozenset()) | ps
    return out
