"""One share partition of one share group: the records in flight between its start and
end offsets, each AVAILABLE, ACQUIRED by a member under a lock, ACKNOWLEDGED or
ARCHIVED, with its delivery count (Kafka's SharePartition).

Theory of operation. Every offset from `start_offset` up to `end_offset` (exclusive:
the first offset never fetched) has an entry; offsets before the start are done with
and forgotten, offsets from the end on were never fetched. The caller reads the log
from :meth:`SharePartition.next_fetch_offset` and passes what it read as plain data
(the batches' offset ranges, and for read_committed the ranges of aborted
transactions); :meth:`~SharePartition.acquire` hands the caller's member the
AVAILABLE records among them first, then new records past the end, whole log batches
at a time (`max_records` is a soft limit, as in Kafka's batch-optimized mode).

The time is passed in and the locks are a heap of (deadline, first, last), one entry
per acquired range: :meth:`~SharePartition.next_deadline` says when to call
:meth:`~SharePartition.expire`, which gives back what is still held under a lock that
ran out. An entry outlived by its records (acknowledged, renewed) is skipped.

Each change that Kafka's share partition writes to the share coordinator returns an
:class:`Update` (the new start offset and the changed records as state batches);
acquiring writes nothing, so after a restart a record that was acquired comes back
AVAILABLE with the delivery count of its last written change
(:meth:`~SharePartition.durable_view` is that projection of the live state).
Acknowledgements are checked whole before any is applied: a partition's
acknowledgements are taken all or not at all.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, NamedTuple

from kcsim.protocol.errors import ErrorCode

from .rules import (
    AckEffect,
    AcknowledgeType,
    GiveBack,
    RecordState,
    ack_effect,
    given_back,
    is_final,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

__all__ = [
    "DEFAULT_DELIVERY_COUNT_LIMIT",
    "DEFAULT_LOCK_DURATION_MS",
    "DEFAULT_MAX_IN_FLIGHT",
    "AckBatch",
    "AcquiredRange",
    "InFlight",
    "LogBatch",
    "SharePartition",
    "StateBatch",
    "Update",
    "check_acknowledgements",
]

# Kafka's broker defaults: group.share.record.lock.duration.ms,
# group.share.delivery.count.limit, group.share.partition.max.record.locks.
DEFAULT_LOCK_DURATION_MS = 30_000
DEFAULT_DELIVERY_COUNT_LIMIT = 5
DEFAULT_MAX_IN_FLIGHT = 2_000

_AVAILABLE = RecordState.AVAILABLE
_ACQUIRED = RecordState.ACQUIRED


class LogBatch(NamedTuple):
    """A batch of the log as the caller read it: its first and last offsets."""

    first_offset: int
    last_offset: int


class AckBatch(NamedTuple):
    """An AcknowledgementBatch: one type for the whole range, or one per offset."""

    first_offset: int
    last_offset: int
    types: tuple[int, ...]


class AcquiredRange(NamedTuple):
    """An AcquiredRecords entry of a ShareFetch answer."""

    first_offset: int
    last_offset: int
    delivery_count: int


class StateBatch(NamedTuple):
    """Records of one state and delivery count, as the share coordinator stores them."""

    first_offset: int
    last_offset: int
    state: RecordState
    delivery_count: int


class Update(NamedTuple):
    """What one change writes: the start offset after it and the records it changed."""

    start_offset: int
    batches: tuple[StateBatch, ...]


class InFlight:
    """One record's state; `member` and `deadline` mean something while ACQUIRED."""

    __slots__ = ("deadline", "delivery_count", "member", "state")

    def __init__(
        self, state: RecordState, delivery_count: int, member: str = "", deadline: int = 0
    ) -> None:
        self.state = state
        self.delivery_count = delivery_count
        self.member = member
        self.deadline = deadline

    def __repr__(self) -> str:
        held = f" by {self.member!r} until {self.deadline}" if self.state is _ACQUIRED else ""
        return f"InFlight({self.state.name}, {self.delivery_count}{held})"


def check_acknowledgements(batches: Sequence[AckBatch], renew_allowed: bool = True) -> ErrorCode:
    """Kafka's checks of a partition's acknowledgement batches before any is taken:
    each range in order, none starting before the previous one's last offset (sharing
    that offset passes here, and fails as the offset acknowledged twice), one type or one
    per offset, known types (RENEW only where the request says it carries renewals).
    INVALID_REQUEST, or NONE."""
    previous_last = -1
    for batch in batches:
        first, last, types = batch
        if first < 0 or last < first or first < previous_last:
            return ErrorCode.INVALID_REQUEST
        if not types or (len(types) > 1 and len(types) != last - first + 1):
            return ErrorCode.INVALID_REQUEST
        for t in types:
            if not 0 <= t <= AcknowledgeType.RENEW or (
                t == AcknowledgeType.RENEW and not renew_allowed
            ):
                return ErrorCode.INVALID_REQUEST
        previous_last = last
    return ErrorCode.NONE


