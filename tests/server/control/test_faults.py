"""Fault rules at the dispatch point: what they match, when they fire, what they do.

Raw protocol requests (tests/server/rawgroup.py) against a broker in the test's trio
run, on trio's MockClock (pytest-trio runs a test on the clock among its arguments):
what each rule does is seen on the wire, and counted in the rule's status and the
request log.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import trio

from kcsim.testing import FaultRule

from ..rawgroup import RawMember, connect, create_topic, fetch_offsets, find_coordinator

NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE = 16, 14, 15
UNKNOWN_TOPIC_OR_PARTITION = 3

@pytest.fixture
async def topic(kcsim_trio: Any, unique_name: Any) -> str:
    name = unique_name("t")
    await create_topic(await connect(kcsim_trio.port), name, 2)
    return str(name)


async def committer(kcsim_trio: Any, group: str, topic: str, client_id: str = "kcsim-tests") -> RawMember:
    """Commits as a group without members would (generation -1), as admin tools do."""
    return RawMember(await connect(kcsim_trio.port, client_id), group, topic)


async def test_an_error_n_times_then_served(autojump_clock: Any, kcsim_trio: Any, topic: str) -> None:
    member = await committer(kcsim_trio, "g1", topic)
    rule = kcsim_trio.faults.add(api="OffsetCommit", error="NOT_COORDINATOR", times=2)
    assert await member.commit({0: 1, 1: 1}) == [NOT_COORDINATOR, NOT_COORDINATOR]
    assert await member.commit({0: 2, 1: 2}) == [NOT_COORDINATOR, NOT_COORDINATOR]
    assert await member.commit({0: 3, 1: 3}) == [0, 0]
    assert kcsim_trio.committed("g1") == {(topic, 0): 3, (topic, 1): 3}
    status = kcsim_trio.faults.get(rule)
    assert (status.matched, status.fired, status.active) == (2, 2, False)
    logged = kcsim_trio.requests("OffsetCommit")
    assert [(r.fault, r.errors) for r in logged] == [
        (rule, ["NOT_COORDINATOR"]), (rule, ["NOT_COORDINATOR"]), (None, [])]


async def test_after_lets_the_first_through(autojump_clock: Any, kcsim_trio: Any, topic: str) -> None:
    member = await committer(kcsim_trio, "g1", topic)
    kcsim_trio.faults.add(api=8, error=NOT_COORDINATOR, after=1, times=None)
    assert await member.commit({0: 1}) == [0]
    assert await member.commit({0: 2}) == [NOT_COORDINATOR]
    assert await member.commit({0: 3}) == [NOT_COORDINATOR]
    assert kcsim_trio.committed("g1") == {(topic, 0): 1}


async def test_probability_is_repeatable_with_a_seed(autojump_clock: Any, kcsim_trio: Any, topic: str) -> None:
    member = await committer(kcsim_trio, "g1", topic)

    async def pattern() -> list[bool]:
        rule = kcsim_trio.faults.add(api="OffsetCommit", error="NOT_COORDINATOR",
                                     probability=0.5, seed=7, times=None)
        seen = [await member.commit({0: n}) == [NOT_COORDINATOR] for n in range(40)]
        status = kcsim_trio.faults.remove(rule)
        assert (status.matched, status.fired) == (40, sum(seen))
        return seen

    first = await pattern()
    assert 5 < sum(first) < 35
    assert await pattern() == first


async def test_rules_match_only_their_group_topic_partition_client_and_version(
        kcsim_trio: Any, topic: str) -> None:
    faults = kcsim_trio.faults
    faults.add(api="OffsetCommit", group="other", error="NOT_COORDINATOR", times=None)
    faults.add(api="OffsetCommit", topic="other", error="NOT_COORDINATOR", times=None)
    faults.add(api="OffsetCommit", topic=topic, partition=1, error="NOT_COORDINATOR", times=None)
    faults.add(api="OffsetCommit", client_id="someone-else", error="NOT_COORDINATOR", times=None)
    faults.add(api="OffsetCommit", version=8, error="NOT_COORDINATOR", times=None)  # we send v7
    faults.add(api="OffsetCommit", node_id=2, error="NOT_COORDINATOR", times=None)  # we are node 1
    member = await committer(kcsim_trio, "g1", topic)
    assert await member.commit({0: 5}) == [0]
    assert await member.commit({1: 5}) == [NOT_COORDINATOR]  # the partition rule
    assert [(s.rule.partition, s.fired) for s in faults.list() if s.fired] == [(1, 1)]
    assert [s.active for s in faults.list()] == [True, True, True, True, True, False]


async def test_the_first_rule_installed_fires_whatever_it_names(
        kcsim_trio: Any, topic: str) -> None:
    """Rules naming a group, a client id, both or neither fire in the order installed."""
    faults = kcsim_trio.faults
    by_group = faults.add(api="OffsetCommit", group="g1", error="NOT_COORDINATOR")
    by_both = faults.add(api="OffsetCommit", group="g1", client_id="other", error="NOT_COORDINATOR")
    by_client = faults.add(api="OffsetCommit", client_id="kcsim-tests", error="NOT_COORDINATOR")
    plain = faults.add(api="OffsetCommit", error="NOT_COORDINATOR")
    again = faults.add(api="OffsetCommit", group="g1", error="NOT_COORDINATOR")
    member = await committer(kcsim_trio, "g1", topic)
    for _ in range(5):
        await member.commit({0: 1})
    fired = [r.fault for r in kcsim_trio.requests("OffsetCommit")]
    assert fired == [by_group, by_client, plain, again, None]
    assert faults.get(by_both).matched == 0
    assert [s.id for s in faults.list() if s.active] == [by_both]


async def test_latency_delays_the_answer(autojump_clock: Any, kcsim_trio: Any, topic: str) -> None:
    member = await committer(kcsim_trio, "g1", topic)
    kcsim_trio.faults.add(api="OffsetCommit", latency_ms=250)
    started = trio.current_time()
    assert await member.commit({0: 1}) == [0]
    assert trio.current_time() - started >= 0.25
    started = trio.current_time()
    assert await member.commit({0: 2}) == [0]
    assert trio.current_time() - started < 0.25
    first, _second = kcsim_trio.requests("OffsetCommit")
    assert first.answered_ms - first.received_ms >= 250


async def test_a_held_request_is_served_once_released(autojump_clock: Any, kcsim_trio: Any, topic: str) -> None:
    member = await committer(kcsim_trio, "g1", topic)
    rule = kcsim_trio.faults.add(api="OffsetCommit", hold=True)
    answers: list[list[int]] = []
    async with trio.open_nursery() as nursery:
        async def commit() -> None:
            answers.append(await member.commit({0: 7}))
        nursery.start_soon(commit)
        await kcsim_trio.wait_for_fault(rule, held=1)
        await trio.sleep(60)  # held, however long it takes
        assert answers == [] and kcsim_trio.committed("g1") == {}
        assert kcsim_trio.faults.release(rule) == 1
    assert answers == [[0]]
    assert kcsim_trio.committed("g1") == {(topic, 0): 7}
    assert kcsim_trio.faults.get(rule).held == 0


async def test_removing_a_rule_lets_its_held_requests_go(autojump_clock: Any, kcsim_trio: Any, topic: str) -> None:
    member = await committer(kcsim_trio, "g1", topic)
    rule = kcsim_trio.faults.add(api="OffsetCommit", hold=True, error="NOT_COORDINATOR")
    async with trio.open_nursery() as nursery:
        answers: list[list[int]] = []

        async def commit() -> None:
            answers.append(await member.commit({0: 7}))
        nursery.start_soon(commit)
        await kcsim_trio.wait_for_fault(rule, held=1)
        assert kcsim_trio.faults.remove(rule).held == 0
    assert answers == [[NOT_COORDINATOR]]  # held, then answered with the rule's error


async def test_close_before_answering_drops_the_request(autojump_clock: Any, kcsim_trio: Any, topic: str) -> None:
    member = await committer(kcsim_trio, "g1", topic)
    kcsim_trio.faults.add(api="OffsetCommit", close="before")
    with pytest.raises(ConnectionError):
        await member.commit({0: 1})
    assert kcsim_trio.committed("g1") == {}
    (logged,) = kcsim_trio.requests("OffsetCommit")
    assert not logged.answered


async def test_close_after_answering(autojump_clock: Any, kcsim_trio: Any, topic: str) -> None:
    member = await committer(kcsim_trio, "g1", topic)
    kcsim_trio.faults.add(api="OffsetCommit", close="after")
    assert await member.commit({0: 1}) == [0]
    assert await member.wire.stream.receive_some(10) == b""  # then closed
    assert kcsim_trio.committed("g1") == {(topic, 0): 1}


async def test_an_error_then_a_close(autojump_clock: Any, kcsim_trio: Any, topic: str) -> None:
    member = await committer(kcsim_trio, "g1", topic)
    kcsim_trio.faults.add(api="OffsetCommit", error="NOT_COORDINATOR", close="after")
    assert await member.commit({0: 1}) == [NOT_COORDINATOR]
    assert await member.wire.stream.receive_some(10) == b""


async def test_never_answered(autojump_clock: Any, kcsim_trio: Any, topic: str) -> None:
    member = await committer(kcsim_trio, "g1", topic)
    rule = kcsim_trio.faults.add(api="OffsetCommit", no_answer=True)
    with trio.move_on_after(3600) as waited:
        await member.commit({0: 1})
    assert waited.cancelled_caught
    assert kcsim_trio.faults.get(rule).fired == 1
    assert kcsim_trio.requests("OffsetCommit") == []
    assert kcsim_trio.committed("g1") == {}


async def test_a_coordinator_loading_then_unavailable_then_back(autojump_clock: Any, kcsim_trio: Any, topic: str) -> None:
    wire = await connect(kcsim_trio.port)
    member = RawMember(wire, "g1", topic)
    faults = kcsim_trio.faults
    faults.coordinator("g1", "loading")
    assert await fetch_offsets(wire, "g1", topic, 2) == (COORDINATOR_LOAD_IN_PROGRESS, {})
    assert await member.commit({0: 1}) == [COORDINATOR_LOAD_IN_PROGRESS]
    assert await find_coordinator(wire, "g1") == 0
    assert await fetch_offsets(wire, "g2", topic, 2) == (0, {})  # other groups are served

    faults.coordinator("g1", "unavailable")
    assert await find_coordinator(wire, "g1") == COORDINATOR_NOT_AVAILABLE
    assert await member.commit({0: 1}) == [COORDINATOR_NOT_AVAILABLE]
    assert len(faults.list()) == 1

    assert faults.coordinator("g1", "available") is None
    assert faults.list() == []
    assert await find_coordinator(wire, "g1") == 0
    assert await member.commit({0: 1}) == [0]


async def test_rules_as_plain_data(autojump_clock: Any, kcsim_trio: Any) -> None:
    faults = kcsim_trio.faults
    rule = faults.add({"api": "OffsetFetch", "error": 14, "times": 3})
    second = faults.add(FaultRule(api=["JoinGroup", "SyncGroup"], latency_ms=5))
    listed = msgspec.to_builtins(faults.list())
    assert listed[0] == {"id": rule, "rule": {"api": "OffsetFetch", "times": 3,
                                              "error": "COORDINATOR_LOAD_IN_PROGRESS"},
                         "matched": 0, "fired": 0, "held": 0, "active": True}
    assert listed[1]["rule"] == {"api": ["JoinGroup", "SyncGroup"], "latency_ms": 5}
    again = msgspec.convert(listed[0]["rule"], FaultRule)
    assert faults.get(faults.add(again)).rule == faults.get(rule).rule
    faults.remove(second)
    faults.clear()
    assert faults.list() == []


@pytest.mark.parametrize(("fields", "field"), [
    ({"api": "OffsetComit", "error": "NOT_COORDINATOR"}, "api"),
    ({"api": "ControlledShutdown", "error": "NOT_COORDINATOR"}, "api"),
    ({"api": 7, "error": "NOT_COORDINATOR"}, "api"),
    ({"api": [], "error": "NOT_COORDINATOR"}, "api"),
    ({"error": "NOT_COORDINATOR"}, "api"),
    ({"api": "OffsetCommit", "error": "NOT_A_COORDINATOR"}, "error"),
    ({"api": "OffsetCommit", "error": 9999}, "error"),
    ({"api": "OffsetCommit", "error": "NONE"}, "error"),
    ({"api": "OffsetCommit"}, "error"),
    ({"api": "OffsetCommit", "version": 99, "error": 16}, "version"),
    ({"api": "OffsetCommit", "times": 0, "error": 16}, "times"),
    ({"api": "OffsetCommit", "after": -1, "error": 16}, "after"),
    ({"api": "OffsetCommit", "probability": 1.5, "error": 16}, "probability"),
    ({"api": "OffsetCommit", "latency_ms": -5}, "latency_ms"),
    ({"api": "OffsetCommit", "close": "during"}, "close"),
    ({"api": "OffsetCommit", "hold": "yes"}, "hold"),
    ({"api": "OffsetCommit", "partition": "0", "error": 16}, "partition"),
    ({"api": "OffsetCommit", "error": 16, "no_answer": True}, "no_answer"),
    ({"api": "OffsetCommit", "error": 16, "colour": "red"}, "colour"),
])
async def test_bad_rules_are_refused_naming_the_field(autojump_clock: Any, kcsim_trio: Any, fields: dict[str, Any],
                                                      field: str) -> None:
    with pytest.raises(ValueError, match=rf"^{field}: "):
        kcsim_trio.faults.add(**fields)
    assert kcsim_trio.faults.list() == []


async def test_bad_control_calls_are_refused_naming_the_argument(autojump_clock: Any, kcsim_trio: Any) -> None:
    with pytest.raises(ValueError, match=r"^rule_id: "):
        kcsim_trio.faults.remove(12345)
    with pytest.raises(ValueError, match=r"^state: "):
        kcsim_trio.faults.coordinator("g", "asleep")
    with pytest.raises(ValueError, match=r"^ms: "):
        kcsim_trio.clock.advance(-1)
    with pytest.raises(ValueError, match=r"^api: "):
        kcsim_trio.requests("Fetchh")
    with pytest.raises(ValueError, match=r"^error: "):
        kcsim_trio.requests(error="BAD")
    with pytest.raises(ValueError, match=r"^members: "):
        await kcsim_trio.wait_for_group("g", members=-1)
    with pytest.raises(ValueError, match=r"^timeout: "):
        await kcsim_trio.wait_for_group("g", timeout=0)
    with pytest.raises(ValueError, match=r"^offsets: "):
        await kcsim_trio.wait_for_committed("g", {"t": 1})
