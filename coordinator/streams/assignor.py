"""The sticky task assignor: Kafka's StickyTaskAssignor, step for step where its choices
are determined (ties Kafka leaves to hash order go to the lowest process or member id).

Tasks of stateful subtopologies (those with a changelog) are placed first, then the
stateless ones, each flavor balanced on its own. For each, in task order by partition:
(1) a task stays with its previous active member while that member is under its quota;
(2) else it goes to a member that held it as a standby, if under quota; (3) the rest, in
order by subtopology, go to the least loaded process (tasks per member), there to its
least loaded member. A quota is the fair share, ceil(tasks / members), recomputed over the
tasks and members left each time a member fills it. Standby tasks
(`num.standby.replicas`) go to the processes that held them before, then to the least
loaded processes, never to the process of the task's active owner or a second time to
one process.

No warm-up tasks, as in Kafka 4.4: its coordinator has the hook for them (a refinement
of the target, with `streams.num.warmup.replicas` and `streams.acceptable.recovery.lag`),
but the refinement hands the assignor's target back unchanged, so a stateful task moves
at once to its new owner, which restores its state there.

Paused tasks (KIP-1249: a partition of one of their sources is paused) are given to no
member as active tasks; their standby tasks stay with the members that held them, on
distinct processes, and none is placed anew.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .model import EMPTY_TASKS, NO_TASKS, Task, Tasks, TaskTuple

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping


@dataclass(frozen=True, slots=True)
class MemberSpec:
    member_id: str
    process_id: str
    previous: TaskTuple  # the member's previous target


def all_tasks(task_counts: Mapping[str, int]) -> list[Task]:
    return [(sub, p) for sub in sorted(task_counts) for p in range(task_counts[sub])]


def _per_member(tasks: int, members: int) -> int:
    return 0 if members <= 0 else -(-tasks // members)


@dataclass(slots=True)
class _Quota:
    """A fair share that shrinks to what is left each time a member fills it."""

    tasks: int
    members: int
    per_member: int = 0

    def __post_init__(self) -> None:
        self.per_member = _per_member(self.tasks, self.members)

    def count(self, member_tasks: int) -> None:
        if member_tasks == self.per_member:
            self.members -= 1
            self.tasks -= member_tasks
            self.per_member = _per_member(self.tasks, self.members)


@dataclass(slots=True)
class _Process:
    process_id: str
    members: dict[str, int] = field(default_factory=dict)  # member -> tasks so far
    tasks: set[Task] = field(default_factory=set)
    active: int = 0
    stateful_active: int = 0

    def load(self) -> tuple[float, float, str]:
        """Least loaded first; then the fewest stateless active tasks; then the id."""
        n = len(self.members)
        return (len(self.tasks) / n, (self.active - self.stateful_active) / n, self.process_id)

    def add(self, member_id: str, task: Task, active: bool, stateful: bool) -> int:
        self.tasks.add(task)
        if active:
            self.active += 1
            self.stateful_active += stateful
        self.members[member_id] += 1
        return self.members[member_id]

    def least_loaded_member(self) -> str:
        return min(self.members, key=lambda m: (self.members[m], m))


class _Assignment:
    def __init__(self, members: list[MemberSpec], task_counts: Mapping[str, int],
                 stateful: Collection[str], standby_replicas: int,
                 paused: Collection[Task]) -> None:
        self.replicas = standby_replicas
        self.processes: dict[str, _Process] = {}
        self.process_of: dict[str, _Process] = {}
        self.prev_active: dict[Task, str] = {}
        self.prev_standby: dict[Task, list[str]] = {}
        for m in sorted(members, key=lambda m: m.member_id):
            process = self.processes.setdefault(m.process_id, _Process(m.process_id))
            process.members[m.member_id] = 0
            self.process_of[m.member_id] = process
            for sub, partitions in m.previous.active.items():
                for p in partitions:
                    self.prev_active[(sub, p)] = m.member_id
            for kind in (m.previous.standby, m.previous.warmup):
                for sub, partitions in kind.items():
                    for p in partitions:
                        self.prev_standby.setdefault((sub, p), []).append(m.member_id)
        every = all_tasks(task_counts)
        tasks = [t for t in every if t not in paused]
        self.paused_standby = [t for t in every
                               if t in paused and t[0] in stateful and t in self.prev_standby]
        self.stateful_tasks = [t for t in tasks if t[0] in stateful]
        self.stateless_tasks = [t for t in tasks if t[0] not in stateful]
        n = len(members)
        self.stateful_quota = _Quota(len(self.stateful_tasks), n)
        self.active_quota = _Quota(len(tasks), n)
        kept = sum(len(self.prev_standby[t]) for t in self.paused_standby)
        self.total_quota = _Quota(
            len(tasks) + len(self.stateful_tasks) * standby_replicas + kept, n)
        self.active: dict[str, list[Task]] = {m.member_id: [] for m in members}
        self.standby: dict[str, list[Task]] = {m.member_id: [] for m in members}

    def _give_active(self, member_id: str, task: Task, stateful: bool) -> None:
        count = self.process_of[member_id].add(member_id, task, True, stateful)
        self.active[member_id].append(task)
        if stateful:
            self.stateful_quota.count(count)
        self.active_quota.count(count)
        self.total_quota.count(count)

    def _under_quota(self, member_id: str, stateful: bool) -> bool:
        quota = self.stateful_quota if stateful else self.active_quota
        return self.process_of[member_id].members[member_id] < quota.per_member

    def assign_active(self, tasks: list[Task], stateful: bool) -> None:
        left = []
        for task in sorted(tasks, key=lambda t: (t[1], t[0])):
            prev = self.prev_active.get(task)
            if prev is not None and prev in self.process_of and self._under_quota(prev, stateful):
                self._give_active(prev, task, stateful)
            else:
                left.append(task)
        rest = []
        for task in left:
            prev = self._least_loaded_holder(self.prev_standby.get(task, []), None)
            if prev is not None and self._under_quota(prev, stateful):
                self._give_active(prev, task, stateful)
            else:
                rest.append(task)
        for task in sorted(rest):
            process = min(self.processes.values(), key=_Process.load)
            member_id = process.least_loaded_member()
            count = process.add(member_id, task, True, stateful)
            self.active[member_id].append(task)
            self.active_quota.count(count)
            self.total_quota.count(count)

    def _least_loaded_holder(self, holders: list[str], task: Task | None) -> str | None:
        """Kafka's findPrevMemberWithLeastLoad: the first holder, replaced by one whose
        process and member are both less loaded (skipping processes that have the task)."""
        best: str | None = None
        best_loads = (float("inf"), float("inf"))
        for member_id in holders:
            process = self.process_of.get(member_id)
            if process is None or (task is not None and task in process.tasks):
                continue
            loads = (len(process.tasks) / len(process.members), float(process.members[member_id]))
            if best is None or (loads[0] < best_loads[0] and loads[1] < best_loads[1]):
                best, best_loads = member_id, loads
        return best

    def keep_paused_standby(self) -> None:
        """A paused task's standbys stay where they were (one per process, as ever)."""
        for task in self.paused_standby:
            for member_id in self.prev_standby[task]:
                process = self.process_of.get(member_id)
                if process is not None and task not in process.tasks:
                    self._give_standby(process, member_id, task)

    def assign_standby(self) -> None:
        remaining: list[tuple[Task, int]] = []
        for task in sorted(self.stateful_tasks, key=lambda t: (t[1], t[0]), reverse=True):
            left = self.replicas
            for member_id in self.prev_standby.get(task, []):
                process = self.process_of.get(member_id)
                if left and process is not None and task not in process.tasks and (
                        process.members[member_id] < self.total_quota.per_member):
                    self._give_standby(process, member_id, task)
                    left -= 1
            if left:
                remaining.append((task, left))
        for task, left in sorted(remaining, reverse=True):
            for _ in range(left):
                free = [p for p in self.processes.values() if task not in p.tasks]
                if not free:
                    break
                process = min(free, key=lambda p: (len(p.tasks) / len(p.members), p.process_id))
                self._give_standby(process, process.least_loaded_member(), task)

    def _give_standby(self, process: _Process, member_id: str, task: Task) -> None:
        self.total_quota.count(process.add(member_id, task, False, True))
        self.standby[member_id].append(task)


