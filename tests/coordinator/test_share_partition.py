"""The share partition's rules, one table row per case: what acquiring, acknowledging,
lock expiry and a member leaving do to the records in flight, and the errors Kafka
answers."""

from __future__ import annotations

import pytest

from kcsim.coordinator.share.partition import (
    AckBatch,
    AcquiredRange,
    LogBatch,
    SharePartition,
    StateBatch,
    Update,
    check_acknowledgements,
)
from kcsim.coordinator.share.rules import RecordState as S
from kcsim.protocol.errors import ErrorCode as E

A, ACC, REL, REJ, REN, GAP = "a", 1, 2, 3, 4, 0
LOG = [LogBatch(0, 4), LogBatch(5, 9), LogBatch(10, 19)]


def states(p: SharePartition) -> dict[int, tuple[S, int]]:
    return {o: (r.state, r.delivery_count) for o, r in p.in_flight()}


def fresh(**config: int) -> SharePartition:
    config.setdefault("lock_duration_ms", 1000)
    config.setdefault("delivery_count_limit", 3)
    return SharePartition(0, **config)


@pytest.mark.parametrize(
    ("max_records", "batch_size", "expected"),
    [
        (1, None, [AcquiredRange(0, 4, 1)]),  # a soft limit: the whole first batch
        (5, None, [AcquiredRange(0, 4, 1)]),
        (6, None, [AcquiredRange(0, 9, 1)]),
        (100, None, [AcquiredRange(0, 19, 1)]),
        (100, 5, [AcquiredRange(0, 4, 1), AcquiredRange(5, 9, 1), AcquiredRange(10, 19, 1)]),
        (100, 8, [AcquiredRange(0, 9, 1), AcquiredRange(10, 19, 1)]),
        (0, None, []),
    ],
)
def test_new_records_are_acquired_whole_batches_at_a_time(max_records, batch_size, expected):
    p = fresh()
    acquired, update = p.acquire(A, LOG, max_records, 0, batch_size=batch_size)
    assert acquired == expected
    assert update is None  # acquiring writes nothing
    assert p.end_offset == (expected[-1].last_offset + 1 if expected else 0)


def test_two_members_never_hold_the_same_record():
    p = fresh()
    assert p.acquire("a", LOG[:1], 5, 0)[0] == [AcquiredRange(0, 4, 1)]
    assert p.next_fetch_offset() == 5
    assert p.acquire("b", LOG[1:], 5, 0)[0] == [AcquiredRange(5, 9, 1)]
    # b reads from 0 again: nothing there is available to it.
    assert p.acquire("b", LOG[:2], 10, 0)[0] == []


def test_max_in_flight_bounds_new_records():
    p = fresh(max_in_flight=7)
    assert p.acquire(A, LOG, 100, 0)[0] == [AcquiredRange(0, 9, 1)]  # to its batch's end
    assert p.acquire(A, LOG[2:], 100, 0)[0] == []


@pytest.mark.parametrize(
    ("types", "after", "start"),
    [
        ((ACC,), {}, 5),
        ((REJ,), {}, 5),
        ((GAP,), {}, 5),
        ((REL,), dict.fromkeys(range(5), (S.AVAILABLE, 1)), 0),
        ((ACC, REL, ACC, REJ, ACC), {1: (S.AVAILABLE, 1), 2: (S.ACKNOWLEDGED, 1), 3: (S.ARCHIVED, 1), 4: (S.ACKNOWLEDGED, 1)}, 1),
        ((REN,), dict.fromkeys(range(5), (S.ACQUIRED, 1)), 0),
    ],
)
def test_acknowledge_types(types, after, start):
    p = fresh()
    p.acquire(A, LOG[:1], 5, 0)
    error, update = p.acknowledge(A, [AckBatch(0, 4, types)], 10)
    assert error is E.NONE
    assert states(p) == after
    assert p.start_offset == start
    if types == (REN,):
        assert update is None  # a renewal writes nothing
        assert p.record(0).deadline == 1010
    else:
        assert update is not None and update.start_offset == start


def test_release_at_the_delivery_limit_archives():
    p = fresh(delivery_count_limit=2)
    for delivery in (1, 2):
        acquired, _ = p.acquire(A, LOG[:1], 5, 0)
        assert acquired == [AcquiredRange(0, 4, delivery)]
        error, update = p.acknowledge(A, [AckBatch(0, 4, (REL,))], 0)
        assert error is E.NONE
    assert update == Update(5, ())  # archived: the start offset moves past them
    assert len(p) == 0
    assert p.acquire(A, LOG[:1], 5, 0)[0] == []  # never delivered again


