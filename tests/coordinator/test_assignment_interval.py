"""Kafka 4.3+'s assignment interval: a consumer group's target assignment is computed at
most once per `group.consumer.assignment.interval.ms` (or the group's own
`consumer.assignment.interval.ms`). A member that joins sooner joins at the last
target's epoch with no partitions and the group shows `Assigning`, until a heartbeat
comes once the interval has passed."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from .consumer_harness import Client, Harness, config, settle
from .test_group_configs import configure

INTERVAL = 1000


class Case(NamedTuple):
    broker_ms: int  # group.consumer.assignment.interval.ms
    group_ms: str | None  # the group's consumer.assignment.interval.ms, if set
    wait_ms: int  # from the first member's assignment to the second member's join
    restart: bool  # the coordinator restarts from its log before the second member joins
    assigns: bool  # the second member's join computes a new target


CASES = {
    "interval 0": Case(0, None, 0, False, True),
    "within the interval": Case(INTERVAL, None, INTERVAL - 1, False, False),
    "the interval has passed": Case(INTERVAL, None, INTERVAL, False, True),
    "the group's own longer interval": Case(INTERVAL, "5000", INTERVAL, False, False),
    "the group's own interval 0": Case(INTERVAL, "0", 0, False, True),
    "a restart within the interval": Case(INTERVAL, None, INTERVAL // 2, True, False),
    "a restart once it passed": Case(INTERVAL, None, INTERVAL, True, True),
}


def two_members(case: Case) -> tuple[Harness, Client, Client]:
    h = Harness(config(consumer_group_assignment_interval_ms=case.broker_ms))
    if case.group_ms is not None:
        configure(h, "g", **{"consumer.assignment.interval.ms": case.group_ms})
    a = Client(h, "g")
    first = a.join()
    # A new group's first member is assigned at once, whatever the interval.
    assert (first.member_epoch, len(a.partitions())) == (1, 6)
    h.advance(case.wait_ms)
    if case.restart:
        h.restart()
    b = Client(h, "g")
    b.join()
    return h, a, b


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_when_a_second_member_gets_a_new_target(case: Case) -> None:
    h, _, b = two_members(case)
    [described] = h.describe("g").groups
    assert described.group_epoch == 2
    if case.assigns:
        assert (b.epoch, described.assignment_epoch, described.group_state) == (
            2, 2, "Reconciling")
    else:
        assert (b.epoch, described.assignment_epoch, described.group_state) == (
            1, 1, "Assigning")
        assert b.last.assignment is not None and b.last.assignment.topic_partitions == []
        assert h.list_groups(states=["assigning"]) == [("g", "consumer", "Assigning", "consumer")]
        assert h.list_groups(states=["stable", "reconciling"]) == []


def test_the_first_heartbeat_once_the_interval_passed_assigns_and_no_timer_does() -> None:
    h, a, b = two_members(CASES["within the interval"])
    h.advance(INTERVAL)  # time alone assigns nothing: Kafka arms no timer for it
    assert h.describe("g").groups[0].group_state == "Assigning"
    a.beat()
    [described] = h.describe("g").groups
    assert (described.assignment_epoch, described.group_state) == (2, "Reconciling")
    settle([a, b])
    assert len(a.partitions()) == len(b.partitions()) == 3


def test_a_heartbeat_within_the_interval_leaves_the_group_assigning() -> None:
    h, a, b = two_members(CASES["within the interval"])  # 1 ms before it passes
    assert a.beat().member_epoch == 1
    assert len(a.partitions()) == 6
    assert b.beat().member_epoch == 1
    assert h.describe("g").groups[0].group_state == "Assigning"
    h.advance(1)
    assert b.beat().member_epoch == 2
    assert h.describe("g").groups[0].group_state == "Reconciling"


def test_each_new_target_starts_the_next_interval() -> None:
    h, a, b = two_members(CASES["the interval has passed"])
    settle([a, b])
    c = Client(h, "g")
    assert c.join().member_epoch == 2  # the last target was computed when b joined
    h.advance(INTERVAL)
    assert c.beat().member_epoch == 3


def test_a_group_that_empties_assigns_its_next_first_member_at_once() -> None:
    h = Harness(config(consumer_group_assignment_interval_ms=INTERVAL))
    a = Client(h, "g")
    a.join()
    a.leave()
    assert h.describe("g").groups[0].group_state == "Empty"
    b = Client(h, "g")
    assert b.join().member_epoch == 3
    assert len(b.partitions()) == 6
    assert h.describe("g").groups[0].group_state == "Stable"


def test_a_pause_reassigns_at_once_within_the_interval() -> None:
    h = Harness(config(consumer_group_assignment_interval_ms=INTERVAL))
    a = Client(h, "g")
    a.join()
    assert h.pause("g", {"t": [0]}).error_code == 0
    assert h.describe("g").groups[0].group_state == "Reconciling"
    a.beat()
    assert ("t", 0) not in a.partitions()


def test_a_clock_gone_back_over_a_restart_does_not_hold_the_group_back() -> None:
    h = Harness(config(consumer_group_assignment_interval_ms=INTERVAL))
    h.advance(3_600_000)  # a test advanced the broker's clock, then the process restarted
    Client(h, "g").join()
    h.restart()
    h.now -= 3_600_000
    assert Client(h, "g").join().member_epoch == 2
