"""KIP-1249 in streams groups: pausing a source partition stops the tasks that read it,
standbys stay put, resuming gives the tasks back, and the paused set survives a restart."""

from __future__ import annotations

from typing import Any

from kcsim.protocol.errors import ErrorCode as E
from tests.coordinator.state_dump import dump
from tests.coordinator.streams_harness import (
    CHANGELOG,
    REPARTITION,
    StreamsHarness,
    streams_config,
)
from tests.coordinator.test_pause_consumer import errors, paused_listing
from tests.coordinator.test_streams_group import held, settle

TWO_PROCESSES = {"m1": "p1", "m2": "p2"}


def running(h: StreamsHarness, members: dict[str, str] = TWO_PROCESSES) -> dict[str, int]:
    """Members joined (on the given processes), internal topics created, tasks settled."""
    epochs = {}
    for member, process in members.items():
        epochs[member] = h.join(member, process_id=process).member_epoch
    settle(h, epochs)
    return epochs


def owners(h: StreamsHarness) -> dict[tuple[str, int], str]:
    group = h.gc.streams_group("app")
    assert group is not None
    return dict(group.owners)


def standbys(h: StreamsHarness) -> dict[str, set[tuple[str, int]]]:
    group = h.gc.streams_group("app")
    assert group is not None
    return {m: held(member.assigned.standby) for m, member in group.members.items()}


def test_pausing_a_source_partition_takes_its_task_from_its_owner_and_gives_it_to_no_one() -> None:
    h = StreamsHarness()
    epochs = running(h)
    owner = owners(h)[("0", 0)]
    epoch_before = h.gc.streams_group("app").group_epoch

    assert errors(h.pause("app", {"words": [0]})) == {("words", 0): E.NONE}
    group = h.gc.streams_group("app")
    assert group.group_epoch == epoch_before + 1
    assert all(("0", 0) not in held(t.active) for t in group.target.values())

    r = h.beat(owner, epochs[owner], held(group.members[owner].assigned.active))
    assert r.error_code == 0 and r.active_tasks is not None
    assert ("0", 0) not in {(t.subtopology_id, p) for t in r.active_tasks for p in t.partitions}
    owned = settle(h, epochs)
    everything = {(s, p) for s in ("0", "1") for p in range(4)}
    assert set().union(*owned.values()) == everything - {("0", 0)}
    assert ("0", 0) not in owners(h)
    assert h.gc.group_state("app") == "Stable"


def test_a_paused_repartition_partition_stops_the_task_downstream_of_it() -> None:
    h = StreamsHarness()
    epochs = running(h)
    assert errors(h.pause("app", {REPARTITION: [2]})) == {(REPARTITION, 2): E.NONE}
    settle(h, epochs)
    assert ("1", 2) not in owners(h) and ("0", 2) in owners(h)


def test_resume_gives_the_task_back_at_the_next_assignment() -> None:
    h = StreamsHarness()
    epochs = running(h)
    h.pause("app", {"words": [1, 3]})
    settle(h, epochs)
    assert not {("0", 1), ("0", 3)} & set(owners(h))

    assert errors(h.resume("app", {"words": [1]})) == {("words", 1): E.NONE}
    settle(h, epochs)
    assert ("0", 1) in owners(h) and ("0", 3) not in owners(h)
    assert paused_listing(h, "app") == {("words", 3): -1}


def test_standby_tasks_of_a_paused_task_stay_where_they_are() -> None:
    h = StreamsHarness(cfg=streams_config(streams_group_num_standby_replicas=1))
    epochs = running(h)
    before = standbys(h)
    holder = next(m for m, tasks in before.items() if ("1", 0) in tasks)

    h.pause("app", {REPARTITION: [0]})
    settle(h, epochs)
    assert ("1", 0) not in owners(h)
    assert ("1", 0) in standbys(h)[holder]
    assert sum(("1", 0) in tasks for tasks in standbys(h).values()) == 1

    h.resume("app", {REPARTITION: [0]})
    settle(h, epochs)
    assert ("1", 0) in owners(h)


