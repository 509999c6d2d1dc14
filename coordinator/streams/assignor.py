"""The sticky task assignor (Kafka's StickyTaskAssignor, in its essentials).

Active tasks: every task goes to exactly one member. A member keeps the active tasks of
its previous target while that keeps the group balanced (no member above its fair share,
ceil(tasks / members), and only as many members at the ceiling as the division leaves);
the rest go one by one, in task order, to the member with the fewest, ties broken by its
process's load and then its id. Standby tasks (`num.standby.replicas`): each replica of a
task goes to a member of another process than its active owner, preferring one that
held it before, then the one with the fewest tasks. kcsim places no warm-up tasks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .model import EMPTY_TASKS, NO_TASKS, Task, Tasks, TaskTuple

if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass(frozen=True, slots=True)
class MemberSpec:
    member_id: str
    process_id: str
    previous: TaskTuple  # the member's previous target


def all_tasks(task_counts: Mapping[str, int]) -> list[Task]:
    return [(sub, p) for sub in sorted(task_counts) for p in range(task_counts[sub])]


def _as_tasks(tasks: list[Task]) -> Tasks:
    out: dict[str, set[int]] = {}
    for sub, p in tasks:
        out.setdefault(sub, set()).add(p)
    return {sub: frozenset(ps) for sub, ps in out.items()} if out else NO_TASKS


def assign(members: list[MemberSpec], task_counts: Mapping[str, int],
           standby_replicas: int = 0) -> dict[str, TaskTuple]:
    """Each member's target for the tasks of `task_counts` (subtopology -> task count)."""
    if not members:
        return {}
    ordered = sorted(members, key=lambda m: m.member_id)
    tasks = all_tasks(task_counts)
    valid = set(tasks)
    base, extra = divmod(len(tasks), len(ordered))
    active: dict[str, list[Task]] = {m.member_id: [] for m in ordered}
    process_load: dict[str, int] = {}
    owner: dict[Task, str] = {}
    at_ceiling = 0
    for m in ordered:  # sticky: keep what the previous target gave, within the fair share
        for sub, partitions in sorted(m.previous.active.items()):
            for p in sorted(partitions):
                task = (sub, p)
                held = active[m.member_id]
                limit = base + 1 if at_ceiling < extra or len(held) < base else base
                if task in valid and task not in owner and len(held) < limit:
                    held.append(task)
                    owner[task] = m.member_id
        if len(active[m.member_id]) > base:
            at_ceiling += 1
        process_load[m.process_id] = process_load.get(m.process_id, 0) + len(active[m.member_id])
    process_of = {m.member_id: m.process_id for m in ordered}
    for task in tasks:
        if task in owner:
            continue
        chosen = min(ordered, key=lambda m: (len(active[m.member_id]),
                                             process_load.get(m.process_id, 0), m.member_id))
        active[chosen.member_id].append(task)
        owner[task] = chosen.member_id
        process_load[chosen.process_id] = process_load.get(chosen.process_id, 0) + 1
    standby = _standbys(ordered, tasks, owner, process_of, standby_replicas)
    return {m.member_id: TaskTuple(_as_tasks(active[m.member_id]),
                                   _as_tasks(standby[m.member_id]), NO_TASKS)
            if active[m.member_id] or standby[m.member_id] else EMPTY_TASKS
            for m in ordered}


def _standbys(ordered: list[MemberSpec], tasks: list[Task], owner: dict[Task, str],
              process_of: dict[str, str], replicas: int) -> dict[str, list[Task]]:
    standby: dict[str, list[Task]] = {m.member_id: [] for m in ordered}
    if replicas <= 0:
        return standby
    active_count = {m.member_id: 0 for m in ordered}
    for holder in owner.values():
        active_count[holder] += 1
    held_before = {m.member_id: {(s, p) for s, ps in m.previous.standby.items() for p in ps}
                   for m in ordered}
    for task in tasks:
        used = {process_of[owner[task]]}
        for _ in range(replicas):
            candidates = [m for m in ordered if m.process_id not in used]
            if not candidates:
                break
            chosen = min(candidates, key=lambda m: (
                task not in held_before[m.member_id],
                len(standby[m.member_id]) + active_count[m.member_id],
                m.member_id))
            standby[chosen.member_id].append(task)
            used.add(chosen.process_id)
    return standby
