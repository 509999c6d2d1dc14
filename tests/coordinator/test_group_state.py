"""The classic group state table and the deadline structure."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kcsim.coordinator.groups.classic import ClassicGroup
from kcsim.coordinator.groups.state import (
    ALLOWED_PREVIOUS,
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    GroupState,
    IllegalTransition,
    can_rebalance,
)
from kcsim.coordinator.shared.deadlines import Deadlines
from kcsim.coordinator.shared.journal import Journal


def test_wire_names_are_kafkas():
    assert [s.value for s in GroupState] == [
        "Empty",
        "PreparingRebalance",
        "CompletingRebalance",
        "Stable",
        "Dead",
    ]


def test_transition_table_matches_kafka():
    assert ALLOWED_PREVIOUS[EMPTY] == {PREPARING_REBALANCE}
    assert ALLOWED_PREVIOUS[PREPARING_REBALANCE] == {STABLE, COMPLETING_REBALANCE, EMPTY}
    assert ALLOWED_PREVIOUS[COMPLETING_REBALANCE] == {PREPARING_REBALANCE}
    assert ALLOWED_PREVIOUS[STABLE] == {COMPLETING_REBALANCE}
    assert ALLOWED_PREVIOUS[DEAD] == set(GroupState)


@pytest.mark.parametrize("current", list(GroupState))
@pytest.mark.parametrize("target", list(GroupState))
def test_every_transition_is_checked(current, target):
    group = ClassicGroup("g", 0, state=current)
    if current in ALLOWED_PREVIOUS[target]:
        group.transition_to(target, 5)
        assert group.state is target
        assert group.previous_state is current
        assert group.state_timestamp == 5
    else:
        with pytest.raises(IllegalTransition):
            group.transition_to(target, 5)
        assert group.state is current


def test_can_rebalance_from_empty_stable_and_completing_only():
    assert {s for s in GroupState if can_rebalance(s)} == {EMPTY, STABLE, COMPLETING_REBALANCE}


def test_deadlines_pop_in_order_and_reschedule_replaces():
    d = Deadlines()
    d.schedule("a", 30)
    d.schedule("b", 10, payload="pb")
    d.schedule("c", 20)
    d.schedule("a", 5, payload="pa")  # replaces the earlier deadline of "a"
    assert len(d) == 3
    assert d.earliest() == 5
    assert d.pop_due(4) is None
    assert d.pop_due(100) == (5, "a", "pa")
    assert d.pop_due(100) == (10, "b", "pb")
    d.cancel("c")
    d.cancel("missing")
    assert d.pop_due(100) is None
    assert d.earliest() is None


def test_deadlines_tie_break_by_scheduling_order():
    d = Deadlines()
    for key in ("x", "y", "z"):
        d.schedule(key, 7)
    assert [d.pop_due(7)[1] for _ in range(3)] == ["x", "y", "z"]


@given(st.lists(st.tuples(st.sampled_from(["schedule", "cancel", "pop"]),
                          st.sampled_from("abcde"), st.integers(0, 20))))
def test_the_earliest_deadline_is_always_the_smallest_one_pending(ops):
    d = Deadlines()
    pending: dict[str, int] = {}
    for op, key, at in ops:
        if op == "schedule":
            d.schedule(key, at)
            pending[key] = at
        elif op == "cancel":
            d.cancel(key)
            pending.pop(key, None)
        else:
            due = d.pop_due(at)
            if due is not None:
                assert due[0] == min(pending.values()) <= at
                del pending[due[1]]
            else:
                assert not pending or min(pending.values()) > at
        assert d.earliest() == (min(pending.values()) if pending else None)


@given(st.lists(st.tuples(st.sampled_from("abcde"), st.integers(0, 20))),
       st.lists(st.tuples(st.booleans(), st.sampled_from("abcdef"), st.integers(0, 20))))
def test_a_rolled_back_call_leaves_the_deadlines_as_they_were(before, during):
    journal = Journal()
    d, twin = Deadlines(journal), Deadlines()
    for key, at in before:
        d.schedule(key, at)
        twin.schedule(key, at)
    journal.begin()
    for schedule, key, at in during:
        if schedule:
            d.schedule(key, at)
        else:
            d.cancel(key)
    journal.rollback()
    assert d.earliest() == twin.earliest()
    drained = [d.pop_due(100) for _ in range(len(twin))]
    assert drained == [twin.pop_due(100) for _ in range(len(twin))]
    assert len(d) == 0