class SharePartition:
    """The in-flight records of one (group, topic, partition)."""

    __slots__ = (
        "_available_from",
        "_locks",
        "_records",
        "delivery_count_limit",
        "end_offset",
        "lock_duration_ms",
        "max_in_flight",
        "start_offset",
    )

    def __init__(
        self,
        start_offset: int,
        *,
        lock_duration_ms: int = DEFAULT_LOCK_DURATION_MS,
        delivery_count_limit: int = DEFAULT_DELIVERY_COUNT_LIMIT,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    ) -> None:
        self.start_offset = start_offset
        self.end_offset = start_offset
        self.lock_duration_ms = lock_duration_ms
        self.delivery_count_limit = delivery_count_limit
        self.max_in_flight = max_in_flight
        self._records: dict[int, InFlight] = {}
        self._locks: list[tuple[int, int, int]] = []  # (deadline, first, last), a heap
        self._available_from = start_offset  # no AVAILABLE record before this offset

    @classmethod
    def restore(
        cls,
        start_offset: int,
        states: Mapping[int, tuple[RecordState, int]],
        *,
        lock_duration_ms: int = DEFAULT_LOCK_DURATION_MS,
        delivery_count_limit: int = DEFAULT_DELIVERY_COUNT_LIMIT,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    ) -> SharePartition:
        """The partition as its written state leaves it: the written records (none is
        ACQUIRED), the offsets between them AVAILABLE and never delivered."""
        partition = cls(
            start_offset,
            lock_duration_ms=lock_duration_ms,
            delivery_count_limit=delivery_count_limit,
            max_in_flight=max_in_flight,
        )
        kept = [o for o in states if o >= start_offset]
        end = max(kept) + 1 if kept else start_offset
        records = partition._records
        for offset in range(start_offset, end):
            state, count = states.get(offset, (_AVAILABLE, 0))
            records[offset] = InFlight(_AVAILABLE if state is _ACQUIRED else state, count)
        partition.end_offset = end
        partition._advance_start()
        return partition

    # -- views -------------------------------------------------------------------------

    def __len__(self) -> int:
        """How many records are in flight (start to end)."""
        return self.end_offset - self.start_offset

    def record(self, offset: int) -> InFlight | None:
        return self._records.get(offset)

    def in_flight(self) -> Iterator[tuple[int, InFlight]]:
        """The in-flight records by offset, from the start offset."""
        records = self._records
        for offset in range(self.start_offset, self.end_offset):
            yield offset, records[offset]

    def durable_view(self) -> dict[int, tuple[RecordState, int]]:
        """What the written state holds of the in-flight records, as a restart finds
        them: an acquired record as it was before it was acquired (acquiring writes
        nothing), and records AVAILABLE and never delivered left out."""
        view: dict[int, tuple[RecordState, int]] = {}
        for offset, r in self.in_flight():
            state, count = r.state, r.delivery_count
            if state is _ACQUIRED:
                state, count = _AVAILABLE, count - 1
            if state is not _AVAILABLE or count:
                view[offset] = (state, count)
        return view

    def next_fetch_offset(self) -> int:
        """Where the caller reads the log from: the first AVAILABLE record, else the end."""
        records = self._records
        offset = max(self._available_from, self.start_offset)
        while offset < self.end_offset and records[offset].state is not _AVAILABLE:
            offset += 1
        self._available_from = offset
        return offset

    def next_deadline(self) -> int | None:
        """When the earliest lock still holding a record runs out; None: no lock."""
        locks = self._locks
        while locks:
            deadline, first, last = locks[0]
            if self._holds(deadline, first, last):
                return deadline
            heapq.heappop(locks)
        return None

    def acquired_by(self, member: str) -> list[int]:
        return [o for o, r in self.in_flight() if r.state is _ACQUIRED and r.member == member]

    # -- changes -----------------------------------------------------------------------

    def acquire(
        self,
        member: str,
        batches: Sequence[LogBatch],
        max_records: int,
        now_ms: int,
        *,
        batch_size: int | None = None,
        aborted: Sequence[tuple[int, int]] = (),
    ) -> tuple[list[AcquiredRange], Update | None]:
        """Acquire for `member` up to `max_records` of the records the caller read
        (`batches`, in offset order): AVAILABLE ones in flight first, then new ones
        past the end, to the end of the log batch holding the last one wanted, in
        ranges of about `batch_size`. New records in `aborted` ranges are archived,
        not delivered (read_committed)."""
        if max_records <= 0 or not batches:
            return [], None
        deadline = now_ms + self.lock_duration_ms
        first, last = batches[0].first_offset, batches[-1].last_offset
        acquired: list[AcquiredRange] = []
        changed: list[int] = []
        count = self._reacquire(member, first, last, max_records, deadline, acquired)
        if count < max_records and last >= self.end_offset:
            self._acquire_new(
                member, batches, max_records - count, deadline, batch_size, aborted, acquired, changed
            )
        for a in acquired:
            heapq.heappush(self._locks, (deadline, a.first_offset, a.last_offset))
        return acquired, self._written(changed)

    def acknowledge(
        self, member: str, batches: Sequence[AckBatch], now_ms: int, *, renew_allowed: bool = True
    ) -> tuple[ErrorCode, Update | None]:
        """Take `member`'s acknowledgements of this partition, all or none: each offset
        acknowledged must be in flight and ACQUIRED by the member (else
        INVALID_RECORD_STATE); offsets past the end are INVALID_REQUEST, offsets
        before the start already done with and skipped."""
        error = check_acknowledgements(batches, renew_allowed)
        if error:
            return error, None
        records = self._records
        plan: list[tuple[int, InFlight, AckEffect]] = []
        taken: set[int] = set()  # offsets no longer ACQUIRED once their plan is carried out
        for first, last, types in batches:
            if last < self.start_offset:
                continue
            if last >= self.end_offset:
                return ErrorCode.INVALID_REQUEST, None
            one = ack_effect(AcknowledgeType(types[0])) if len(types) == 1 else None
            for offset in range(max(first, self.start_offset), last + 1):
                r = records[offset]
                if r.state is not _ACQUIRED or r.member != member or offset in taken:
                    return ErrorCode.INVALID_RECORD_STATE, None
                effect = one or ack_effect(AcknowledgeType(types[offset - first]))
                plan.append((offset, r, effect))
                if effect is not AckEffect.RENEW:
                    taken.add(offset)
        changed: list[int] = []
        renewed: list[int] = []
        for offset, r, effect in plan:
            if effect is AckEffect.RENEW:
                r.deadline = now_ms + self.lock_duration_ms
                renewed.append(offset)
                continue
            if effect is AckEffect.GIVE_BACK:
                self._give_back(offset, r, GiveBack.RELEASE)
            else:
                r.state = (
                    RecordState.ACKNOWLEDGED
                    if effect is AckEffect.ACKNOWLEDGE
                    else RecordState.ARCHIVED
                )
                r.member, r.deadline = "", 0
            changed.append(offset)
        for lo, hi in _runs(renewed):
            heapq.heappush(self._locks, (now_ms + self.lock_duration_ms, lo, hi))
        return ErrorCode.NONE, self._written(changed)

    def expire(self, now_ms: int) -> Update | None:
        """Give back every record whose lock has run out by `now_ms`."""
        locks, records = self._locks, self._records
        changed: list[int] = []
        while locks and locks[0][0] <= now_ms:
            deadline, first, last = heapq.heappop(locks)
            for offset in range(max(first, self.start_offset), min(last + 1, self.end_offset)):
                r = records[offset]
                if r.state is _ACQUIRED and r.deadline == deadline:
                    self._give_back(offset, r, GiveBack.LOCK_EXPIRED)
                    changed.append(offset)
        return self._written(changed)

    def release_member(self, member: str) -> Update | None:
        """Give back the records `member` holds: it left the group or closed its session."""
        changed: list[int] = []
        for offset, r in self.in_flight():
            if r.state is _ACQUIRED and r.member == member:
                self._give_back(offset, r, GiveBack.MEMBER_LEFT)
                changed.append(offset)
        return self._written(changed)

    # -- the steps ----------------------------------------------------------------------

    def _reacquire(
        self,
        member: str,
        first: int,
        last: int,
        max_records: int,
        deadline: int,
        acquired: list[AcquiredRange],
    ) -> int:
        records = self._records
        count = 0
        for offset in range(max(first, self.start_offset), min(last + 1, self.end_offset)):
            if count >= max_records:
                break
            r = records[offset]
            if r.state is not _AVAILABLE:
                continue
            r.state, r.member, r.deadline = _ACQUIRED, member, deadline
            r.delivery_count += 1
            count += 1
            _extend(acquired, offset, r.delivery_count)
        return count

    def _acquire_new(
        self,
        member: str,
        batches: Sequence[LogBatch],
        wanted: int,
        deadline: int,
        batch_size: int | None,
        aborted: Sequence[tuple[int, int]],
        acquired: list[AcquiredRange],
        changed: list[int],
    ) -> None:
        records = self._records
        begin = max(batches[0].first_offset, self.end_offset)
        if begin > self.end_offset:  # the log has nothing there (deleted, compacted away)
            if self.start_offset == self.end_offset:
                self.start_offset = self._available_from = begin
            else:
                for offset in range(self.end_offset, begin):
                    records[offset] = InFlight(RecordState.ARCHIVED, 0)
                    changed.append(offset)
            self.end_offset = begin
        wanted = min(wanted, self.max_in_flight - len(self))
        if wanted <= 0:
            return
        stop = _batch_end(batches, begin + wanted - 1)
        skipped = _in_ranges(aborted, begin, stop)
        for offset in range(begin, stop + 1):
            if offset in skipped:
                records[offset] = InFlight(RecordState.ARCHIVED, 0)
                changed.append(offset)
            else:
                records[offset] = InFlight(_ACQUIRED, 1, member, deadline)
        self.end_offset = stop + 1
        for lo, hi in _split(batches, begin, stop, batch_size):
            for a, b in _runs(o for o in range(lo, hi + 1) if o not in skipped):
                acquired.append(AcquiredRange(a, b, 1))

    def _give_back(self, offset: int, r: InFlight, how: GiveBack) -> None:
        r.state, r.delivery_count = given_back(how, r.delivery_count, self.delivery_count_limit)
        r.member, r.deadline = "", 0
        if r.state is _AVAILABLE and offset < self._available_from:
            self._available_from = offset

    def _holds(self, deadline: int, first: int, last: int) -> bool:
        records = self._records
        for offset in range(max(first, self.start_offset), min(last + 1, self.end_offset)):
            r = records[offset]
            if r.state is _ACQUIRED and r.deadline == deadline:
                return True
        return False

    def _advance_start(self) -> None:
        records = self._records
        start = self.start_offset
        while start < self.end_offset and is_final(records[start].state):
            del records[start]
            start += 1
        self.start_offset = start

    def _written(self, changed: list[int]) -> Update | None:
        """The update a change writes; the start offset moves past what is done."""
        if not changed:
            return None
        self._advance_start()
        records = self._records
        start = self.start_offset
        batches: list[StateBatch] = []
        for offset in sorted(changed):
            if offset < start:
                continue
            r = records[offset]
            if batches:
                b = batches[-1]
                if b.last_offset == offset - 1 and b.state is r.state and b.delivery_count == r.delivery_count:
                    batches[-1] = b._replace(last_offset=offset)
                    continue
            batches.append(StateBatch(offset, offset, r.state, r.delivery_count))
        return Update(start, tuple(batches))