def test_an_admin_resets_paused_partitions_of_a_running_group_and_no_others() -> None:
    h = StreamsHarness()
    epochs = running(h)
    for m in epochs:
        h.commit("app", {("words", p): 10 for p in range(4)}, epoch=epochs[m], member_id=m)
    assert h.commit("app", {("words", 0): 2}) == {("words", 0): E.UNKNOWN_MEMBER_ID}

    h.pause("app", {"words": [0]})
    settle(h, epochs)
    assert h.commit("app", {("words", 0): 2, ("words", 1): 3}) == {
        ("words", 0): E.NONE, ("words", 1): E.UNKNOWN_MEMBER_ID}
    assert paused_listing(h, "app") == {("words", 0): 2}
    assert h.fetch("app")[1][("words", 1)] == 10


def test_the_paused_set_and_the_targets_survive_a_restart() -> None:
    h = StreamsHarness(cfg=streams_config(streams_group_num_standby_replicas=1))
    epochs = running(h)
    h.pause("app", {"words": [0], REPARTITION: [3]})
    settle(h, epochs)
    live, replayed = dump(h.gc), dump(h.replayed())
    for state in (live, replayed):
        state["streams"]["app"].pop("shutdown_requested_by")  # soft, as in Kafka
    assert replayed["streams"] == live["streams"]
    assert replayed["paused"] == live["paused"]

    h.restart()
    settle(h, epochs)
    assert not {("0", 0), ("1", 3)} & set(owners(h))
    h.resume("app", {"words": [0], REPARTITION: [3]})
    settle(h, epochs)
    assert len(owners(h)) == 8


def test_a_pause_before_the_group_runs_holds_its_tasks_from_the_first_assignment() -> None:
    h = StreamsHarness()
    h.join("m1")
    assert errors(h.pause("app", {"words": [2]})) == {("words", 2): E.NONE}
    r = h.beat("m1", 1, set())
    settle(h, {"m1": r.member_epoch})
    assert set(owners(h)) == {(s, p) for s in ("0", "1") for p in range(4)} - {("0", 2)}


def partition_errors(response: Any) -> dict[tuple[str, int], tuple[int, str | None]]:
    return {(t.topic_name, p.partition_index): (p.error_code, p.error_message)
            for t in response.responses for p in t.partitions}


def test_bad_pauses_get_error_codes_and_change_nothing() -> None:
    h = StreamsHarness(topics={"words": 4, "other": 2})
    epochs = running(h)
    epoch_before = h.gc.streams_group("app").group_epoch
    answer = partition_errors(h.pause("app", {"other": [0], CHANGELOG: [0], "nope": [0],
                                              "words": [4, -1]}))
    not_read = "The topic is not a source topic of the streams group's topology."
    assert answer == {
        ("other", 0): (E.INVALID_REQUEST, not_read),
        (CHANGELOG, 0): (E.INVALID_REQUEST, not_read),
        ("nope", 0): (E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_OR_PARTITION.message),
        ("words", 4): (E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_OR_PARTITION.message),
        ("words", -1): (E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_OR_PARTITION.message),
    }
    assert paused_listing(h, "app") == {}
    assert h.gc.streams_group("app").group_epoch == epoch_before
    # Resuming what is not paused succeeds and changes nothing.
    assert errors(h.resume("app", {"other": [0]})) == {("other", 0): E.NONE}
    assert h.gc.streams_group("app").group_epoch == epoch_before
    assert h.pause("gone", {"words": [0]}).error_code == E.GROUP_ID_NOT_FOUND
    assert len(owners(h)) == 8
    settle(h, epochs)


def test_the_assignor_places_no_paused_task_and_places_no_new_standby_for_one() -> None:
    from kcsim.coordinator.streams.assignor import MemberSpec, assign
    from kcsim.coordinator.streams.model import NO_TASKS, TaskTuple

    held_standby = TaskTuple(NO_TASKS, {"s": frozenset({0})}, NO_TASKS)
    members = [MemberSpec("a", "p1", held_standby), MemberSpec("b", "p2", TaskTuple(
        {"s": frozenset({0, 1})}, NO_TASKS, NO_TASKS)), MemberSpec("c", "p3", held_standby)]
    out = assign(members, {"s": 3}, standby_replicas=1, stateful={"s"},
                 paused={("s", 0), ("s", 2)})
    active = {(s, p) for t in out.values() for s, ps in t.active.items() for p in ps}
    assert active == {("s", 1)}
    # Both standbys of the paused task stay: they are on two processes.
    assert {m for m, t in out.items() if ("s", 0) in held(t.standby)} == {"a", "c"}
    assert all(("s", 2) not in held(t.standby) for t in out.values())
