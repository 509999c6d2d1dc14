"""The sticky task assignor: every task once, balanced, sticky, standbys elsewhere."""

from __future__ import annotations

from typing import Any

from kcsim.coordinator.streams.assignor import MemberSpec, all_tasks, assign
from kcsim.coordinator.streams.model import EMPTY_TASKS, NO_TASKS, TaskTuple
from tests.coordinator.streams_harness import StreamsHarness, streams_config, tasks_of

WORD_COUNT_TASKS = {(s, p) for s in ("0", "1") for p in range(4)}


def tasks(assignment: TaskTuple, kind: int = 0) -> set[tuple[str, int]]:
    return {(s, p) for s, ps in assignment[kind].items() for p in ps}


def members(n: int, processes: int | None = None) -> list[MemberSpec]:
    return [MemberSpec(f"m{i:02}", f"p{i % (processes or n)}", EMPTY_TASKS) for i in range(n)]


def test_ten_members_share_two_hundred_tasks_evenly_and_once() -> None:
    counts = {"0": 100, "1": 100}
    result = assign(members(10), counts)
    owned = [tasks(t) for t in result.values()]
    assert sorted(len(o) for o in owned) == [20] * 10
    assert set().union(*owned) == set(all_tasks(counts))
    assert sum(len(o) for o in owned) == 200


def test_a_new_member_takes_only_what_balance_needs_and_the_rest_stay_put() -> None:
    counts = {"0": 6}
    before = assign(members(2), counts)
    specs = [MemberSpec(m, f"p-{m}", t) for m, t in before.items()]
    specs.append(MemberSpec("m99", "p-new", EMPTY_TASKS))
    after = assign(specs, counts)
    assert sorted(len(tasks(t)) for t in after.values()) == [2, 2, 2]
    for member_id, old in before.items():
        assert tasks(after[member_id]) <= tasks(old)  # nothing moved between the old two


def test_the_uneven_rest_goes_to_as_many_members_as_the_division_leaves() -> None:
    counts = {"0": 4}
    first = assign(members(2), counts)  # 2 and 2
    specs = [MemberSpec(m, m, t) for m, t in first.items()] + [MemberSpec("m3", "m3", EMPTY_TASKS)]
    assert sorted(len(tasks(t)) for t in assign(specs, counts).values()) == [1, 1, 2]


def test_tasks_that_no_longer_exist_are_dropped_from_a_previous_target() -> None:
    stale = TaskTuple({"0": frozenset({0, 7}), "gone": frozenset({1})}, NO_TASKS, NO_TASKS)
    result = assign([MemberSpec("m", "p", stale)], {"0": 2})
    assert tasks(result["m"]) == {("0", 0), ("0", 1)}


def test_a_stateless_task_has_no_standby() -> None:
    result = assign(members(2), {"0": 2, "1": 2}, standby_replicas=1, stateful={"1"})
    assert {t for r in result.values() for t in tasks(r, 1)} == {("1", 0), ("1", 1)}


def test_a_joining_member_splits_each_subtopology_as_kafka_does() -> None:
    """Kafka 4.4's answer to the word count of tests/oracle/test_streams_groups.py: the
    first member keeps partition 0 of both subtopologies, the second takes partition 1."""
    counts, stateful = {"0": 2, "1": 2}, {"1"}
    (first,) = assign([MemberSpec("a", "pa", EMPTY_TASKS)], counts, stateful=stateful).values()
    result = assign([MemberSpec("a", "pa", first), MemberSpec("b", "pb", EMPTY_TASKS)],
                    counts, stateful=stateful)
    assert tasks(result["a"]) == {("0", 0), ("1", 0)}
    assert tasks(result["b"]) == {("0", 1), ("1", 1)}


def test_standby_replicas_go_to_another_process_than_the_active_task() -> None:
    specs = members(4, processes=2)
    process = {m.member_id: m.process_id for m in specs}
    result = assign(specs, {"0": 4}, standby_replicas=1, stateful={"0"})
    active_process = {task: process[m] for m, t in result.items() for task in tasks(t)}
    standbys = [(task, process[m]) for m, t in result.items() for task in tasks(t, 1)]
    assert sorted(task for task, _ in standbys) == sorted(active_process)
    assert all(active_process[task] != p for task, p in standbys)


def test_no_standby_without_another_process() -> None:
    result = assign(members(2, processes=1), {"0": 2}, standby_replicas=1, stateful={"0"})
    assert all(not t.standby for t in result.values())


def test_a_stateful_task_moves_at_once_with_no_warm_up_task_as_in_kafka_4_4() -> None:
    """Kafka 4.4's coordinator refines the target with warm-up tasks in name only: a
    newcomer is given stateful tasks as active ones straight away, however many warm-up
    replicas the group allows, and no heartbeat or describe shows a warm-up task."""
    h = StreamsHarness(cfg=streams_config(streams_group_num_standby_replicas=1))
    epochs: dict[str, int] = {}
    owned: dict[str, set[tuple[str, int]]] = {}
    warmups: list[Any] = []

    def beat_all() -> None:
        for m in list(epochs):
            r = h.beat(m, epochs[m], owned[m])
            assert r.error_code == 0, r
            epochs[m] = r.member_epoch
            warmups.extend(r.warmup_tasks or ())
            if r.active_tasks is not None:
                owned[m] = tasks_of(r.active_tasks)

    for m in ("a", "b"):
        joined = h.join(m)
        epochs[m], owned[m] = joined.member_epoch, tasks_of(joined.active_tasks)
    for _ in range(4):
        beat_all()
    assert {t for ts in owned.values() for t in ts} == WORD_COUNT_TASKS
    joined = h.join("c")
    epochs["c"], owned["c"] = joined.member_epoch, tasks_of(joined.active_tasks)
    group = h.gc.streams_group("app")
    assert group is not None
    target = group.target["c"]
    assert target.active.get("1") and not target.warmup  # a stateful task, active at once
    for _ in range(4):
        beat_all()
    assert owned["c"] and not warmups
    described = h.describe()
    assert described.group_state == "Stable"
    assert all(not m.target_assignment.warmup_tasks and not m.assignment.warmup_tasks
               for m in described.members)
    assert any(m.assignment.standby_tasks for m in described.members)
