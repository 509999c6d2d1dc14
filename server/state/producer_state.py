"""What one partition knows of its producers (Kafka's ProducerStateManager): sequence
numbers for idempotence, open transactions for the last stable offset, and the
aborted transactions read_committed fetches are told about.

It is rebuilt from the partition's batches when the partition is opened (`replay`), so
it survives restarts exactly as the log does.
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.record_batch import BatchProducer, control_type

E = ErrorCode
RECENT_BATCHES = 5  # Kafka keeps the last five batches of a producer for duplicate checks
NO_COORDINATOR_EPOCH = -1  # no marker of the producer's seen yet
MARKER_COORDINATOR_EPOCH = 0  # the coordinator epoch every marker kcsim writes carries
_SEQ_MOD = 1 << 31


class Aborted(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int  # the abort marker's offset


@dataclass
class ProducerEntry:
    epoch: int
    last_seq: int = -1
    last_timestamp: int = -1
    # The coordinator epoch of the producer's last marker here (DescribeProducers shows it).
    coordinator_epoch: int = NO_COORDINATOR_EPOCH
    # (first sequence, last sequence, base offset, max timestamp) of its last batches
    recent: deque[tuple[int, int, int, int]] = field(
        default_factory=lambda: deque(maxlen=RECENT_BATCHES))


class ProducerState:
    __slots__ = ("_aborted_lasts", "aborted", "ongoing", "producers")

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}
        self.ongoing: dict[int, int] = {}  # producer id -> first offset of its open transaction
        self.aborted: list[Aborted] = []  # in the order of their abort markers
        self._aborted_lasts: list[int] = []  # their markers' offsets, for bisection

    def check(self, producer: BatchProducer,
              count: int) -> tuple[int, tuple[int, int] | None]:
        """(error, (offset, max timestamp) of the same batch appended before) for a batch
        about to be appended."""
        entry = self.producers.get(producer.producer_id)
        if entry is None:
            return E.NONE, None  # unknown producer (new, or its batches are gone): any sequence
        if producer.producer_epoch < entry.epoch:
            return E.INVALID_PRODUCER_EPOCH, None
        first = producer.base_sequence
        if producer.producer_epoch > entry.epoch or entry.last_seq < 0:
            return (E.NONE if first == 0 else E.OUT_OF_ORDER_SEQUENCE_NUMBER), None
        last = (first + count - 1) % _SEQ_MOD
        for seq_first, seq_last, offset, timestamp in entry.recent:
            if seq_first == first and seq_last == last:
                return E.NONE, (offset, timestamp)
        if first != (entry.last_seq + 1) % _SEQ_MOD:
            return E.OUT_OF_ORDER_SEQUENCE_NUMBER, None
        return E.NONE, None

    def appended(self, producer: BatchProducer, count: int, base_offset: int,
                 timestamp: int) -> None:
        entry = self.producers.get(producer.producer_id)
        if entry is None or producer.producer_epoch != entry.epoch:
            # A new epoch starts its sequences afresh; the last marker's epoch stays (Kafka's).
            entry = self.producers[producer.producer_id] = ProducerEntry(
                producer.producer_epoch, coordinator_epoch=(
                    NO_COORDINATOR_EPOCH if entry is None else entry.coordinator_epoch))
        last = (producer.base_sequence + count - 1) % _SEQ_MOD
        entry.last_seq = last
        entry.last_timestamp = timestamp
        entry.recent.append((producer.base_sequence, last, base_offset, timestamp))
        if producer.transactional and producer.producer_id not in self.ongoing:
            self.ongoing[producer.producer_id] = base_offset

    def marker(self, producer_id: int, epoch: int, commit: bool, offset: int,
               timestamp: int) -> None:
        """A commit or abort marker at `offset` ends the producer's open transaction."""
        entry = self.producers.get(producer_id)
        if entry is None or epoch > entry.epoch:
            entry = self.producers[producer_id] = ProducerEntry(epoch)
        entry.last_timestamp = timestamp
        entry.coordinator_epoch = MARKER_COORDINATOR_EPOCH
        first = self.ongoing.pop(producer_id, None)
        if first is not None and not commit:
            self.aborted.append(Aborted(producer_id, first, offset))
            self._aborted_lasts.append(offset)

    def replay(self, base_offset: int, batch: bytes, producer: BatchProducer, count: int,
               timestamp: int) -> None:
        """One batch read back from the log at start-up."""
        if producer.control:
            kind = control_type(batch)
            if kind is not None:
                self.marker(producer.producer_id, producer.producer_epoch, kind == 1,
                            base_offset, timestamp)
        elif producer.producer_id >= 0:
            self.appended(producer, count, base_offset, timestamp)

    def last_stable_offset(self, high_watermark: int) -> int:
        """The first offset of the earliest open transaction, or the high watermark."""
        return min(self.ongoing.values(), default=high_watermark)

    def aborted_between(self, start: int, end: int) -> list[Aborted]:
        """Aborted transactions a read_committed fetch of [start, end) must skip."""
        # Markers come in offset order, so those ending at or after `start` are a tail
        # (found by bisection); which of them began before `end` is not ordered.
        i = bisect.bisect_left(self._aborted_lasts, start)
        return [a for a in self.aborted[i:] if a.first_offset < end]

    def has_ongoing(self, producer_id: int) -> bool:
        return producer_id in self.ongoing
