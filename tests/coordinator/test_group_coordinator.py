"""The coordinator facade: time, parked requests, cancellation, dispatch."""

from __future__ import annotations

import pytest

from kcsim.coordinator import Caller, GroupConfig
from kcsim.protocol.errors import ErrorCode as E

from .group_harness import Harness


def test_deadlines_due_before_a_request_fire_first():
    h = Harness()
    a, _ = h.stable_group("g", 2)
    h.now += 60_000  # no tick in between: both sessions ended long ago
    assert h.heartbeat("g", a, 1).error_code == E.UNKNOWN_MEMBER_ID
    assert h.gc.group_state("g") == "Empty"


def test_a_long_jump_fires_each_deadline_at_its_own_time():
    h = Harness()
    (a,) = h.stable_group("g", 1)
    h.commit("g", {("t", 0): 1}, generation=1, member_id=a)  # keeps the Empty group alive
    h.leave("g", (a, None))
    left_at = h.now
    h.advance(3_600_000)
    # The rebalance that emptied the group happened when the member left, not an hour later.
    assert h.gc.group("g").state_timestamp == left_at


def test_a_cancelled_parked_request_is_never_answered():
    h = Harness()
    first = h.join("g", version=3)
    second = h.join("g", version=3)
    h.gc.cancel(first)
    h.advance(200)  # the initial delay, extended once for the second member
    assert h.response(first) is None
    assert h.response(second).generation_id == 1
    # Kafka does not notice the disconnect: the member is still part of the generation.
    assert len(h.gc.group("g").members) == 2


def test_cancelling_an_answered_or_unknown_token_is_harmless():
    h = Harness()
    token = h.join("g")
    h.gc.cancel(token)
    h.gc.cancel(object())
    assert h.response(token).error_code == E.MEMBER_ID_REQUIRED


def test_next_deadline_tracks_the_earliest_timer():
    h = Harness(
        GroupConfig(initial_rebalance_delay_ms=100, offsets_retention_check_interval_ms=600_000)
    )
    h.tick()
    assert h.gc.next_deadline() == h.now + 600_000
    h.join("g", version=3)
    assert h.gc.next_deadline() == h.now + 100


def test_outcome_records_are_already_applied():
    h = Harness()
    ctx = Caller(token=object(), client_id="c", client_host="h")
    from .group_harness import OffsetCommitRequest as C

    request = C(
        group_id="g",
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            C.OffsetCommitRequestTopic(
                name="t",
                partitions=[
                    C.OffsetCommitRequestPartition(
                        partition_index=0, committed_offset=9, committed_metadata=""
                    )
                ],
            )
        ],
    )
    outcome = h.gc.handle(8, 9, request, ctx, h.now)
    assert len(outcome.records) == 1
    assert h.gc.committed_offsets("g")[("t", 0)].offset == 9
    assert outcome.responses[0][0] is ctx.token


def test_unknown_api_keys_are_refused():
    """(Versions are checked once, by the broker's route table: tests/server/clients/test_bad_input.py.)"""
    h = Harness()
    ctx = Caller(token=object(), client_id="c", client_host="h")
    with pytest.raises(ValueError, match="not served by the group coordinator"):
        h.gc.handle(10, 0, None, ctx, h.now)
