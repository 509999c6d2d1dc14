"""Simulated time: the broker's clock advanced, frozen and resumed, and what follows it."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from kcsim.server.shell.clock import Clock

from ..rawgroup import RawMember, connect, create_topic, fetch

UNKNOWN_MEMBER_ID = 25


async def test_advance_freeze_resume(mock_clock: Any) -> None:
    clock = Clock()
    changes: list[int] = []
    clock.start(lambda: changes.append(clock.now_ms()))
    start = clock.now_ms()
    mock_clock.jump(1.0)
    assert clock.now_ms() - start == 1000  # trio's time moves it
    clock.advance(5000)
    assert clock.now_ms() - start == 6000
    frozen = clock.freeze()
    assert frozen is None and clock.frozen
    mock_clock.jump(10.0)
    assert clock.now_ms() - start == 6000  # frozen: trio's time no longer moves it
    assert clock.to_trio(start + 7000) == float("inf")
    assert clock.to_trio(start + 6000) == float("-inf")  # due now
    clock.advance(500)
    assert clock.now_ms() - start == 6500
    clock.resume()
    assert clock.now_ms() - start == 6500  # no jump for the time it stood still
    mock_clock.jump(1.0)
    assert clock.now_ms() - start == 7500
    assert clock.to_trio(start + 8500) == pytest.approx(trio.current_time() + 1.0)
    assert [c - start for c in changes] == [6000, 6000, 6500, 6500]
    with pytest.raises(ValueError, match=r"^ms: "):
        clock.advance(1.5)  # type: ignore[arg-type]


async def test_a_long_poll_ends_when_the_clock_passes_its_deadline(mock_clock: Any,
                                                                  kcsim_trio: Any) -> None:
    """On a MockClock that never moves by itself, only advancing kcsim's clock ends the poll."""
    wire = await connect(kcsim_trio.port)
    await create_topic(wire, "t", 1)
    answers: list[Any] = []
    async with trio.open_nursery() as nursery:
        async def poll() -> None:
            answers.append(await fetch(wire, "t", 0, 0, max_wait_ms=60_000))
        nursery.start_soon(poll)
        await trio.testing.wait_all_tasks_blocked()
        kcsim_trio.clock.advance(59_000)
        await trio.testing.wait_all_tasks_blocked()
        assert answers == []
        kcsim_trio.clock.advance(1_000)
    assert answers[0].responses[0].partitions[0].records in (b"", None)
    assert trio.current_time() == 0.0  # no trio time passed: kcsim's clock did it


@pytest.mark.kcsim(initial_rebalance_delay_ms=3000)
async def test_the_initial_rebalance_delay_and_sessions_follow_the_clock(
        mock_clock: Any, kcsim_trio: Any) -> None:
    wire = await connect(kcsim_trio.port)
    await create_topic(wire, "t", 2)
    member = RawMember(wire, "g", "t", session_ms=10_000)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(member.join)
        await kcsim_trio.wait_for_group("g", "PreparingRebalance", members=1)
        await trio.testing.wait_all_tasks_blocked()
        assert member.generation == -1  # the delay has not passed
        kcsim_trio.clock.advance(3000)
    assert member.generation == 1
    assert await member.sync(2) == (0, [0, 1])

    kcsim_trio.clock.freeze()
    mock_clock.jump(60.0)
    await trio.testing.wait_all_tasks_blocked()
    assert len(kcsim_trio.group("g").members) == 1  # frozen: its session never ends
    kcsim_trio.clock.advance(9_999)
    assert len(kcsim_trio.group("g").members) == 1
    kcsim_trio.clock.resume()
    mock_clock.jump(0.002)
    await kcsim_trio.wait_for_group("g", "Empty", members=0)
    assert await member.heartbeat() == UNKNOWN_MEMBER_ID