@pytest.mark.parametrize(
    ("member", "batches", "error"),
    [
        ("b", [AckBatch(0, 4, (ACC,))], E.INVALID_RECORD_STATE),  # held by another member
        (A, [AckBatch(0, 9, (ACC,))], E.INVALID_RECORD_STATE),  # 5-9 held by b
        (A, [AckBatch(0, 4, (ACC,)), AckBatch(7, 7, (REJ,))], E.INVALID_RECORD_STATE),
        (A, [AckBatch(0, 30, (ACC,))], E.INVALID_REQUEST),  # past the end
        (A, [AckBatch(0, 2, (ACC,)), AckBatch(1, 4, (ACC,))], E.INVALID_REQUEST),  # overlap
        # sharing an offset passes Kafka's request checks; the offset is then taken twice
        (A, [AckBatch(0, 2, (ACC,)), AckBatch(2, 4, (ACC,))], E.INVALID_RECORD_STATE),
        (A, [AckBatch(3, 4, (ACC,)), AckBatch(0, 1, (ACC,))], E.INVALID_REQUEST),  # not in order
        (A, [AckBatch(4, 3, (ACC,))], E.INVALID_REQUEST),
        (A, [AckBatch(0, 4, ())], E.INVALID_REQUEST),
        (A, [AckBatch(0, 4, (ACC, ACC))], E.INVALID_REQUEST),  # neither one nor one per offset
        (A, [AckBatch(0, 4, (5,))], E.INVALID_REQUEST),  # no such type
    ],
)
def test_bad_acknowledgements_change_nothing(member, batches, error):
    p = fresh()
    p.acquire(A, LOG[:1], 5, 0)
    p.acquire("b", [LogBatch(5, 9)], 5, 0)
    before = states(p)
    assert p.acknowledge(member, batches, 0) == (error, None)
    assert states(p) == before


def test_renew_needs_version_2():
    assert check_acknowledgements([AckBatch(0, 0, (REN,))], renew_allowed=False) is E.INVALID_REQUEST
    assert check_acknowledgements([AckBatch(0, 0, (REN,))]) is E.NONE


def test_acknowledgements_before_the_start_are_skipped():
    p = fresh()
    p.acquire(A, LOG[:1], 5, 0)
    p.acknowledge(A, [AckBatch(0, 4, (ACC,))], 0)
    assert p.acknowledge(A, [AckBatch(0, 4, (ACC,))], 0) == (E.NONE, None)


def test_an_expired_lock_gives_the_records_back_and_counts_the_delivery():
    p = fresh(delivery_count_limit=2)
    p.acquire(A, LOG[:1], 5, 0)
    assert p.next_deadline() == 1000
    assert p.expire(999) is None
    assert p.expire(1000) == Update(0, (StateBatch(0, 4, S.AVAILABLE, 1),))
    assert p.next_deadline() is None
    p.acquire("b", LOG[:1], 5, 1000)
    assert p.expire(2000) == Update(5, ())  # the second delivery was the last
    assert len(p) == 0


def test_renewal_moves_the_deadline():
    p = fresh()
    p.acquire(A, LOG[:1], 5, 0)
    p.acknowledge(A, [AckBatch(0, 1, (REN,))], 500)
    assert p.expire(1000) == Update(0, (StateBatch(2, 4, S.AVAILABLE, 1),))
    assert p.next_deadline() == 1500
    assert p.expire(1500) == Update(0, (StateBatch(0, 1, S.AVAILABLE, 1),))


def test_a_leaving_member_gives_back_uncounted():
    p = fresh(delivery_count_limit=1)
    p.acquire(A, LOG[:1], 5, 0)
    p.acquire("b", [LogBatch(5, 9)], 5, 0)
    assert p.release_member(A) == Update(0, (StateBatch(0, 4, S.AVAILABLE, 0),))
    assert p.acquired_by("b") == [5, 6, 7, 8, 9]
    assert p.acquire("b", LOG[:1], 5, 0)[0] == [AcquiredRange(0, 4, 1)]


def test_read_committed_archives_aborted_records():
    p = fresh()
    acquired, update = p.acquire(A, LOG[:2], 10, 0, aborted=[(0, 1), (6, 7)])
    assert acquired == [AcquiredRange(2, 5, 1), AcquiredRange(8, 9, 1)]
    assert update == Update(2, (StateBatch(6, 7, S.ARCHIVED, 0),))


def test_a_gap_in_the_log_is_skipped():
    p = fresh()
    assert p.acquire(A, [LogBatch(100, 104)], 5, 0)[0] == [AcquiredRange(100, 104, 1)]
    assert p.start_offset == 100
    _, update = p.acquire(A, [LogBatch(110, 114)], 5, 0)
    assert update == Update(100, (StateBatch(105, 109, S.ARCHIVED, 0),))
