"""The server-side assignors Kafka ships: `uniform` (balanced and sticky) and `range`.

Both take the members with the topic ids they subscribe to and their current
target, and the partitions that may be assigned per topic (paused partitions
are left out by the caller), and return every member's new target. `uniform`
follows Kafka's UniformHomogeneousAssignmentBuilder when all members subscribe
to the same topics (balance first, then keep as much of the old target as
possible) and a balance-by-moves variant of the heterogeneous builder
otherwise; `range` follows Kafka's RangeAssignor (contiguous ranges per topic,
static members first by instance id, then members by id).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .model import Assignment

TopicId = uuid.UUID
Available = Mapping[TopicId, Sequence[int]]  # topic id -> assignable partitions, ascending

MAX_BALANCE_ROUNDS = 16


class MemberSpec(NamedTuple):
    member_id: str
    instance_id: str | None
    topics: frozenset[TopicId]
    current: Assignment


class AssignorError(RuntimeError):
    """The assignor could not place every partition (a coordinator bug, never a client's)."""


def homogeneous(members: Sequence[MemberSpec]) -> bool:
    first = members[0].topics
    return all(m.topics == first for m in members)


# -- uniform ------------------------------------------------------------------


def uniform(members: Sequence[MemberSpec], available: Available) -> dict[str, Assignment]:
    if not members:
        return {}
    ordered = sorted(members, key=lambda m: m.member_id)
    if homogeneous(ordered):
        return _uniform_homogeneous(ordered, available)
    return _uniform_heterogeneous(ordered, available)


def _uniform_homogeneous(members: list[MemberSpec], available: Available) -> dict[str, Assignment]:
    topics = sorted((t for t in members[0].topics if t in available), key=lambda t: t.bytes)
    if not topics:
        return {m.member_id: {} for m in members}
    assignable = {t: frozenset(available[t]) for t in topics}
    held: set[tuple[TopicId, int]] = set()
    for m in members:
        for t, ps in m.current.items():
            if t in assignable:
                held.update((t, p) for p in ps if p in assignable[t])
    unassigned = [(t, p) for t in topics for p in available[t] if (t, p) not in held]
    total = sum(len(assignable[t]) for t in topics)
    min_quota, extra = divmod(total, len(members))

    result: dict[str, dict[TopicId, list[int]]] = {}
    unfilled: list[tuple[str, int]] = []
    for m in members:
        quota = min_quota
        if extra > 0:
            quota += 1
            extra -= 1
        kept: dict[TopicId, list[int]] = {}
        for t in sorted(m.current, key=lambda t: t.bytes):
            if t not in assignable:
                continue
            mine = sorted(p for p in m.current[t] if p in assignable[t])
            keep, revoke = mine[:quota], mine[quota:]
            quota -= len(keep)
            if keep:
                kept[t] = keep
            unassigned.extend((t, p) for p in revoke)
        result[m.member_id] = kept
        if quota > 0:
            unfilled.append((m.member_id, quota))

    i = 0
    for member_id, quota in unfilled:
        kept = result[member_id]
        for _ in range(quota):
            if i >= len(unassigned):
                break
            t, p = unassigned[i]
            i += 1
            kept.setdefault(t, []).append(p)
    if i < len(unassigned):
        raise AssignorError(f"{len(unassigned) - i} partitions were left unassigned")
    return {mid: {t: frozenset(ps) for t, ps in a.items()} for mid, a in result.items()}


def _uniform_heterogeneous(members: list[MemberSpec], available: Available) -> dict[str, Assignment]:
    """Keep what is still subscribed, give each free partition to its least loaded
    subscriber (topics with the most partitions per subscriber first), then move
    partitions from the most to the least loaded subscriber of each topic while that
    narrows the gap (at most MAX_BALANCE_ROUNDS passes, like Kafka's builder)."""
    subscribers: dict[TopicId, list[str]] = {}
    for m in members:
        for t in m.topics:
            if available.get(t):
                subscribers.setdefault(t, []).append(m.member_id)
    # topic -> member -> the partitions of that topic it gets
    held: dict[TopicId, dict[str, set[int]]] = {t: {} for t in subscribers}
    taken: dict[TopicId, set[int]] = {t: set() for t in subscribers}
    sizes = {m.member_id: 0 for m in members}
    for m in members:
        for t, ps in m.current.items():
            if t not in subscribers or t not in m.topics:
                continue
            keep = (ps & frozenset(available[t])) - taken[t]
            if keep:
                held[t][m.member_id] = set(keep)
                taken[t] |= keep
                sizes[m.member_id] += len(keep)

    def order(t: TopicId) -> tuple[float, int, bytes]:
        n = len(subscribers[t])
        return (-len(available[t]) / n, n, t.bytes)

    topics = sorted(subscribers, key=order)
    index = {m.member_id: i for i, m in enumerate(members)}

    def lightest(subs: list[str]) -> str:
        return min(subs, key=lambda mid: (sizes[mid], index[mid]))

    for t in topics:
        for p in available[t]:
            if p not in taken[t]:
                chosen = lightest(subscribers[t])
                held[t].setdefault(chosen, set()).add(p)
                sizes[chosen] += 1

    for _ in range(MAX_BALANCE_ROUNDS):
        moved = False
        for t in topics:
            subs = subscribers[t]
            while len(subs) > 1:
                holding = [mid for mid in subs if held[t].get(mid)]
                if not holding:
                    break
                most = max(holding, key=lambda mid: (sizes[mid], -index[mid]))
                least = lightest(subs)
                if sizes[most] - sizes[least] <= 1:
                    break
                p = max(held[t][most])
                held[t][most].discard(p)
                held[t].setdefault(least, set()).add(p)
                sizes[most] -= 1
                sizes[least] += 1
                moved = True
        if not moved:
            break

    result: dict[str, Assignment] = {m.member_id: {} for m in members}
    for t, by_member in held.items():
        for mid, parts in by_member.items():
            if parts:
                result[mid][t] = frozenset(parts)
    return result


# -- range --------------------------------------------------------------------


def _range_order(members: Sequence[MemberSpec]) -> list[MemberSpec]:
    """Static members first by instance id, then the others by member id (Kafka's order)."""
    return sorted(
        members,
        key=lambda m: (0, m.instance_id, "") if m.instance_id is not None else (1, "", m.member_id),
    )


def range_(members: Sequence[MemberSpec], available: Available) -> dict[str, Assignment]:
    ordered = _range_order(members)
    counts: dict[TopicId, int] = {}
    for m in ordered:
        for t in m.topics:
            if t in available:
                counts[t] = counts.get(t, 0) + 1
    quotas = {t: list(divmod(len(available[t]), n)) + [0] for t, n in counts.items()}
    result: dict[str, Assignment] = {}
    for m in ordered:
        assignment: dict[TopicId, frozenset[int]] = {}
        for t in sorted((t for t in m.topics if t in counts), key=lambda t: t.bytes):
            q = quotas[t]  # [min quota, extra partitions left, next start]
            size = q[0]
            if q[1] > 0:
                size += 1
                q[1] -= 1
            start = q[2]
            end = min(start + size, len(available[t]))
            q[2] = end
            if start < end:
                assignment[t] = frozenset(available[t][start:end])
        result[m.member_id] = assignment
    return result


ASSIGNORS: dict[str, Callable[[Sequence[MemberSpec], Available], dict[str, Assignment]]] = {
    "uniform": uniform,
    "range": range_,
}


def assignor_names(spec: str | Iterable[str]) -> tuple[str, ...]:
    """The server assignors a coordinator is configured with, in order (the first is the
    default): a comma-separated list or the names themselves. ValueError unless there is
    at least one, none twice, and every one is an assignor kcsim ships."""
    parts = spec.split(",") if isinstance(spec, str) else spec
    names = tuple(name.strip() for name in parts if name.strip())
    unknown = [name for name in names if name not in ASSIGNORS]
    if not names or unknown or len(set(names)) != len(names):
        raise ValueError(f"consumer group assignors must be distinct names from "
                         f"{', '.join(ASSIGNORS)}, "
                         f"not {spec!r}")
    return names