def _extend(acquired: list[AcquiredRange], offset: int, delivery_count: int) -> None:
    if acquired:
        a = acquired[-1]
        if a.last_offset == offset - 1 and a.delivery_count == delivery_count:
            acquired[-1] = a._replace(last_offset=offset)
            return
    acquired.append(AcquiredRange(offset, offset, delivery_count))


def _runs(offsets: Iterable[int]) -> list[tuple[int, int]]:
    """Consecutive offsets as (first, last) ranges, in the order given."""
    runs: list[tuple[int, int]] = []
    for offset in offsets:
        if runs and runs[-1][1] == offset - 1:
            runs[-1] = (runs[-1][0], offset)
        else:
            runs.append((offset, offset))
    return runs


def _batch_end(batches: Sequence[LogBatch], offset: int) -> int:
    """The last offset of the batch holding `offset` (capped at the last one read)."""
    for batch in batches:
        if batch.first_offset <= offset <= batch.last_offset:
            return batch.last_offset
        if batch.first_offset > offset:
            break
    return min(offset, batches[-1].last_offset)


def _split(
    batches: Sequence[LogBatch], first: int, last: int, batch_size: int | None
) -> list[tuple[int, int]]:
    """Kafka's acquired ranges of new records: cut at a log batch's first offset once a
    range has `batch_size` records or more."""
    if not batch_size or last - first + 1 <= batch_size:
        return [(first, last)]
    ranges: list[tuple[int, int]] = []
    current = first
    for batch in batches:
        base = batch.first_offset
        if base > last:
            break
        if base - current >= batch_size:
            ranges.append((current, base - 1))
            current = base
    ranges.append((current, last))
    return ranges


def _in_ranges(ranges: Sequence[tuple[int, int]], first: int, last: int) -> frozenset[int]:
    """The offsets from `first` to `last` that fall in any of `ranges` (inclusive)."""
    hits: set[int] = set()
    for lo, hi in ranges:
        hits.update(range(max(lo, first), min(hi, last) + 1))
    return frozenset(hits)
