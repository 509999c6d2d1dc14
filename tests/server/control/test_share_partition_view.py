"""kcsim.testing's view of a share partition's in-flight records, and the wait on it."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kcsim.testing import InFlightRecord, WaitTimeout

from ..test_share_wire import ACCEPT, GROUP, RELEASE, TOPIC, Member, acquired, produce, world

__all__ = ["world"]  # the fixture, used by name


def test_the_view_shows_each_record_s_state_count_holder_and_lock(kcsim: Any, world: Any) -> None:
    wire, tid = world
    a = Member(wire, "member-a", tid)
    a.heartbeat()
    assert kcsim.share_partition(GROUP, TOPIC) is None  # nobody fetched it yet
    a.fetch()
    produce(wire, 4)
    now = kcsim.clock.freeze()  # the lock deadline is counted from this instant
    assert acquired(a.fetch(max_records=4)) == [(0, 3, 1)]
    a.ack([(0, 0, ACCEPT), (1, 1, RELEASE)])
    view = kcsim.share_partition(GROUP, TOPIC)
    assert (view.start_offset, view.end_offset) == (1, 4)
    deadline = now + 30_000
    assert view.records == [
        InFlightRecord(offset=1, state="Available", delivery_count=1, member=None,
                       lock_deadline_ms=None),
        InFlightRecord(offset=2, state="Acquired", delivery_count=1, member="member-a",
                       lock_deadline_ms=deadline),
        InFlightRecord(offset=3, state="Acquired", delivery_count=1, member="member-a",
                       lock_deadline_ms=deadline)]
    assert view.counts() == {"Available": 1, "Acquired": 2}


def test_the_wait_returns_when_the_locks_run_out(kcsim: Any, world: Any) -> None:
    wire, tid = world
    a = Member(wire, "member-a", tid)
    a.heartbeat()
    a.fetch()
    produce(wire, 3)
    a.fetch(max_records=3)
    assert kcsim.wait_for_share_partition(GROUP, TOPIC, acquired=3).counts() == {"Acquired": 3}
    with pytest.raises(WaitTimeout, match="start offset 0, end offset 3, 3 acquired"):
        kcsim.wait_for_share_partition(GROUP, TOPIC, available=3, timeout=0.2)
    seen: list[Any] = []
    waiter = threading.Thread(target=lambda: seen.append(
        kcsim.wait_for_share_partition(GROUP, TOPIC, available=3, acquired=0)))
    waiter.start()
    kcsim.clock.advance(30_000)
    waiter.join(10)
    assert [r.delivery_count for r in seen[0].records] == [1, 1, 1]
    a.fetch(acks=[], max_records=3)
    a.ack([(0, 2, ACCEPT)])
    view = kcsim.wait_for_share_partition(GROUP, TOPIC, start_offset=3)
    assert view.records == []


def test_bad_arguments_are_refused(kcsim: Any) -> None:
    with pytest.raises(ValueError, match="acquired"):
        kcsim.wait_for_share_partition(GROUP, TOPIC, acquired=-1)
    with pytest.raises(ValueError, match="topic"):
        kcsim.share_partition(GROUP, 7)
