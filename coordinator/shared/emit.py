"""Writing group events where the coordinator changes a group: one call per cause site.

Each helper tests `config.events` once and, when on, writes the event's record with
`rt.write`, in the same call as the change it tells of: a call that raises writes
neither, and the record folds into the history with the others (`shared/events.py`).
With events off a site costs the call and one attribute test. Offset commits, on the
hot path, are summarised by :class:`CommitSummary` (its caller tests the setting inline).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from kcsim.coordinator.records import GroupEventKey

from .events import COMMIT_SUMMARY_MS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from .runtime import GroupRuntime

Detail = dict[str, str | int | list[str]]


def event(rt: GroupRuntime, group: str, group_type: str, kind: str, cause: str = "",
          member: str = "", detail: Detail | None = None) -> None:
    """Write one event of a group of `group_type`, if events are on."""
    if rt.config.events:
        rt.write(rt.events.event(rt.now, group, group_type, kind, cause, member, detail))


def classic(rt: GroupRuntime, group: str, kind: str, cause: str = "", member: str = "",
            detail: Detail | None = None) -> None:
    event(rt, group, "classic", kind, cause, member, detail)


def consumer(rt: GroupRuntime, group: str, kind: str, cause: str = "", member: str = "",
             detail: Detail | None = None) -> None:
    event(rt, group, "consumer", kind, cause, member, detail)


def streams(rt: GroupRuntime, group: str, kind: str, cause: str = "", member: str = "",
            detail: Detail | None = None) -> None:
    event(rt, group, "streams", kind, cause, member, detail)


def group_type(rt: GroupRuntime, group_id: str) -> str:
    """The type of the group under an id (a group of offsets alone is a classic one)."""
    if group_id in rt.consumer_groups:
        return "consumer"
    if rt.streams_groups and group_id in rt.streams_groups:
        return "streams"
    if rt.share_groups and group_id in rt.share_groups:
        return "share"
    return "classic"


def partitions(pairs: Iterable[tuple[str, int]], sep: str = "-") -> list[str]:
    """Partitions as events name them: "topic-partition", sorted (tasks: "subtopology_partition",
    with `sep` "_")."""
    return [f"{t}{sep}{p}" for t, p in sorted(pairs)]


def moved(old: Mapping[str, Iterable[int]], new: Mapping[str, Iterable[int]],
          sep: str = "-") -> Detail:
    """What changed between two assignments by topic name (or subtopology):
    {"added": [...], "removed": [...]}."""
    before = {(t, p) for t, ps in old.items() for p in ps}
    after = {(t, p) for t, ps in new.items() for p in ps}
    return {"added": partitions(after - before, sep), "removed": partitions(before - after, sep)}


class CommitSummary:
    """Offset commits counted per group, written as one `offsets-committed` event per group
    per COMMIT_SUMMARY_MS of coordinator time at most (soft state: a restart starts afresh).

    Every commit is counted while events are on, so the count is the cheap part: the
    caller adds to `counts[group]` (commits, partitions, when the next summary is due)
    itself while `counts[group][2]` is in the future, and calls `note` only otherwise."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        # group -> [commits, partitions, when the next summary is due]
        self.counts: dict[str, list[int]] = {}

    def note(self, rt: GroupRuntime, group_id: str, partitions: int) -> None:
        """Count a commit of `partitions` partitions; write the summary if it is due."""
        counts = self.counts.get(group_id)
        if counts is None:
            counts = self.counts[group_id] = [0, 0, rt.now]
        counts[0] += 1
        counts[1] += partitions
        now = rt.now
        if now >= counts[2]:
            detail: Detail = {"commits": counts[0], "partitions": counts[1]}
            rt.write(rt.events.event(now, group_id, group_type(rt, group_id),
                                     "offsets-committed", "request", "", detail))
            counts[0] = counts[1] = 0
            counts[2] = now + COMMIT_SUMMARY_MS


class _Member(Protocol):
    @property
    def member_id(self) -> str: ...

    def is_reconciled_to(self, target_epoch: int) -> bool: ...


def became_stable(members: Iterable[_Member], before: _Member, after: _Member,
                  target_epoch: int, epoch: int) -> bool:
    """Whether a member's step makes its KIP-848 or streams group stable: the target is the
    group epoch's and every member (`after` among them) holds it, `after` newly."""
    if target_epoch != epoch or not after.is_reconciled_to(epoch) or before.is_reconciled_to(epoch):
        return False
    return all(m.is_reconciled_to(epoch) for m in members if m.member_id != after.member_id)


def changed_since(rt: GroupRuntime, start: int) -> bool:
    """Whether the call wrote a record other than an event since `start`."""
    return any(type(r.key) is not GroupEventKey for r in rt.records[start:])
