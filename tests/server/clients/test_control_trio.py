"""kcsim inside a trio test on trio's MockClock: a classic group through join, session expiry
and offset retention, with days of broker time passing in well under a second of wall time.

The members are raw protocol members (tests/server/rawgroup.py): they heartbeat only when
the test says, so every time-out is the test's to cause, by advancing kcsim's clock or by
letting the autojumping MockClock run to the broker's next deadline.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from ..rawgroup import RawMember, connect, create_topic, fetch_offsets

REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID = 27, 25
DAY_MS = 24 * 3600 * 1000
RETENTION_MS = 7 * DAY_MS  # offsets.retention.minutes: Kafka's default, kcsim's too
CHECK_MS = 600_000  # offsets.retention.check.interval.ms


@pytest.mark.kcsim(initial_rebalance_delay_ms=3000)
async def test_join_expire_and_retain_on_simulated_time(kcsim_trio: Any, autojump_clock: Any,
                                                       unique_name: Any) -> None:
    group, topic = unique_name("g"), unique_name("t")
    admin = await connect(kcsim_trio.port)
    await create_topic(admin, topic, 4)
    quick = RawMember(await connect(kcsim_trio.port), group, topic, session_ms=10_000)
    steady = RawMember(await connect(kcsim_trio.port), group, topic, session_ms=30_000)
    started = trio.current_time()

    # Both join; the first join waits out the 3 s initial rebalance delay in MockClock time.
    async with trio.open_nursery() as nursery:
        nursery.start_soon(quick.join)
        nursery.start_soon(steady.join)
    assert quick.generation == steady.generation == 1
    assert trio.current_time() - started >= 3.0
    async with trio.open_nursery() as nursery:
        nursery.start_soon(quick.sync, 4)
        nursery.start_soon(steady.sync, 4)
    view = await kcsim_trio.wait_for_group(group, "Stable", members=2)
    assert sorted(p for m in view.members for _, p in m.partitions) == [0, 1, 2, 3]

    # Past the quick member's 10 s session: the broker expires it at once, not the other.
    kcsim_trio.clock.advance(10_001)
    view = kcsim_trio.group(group)
    assert [m.member_id for m in view.members] == [steady.member_id]
    assert view.state == "PreparingRebalance"
    assert await quick.heartbeat() == UNKNOWN_MEMBER_ID
    assert await steady.heartbeat() == REBALANCE_IN_PROGRESS
    assert await steady.join() == 0
    assert steady.generation == 2
    assert await steady.sync(4) == (0, [0, 1, 2, 3])
    assert await steady.commit({p: 10 + p for p in range(4)}) == [0, 0, 0, 0]
    await kcsim_trio.wait_for_committed(group, {(topic, p): 10 + p for p in range(4)})

    # Silent from now on: its session ends 30 s of broker time later, on the broker's own
    # timer (the MockClock jumps there), and the group is Empty with its offsets kept.
    silent_from = kcsim_trio.clock.now_ms()
    await kcsim_trio.wait_for_group(group, "Empty", timeout=60)
    assert kcsim_trio.clock.now_ms() - silent_from >= 30_000
    assert (await fetch_offsets(admin, group, topic, 4))[1] == {p: 10 + p for p in range(4)}

    # Seven days and one retention check later the Empty group's offsets are gone.
    kcsim_trio.clock.advance(RETENTION_MS + CHECK_MS)
    assert kcsim_trio.committed(group) == {}
    assert (await fetch_offsets(admin, group, topic, 4)) == (0, {})
    assert kcsim_trio.group(group) is None