def _as_tasks(tasks: list[Task]) -> Tasks:
    out: dict[str, set[int]] = {}
    for sub, p in tasks:
        out.setdefault(sub, set()).add(p)
    return {sub: frozenset(ps) for sub, ps in out.items()} if out else NO_TASKS


def assign(members: list[MemberSpec], task_counts: Mapping[str, int],
           standby_replicas: int = 0, stateful: Collection[str] = (),
           paused: Collection[Task] = frozenset()) -> dict[str, TaskTuple]:
    """Each member's target for the tasks of `task_counts` (subtopology -> task count);
    `stateful`: the subtopologies that keep state (a changelog), placed first; `paused`:
    tasks no member runs, whose standbys stay put."""
    if not members:
        return {}
    work = _Assignment(members, task_counts, frozenset(stateful), standby_replicas,
                       frozenset(paused))
    work.assign_active(work.stateful_tasks, True)
    work.assign_active(work.stateless_tasks, False)
    work.keep_paused_standby()
    if standby_replicas > 0:
        work.assign_standby()
    return {m.member_id: TaskTuple(_as_tasks(work.active[m.member_id]),
                                   _as_tasks(work.standby[m.member_id]), NO_TASKS)
            if work.active[m.member_id] or work.standby[m.member_id] else EMPTY_TASKS
            for m in members}
