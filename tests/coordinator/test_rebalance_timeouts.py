"""Rebalance time-outs a client may send that no real client does: zero and negative."""

from __future__ import annotations

import pytest

from .group_harness import MEMBER_ID_REQUIRED, Harness


@pytest.mark.timeout(10)
def test_a_join_phase_nobody_rejoined_is_put_off_not_spun() -> None:
    """A static member replaced while a rebalance waits, the others gone: nobody has
    rejoined when the join phase ends, so it is put off until sessions expire. It was
    put off by the group's rebalance timeout, here 0 or less: again and again at the same
    instant, and the coordinator never returned. (The sequence a fuzz run found.)"""
    h = Harness()
    h.join("g", "", instance="s", rebalance=-1000, version=1)  # v1: a dynamic member
    h.join("g", "", instance="s", rebalance=0, version=5)
    h.advance(20_000)
    first = h.response(h.join("g", "", rebalance=10, version=9))
    assert first is not None and first.error_code == MEMBER_ID_REQUIRED
    h.join("g", first.member_id, rebalance=30_000, version=9)
    h.join("g", "", instance="s", rebalance=-1000, version=9)  # replaces the static member
    h.advance(20_000)
    assert h.gc.group_state("g") is not None
    h.advance(60_000)  # every session has expired by now
    assert h.gc.group_state("g") == "Empty"
