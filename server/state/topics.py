"""Topics and their partitions: names, ids, configs and the in-memory data plane.

A partition keeps the record batches it was given (rewritten only in their base
offset), an index of base offsets for fetches from any offset, the log start
offset and the high watermark (single replica: the log end offset).

The log start offset only moves forward, and only through `Partition.move_log_start`
(DeleteRecords; retention and compaction are its other movers): records below it are
gone for every reader, and the store may drop the segments wholly below it.
"""

from __future__ import annotations

import bisect
import functools
import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.record_batch import (
    BatchInfo,
    batch_producer,
    control_batch,
    has_producer_id,
    iter_batches,
    record_timestamps,
    with_base_offset,
)
from kcsim.storage import DEFAULT_SEGMENT_BYTES

from .producer_state import ProducerState

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_TOPIC_NAME = 249
FRAME_SIZE = 32  # what a partition log's frame adds to each batch: memory cuts segments alike
_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")

DEFAULT_TOPIC_CONFIGS: dict[str, str] = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "max.message.bytes": "1048588",
    "message.timestamp.type": "CreateTime",
    "min.insync.replicas": "1",
    "retention.bytes": "-1",
    "retention.ms": "604800000",
    "segment.bytes": "1073741824",
}


def topic_name_problem(name: str) -> str | None:
    """Kafka's topic name rules; None when the name is legal."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return "Topic name cannot be \".\" or \"..\""
    if len(name) > MAX_TOPIC_NAME:
        return f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME} characters"
    if not _LEGAL.match(name):
        return (f"Topic name \"{name}\" is illegal, it contains a character other than "
                "ASCII alphanumerics, '.', '_' and '-'")
    return None


class MemoryBatches:
    """Batches of one partition kept in memory (``--in-memory``); PartitionLog's interface.

    Its segments are cut as a partition log's are (a batch that would take the active
    segment past `segment_bytes`, counting the log's frame, starts a new one), but only
    when retention or the cleaner asks for them (`segment_ranges`), so appending costs
    nothing more."""

    __slots__ = ("_bases", "_batches", "_scanned", "_segments", "log_end_offset",
                 "log_start_offset", "segment_bytes")

    in_memory = True

    def __init__(self) -> None:
        self._batches: list[bytes] = []
        self._bases: list[int] = []
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.segment_bytes = DEFAULT_SEGMENT_BYTES
        self._segments: list[list[int]] = [[0, 0, 0]]  # [base, end, bytes]; the last is active
        self._scanned = 0  # the batches up to this offset are placed in segments

    def append(self, base_offset: int, last_offset_delta: int, batch: bytes, max_timestamp: int) -> None:
        self._batches.append(batch)
        self._bases.append(base_offset)
        self.log_end_offset = base_offset + last_offset_delta + 1

    def read(self, from_offset: int, max_bytes: int) -> list[tuple[int, bytes]]:
        i = max(0, bisect.bisect_right(self._bases, from_offset) - 1)
        out: list[tuple[int, bytes]] = []
        total = 0
        while i < len(self._batches):
            b = self._batches[i]
            if out and total + len(b) > max_bytes:
                break
            out.append((self._bases[i], b))
            total += len(b)
            i += 1
        return out

    @property
    def size_bytes(self) -> int:
        return sum(map(len, self._batches))

    def truncate_prefix(self, new_start: int) -> None:
        """Make `new_start` the log start offset, dropping the batches wholly before it."""
        if new_start <= self.log_start_offset:
            return
        self.segment_ranges()
        self.log_start_offset = new_start
        if new_start >= self.log_end_offset:
            drop = len(self._bases)
            self._segments = [[self.log_end_offset, self.log_end_offset, 0]]
        else:
            drop = max(0, bisect.bisect_right(self._bases, new_start) - 1)
            while len(self._segments) > 1 and self._segments[1][0] <= new_start:
                del self._segments[0]
        del self._batches[:drop], self._bases[:drop]

    # -- segments: what retention and the cleaner work on ---------------------------

    def segment_ranges(self) -> list[tuple[int, int, int]]:
        """(base offset, end offset, bytes) of each segment, oldest first; the last is the
        active one."""
        bases, batches = self._bases, self._batches
        active = self._segments[-1]
        for i in range(bisect.bisect_left(bases, self._scanned), len(bases)):
            size = len(batches[i]) + FRAME_SIZE
            if active[2] and active[2] + size > self.segment_bytes:
                active = [bases[i], bases[i], 0]
                self._segments.append(active)
            active[1] = bases[i + 1] if i + 1 < len(bases) else self.log_end_offset
            active[2] += size
        self._scanned = self.log_end_offset
        return [(base, end, size) for base, end, size in self._segments]

    def roll(self) -> bool:
        """Close the active segment if it holds anything."""
        self.segment_ranges()
        if self._segments[-1][2] == 0:
            return False
        self._segments.append([self.log_end_offset, self.log_end_offset, 0])
        return True

    def read_segment(self, base: int) -> list[tuple[int, bytes]]:
        """The batches of the segment starting at `base`."""
        for segment_base, end, _size in self._segments:
            if segment_base == base:
                first = bisect.bisect_left(self._bases, base)
                last = bisect.bisect_left(self._bases, end)
                return list(zip(self._bases[first:last], self._batches[first:last]))
        return []  # gone (retention or DeleteRecords removed it)

    def replace_segment(self, base: int, batches: list[tuple[int, int, bytes, int]]) -> bool:
        """What the cleaner kept of the closed segment at `base` (the same range of
        offsets); False when it is gone meanwhile."""
        for segment in self._segments[:-1]:
            if segment[0] == base:
                first = bisect.bisect_left(self._bases, base)
                last = bisect.bisect_left(self._bases, segment[1])
                self._bases[first:last] = [b for b, _, _, _ in batches]
                self._batches[first:last] = [batch for _, _, batch, _ in batches]
                segment[2] = sum(len(batch) + FRAME_SIZE for _, _, batch, _ in batches)
                return True
        return False

    def rewrite(self, batches: list[tuple[int, int, bytes, int]], log_start: int) -> MemoryBatches:
        self._batches = [batch for _, _, batch, _ in batches]
        self._bases = [base for base, _, _, _ in batches]
        self.log_start_offset = log_start
        self._segments = [[log_start, log_start, 0]]
        self._scanned = log_start
        return self

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass

    def delete(self) -> None:
        self._batches.clear()
        self._bases.clear()


class Partition:
    """One partition: its batch store plus the per-batch index timestamp lookups need."""

    def __init__(self, index: int, store: Any | None = None) -> None:
        self.index = index
        self.store = store if store is not None else MemoryBatches()
        self.base_offsets: list[int] = []
        self.max_timestamps: list[int] = []
        self.max_timestamp = -1
        self.max_timestamp_offset = -1
        self.cleaned_to = 0  # the log cleaner's checkpoint: what it cleaned last ends there
        if store is not None and store.log_end_offset > store.log_start_offset:
            self._rebuild_index()

    @functools.cached_property
    def producers(self) -> ProducerState:
        """Made at first use: most partitions never see an idempotent producer, and a broker
        starts with the 50 of __consumer_offsets."""
        return ProducerState()

    @property
    def log_start_offset(self) -> int:
        return self.store.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.store.log_end_offset

    @property
    def high_watermark(self) -> int:
        return self.store.log_end_offset

    @property
    def size_bytes(self) -> int:
        """What the partition's batches weigh in its store (DescribeLogDirs)."""
        return int(self.store.size_bytes)

    def move_log_start(self, offset: int) -> int:
        """Make `offset` the log start offset, durably where the store is on disk; returns the
        log start offset after (unchanged for an offset at or below it, as Kafka's
        `maybeIncrementLogStartOffset`). Batches wholly below it leave the index and may leave
        the store; the one holding it stays whole (fetches from the new start return it).
        Raises ValueError for an offset above the high watermark: the caller checks first."""
        if offset > self.high_watermark:
            raise ValueError(f"log start {offset} is above the high watermark "
                             f"{self.high_watermark}")
        if offset > self.log_start_offset:
            self.store.truncate_prefix(offset)
            self.trim_index(offset)
        return self.log_start_offset

    def trim_index(self, offset: int) -> None:
        """Drop the batches wholly below `offset` from the index (the store's log start
        moved there, as `move_log_start` or retention moved it)."""
        keep_from = (len(self.base_offsets) if offset >= self.log_end_offset
                     else max(0, bisect.bisect_right(self.base_offsets, offset) - 1))
        del self.base_offsets[:keep_from], self.max_timestamps[:keep_from]

    def largest_timestamp(self, base: int, end: int) -> int:
        """The largest timestamp of the batches in [base, end) (-1: none): how Kafka judges
        a segment's age."""
        first = bisect.bisect_left(self.base_offsets, base)
        last = bisect.bisect_left(self.base_offsets, end)
        return max(self.max_timestamps[first:last], default=-1)

    def reindex(self, base: int, end: int, batches: list[tuple[int, int, bytes, int]]) -> None:
        """The index of [base, end) after the cleaner replaced its batches by `batches`."""
        first = bisect.bisect_left(self.base_offsets, base)
        last = bisect.bisect_left(self.base_offsets, end)
        start = self.log_start_offset
        held = [(b, ts) for b, delta, _batch, ts in batches if b + delta >= start]
        self.base_offsets[first:last] = [b for b, _ in held]
        self.max_timestamps[first:last] = [ts for _, ts in held]

    def _rebuild_index(self) -> None:
        offset = self.store.log_start_offset
        end = self.store.log_end_offset
        while offset < end:
            chunk = self.store.read(offset, 16 * 1024 * 1024)
            if not chunk:
                break
            for base, batch in chunk:
                info = next(iter_batches(batch))
                self._index(base, info)
                self.producers.replay(base, batch, batch_producer(batch),
                                      info.last_offset_delta + 1, info.max_timestamp)
                offset = base + info.last_offset_delta + 1

    def _index(self, base: int, info: BatchInfo) -> None:
        self.base_offsets.append(base)
        self.max_timestamps.append(info.max_timestamp)
        if info.max_timestamp > self.max_timestamp:
            self.max_timestamp = info.max_timestamp
            self.max_timestamp_offset = base + info.last_offset_delta

    def append(self, batch: bytes, info: BatchInfo) -> int:
        """Append one batch; returns the base offset assigned to it."""
        base = self.store.log_end_offset
        self.store.append(base, info.last_offset_delta, with_base_offset(batch, base),
                          info.max_timestamp)
        self._index(base, info)
        return base

    def rewrite(self, batches: list[tuple[int, int, bytes, int]], log_start: int) -> None:
        """Replace the batches by `batches` (base, last offset delta, bytes, max timestamp)
        from `log_start` on, as compaction leaves them; offsets stay where they were."""
        self.store = self.store.rewrite(batches, log_start)
        self.base_offsets, self.max_timestamps = [], []
        self.max_timestamp = self.max_timestamp_offset = -1
        for base, last_delta, _batch, max_ts in batches:
            self.base_offsets.append(base)
            self.max_timestamps.append(max_ts)
            if max_ts > self.max_timestamp:
                self.max_timestamp, self.max_timestamp_offset = max_ts, base + last_delta

    def append_produced(self, batch: bytes, info: BatchInfo) -> tuple[int, int, int]:
        """Append a produced batch after the idempotence checks: (error, base offset, log
        append time to answer).

        A retried batch (same producer, epoch and sequences as one of its last five) is
        not appended again: it is answered with the offset it got the first time and, as
        Kafka answers a duplicate, its timestamp as the log append time."""
        if not has_producer_id(batch):
            return ErrorCode.NONE, self.append(batch, info), -1
        producer = batch_producer(batch)
        count = info.last_offset_delta + 1
        error, duplicate = self.producers.check(producer, count)
        if error:
            return error, -1, -1
        if duplicate is not None:
            return ErrorCode.NONE, duplicate[0], duplicate[1]
        base = self.append(batch, info)
        self.producers.appended(producer, count, base, info.max_timestamp)
        return ErrorCode.NONE, base, -1

    def write_marker(self, producer_id: int, epoch: int, commit: bool, now_ms: int,
                     only_open: bool = False) -> bool:
        """Append a commit or abort marker of the producer's transaction, which ends it here
        (as Kafka, a partition of the transaction gets one even if nothing was written to
        it); with `only_open`, only where the producer's transaction is still open. False
        when nothing was written."""
        if only_open and not self.producers.has_ongoing(producer_id):
            return False
        batch = control_batch(producer_id, epoch, commit, now_ms)
        base = self.append(batch, next(iter_batches(batch)))
        self.producers.marker(producer_id, epoch, commit, base, now_ms)
        return True

    @property
    def last_stable_offset(self) -> int:
        return self.producers.last_stable_offset(self.store.log_end_offset)

    def read(self, offset: int, max_bytes: int, upto: int | None = None) -> list[bytes]:
        """Whole batches from the one holding `offset`; at least one batch (KIP-74); only
        batches that start below `upto` when given (read_committed stops at the LSO)."""
        if upto is None:
            return [b for _base, b in self.store.read(offset, max_bytes)]
        return [b for base, b in self.store.read(offset, max_bytes) if base < upto]

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int]:
        """(offset, timestamp) of the first record with timestamp >= target, or (-1, -1)."""
        for i, max_ts in enumerate(self.max_timestamps):
            if max_ts < timestamp:
                continue
            base = self.base_offsets[i]
            if base < self.log_start_offset:
                continue
            batch = self.store.read(base, 1)[0][1]
            if batch[22] & 0x07 == 0:  # attributes low byte: uncompressed
                for delta, ts in record_timestamps(batch):
                    if ts >= timestamp:
                        return base + delta, ts
            return base, max_ts
        return -1, -1


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, str] = field(default_factory=dict)


class TopicRegistry:
    """All topics by name and by id; the single place topics are created or removed."""

    def __init__(self, open_store: Callable[[uuid.UUID, int], Any] | None = None) -> None:
        self.by_name: dict[str, Topic] = {}
        self.by_id: dict[uuid.UUID, Topic] = {}
        self._open_store = open_store  # None: partitions kept in memory
        self.version = 0  # bumped on every change, so cached metadata knows it is stale

    def get(self, name: str) -> Topic | None:
        return self.by_name.get(name)

    def _partition(self, topic_id: uuid.UUID, index: int) -> Partition:
        open_store = self._open_store
        return Partition(index) if open_store is None else Partition(index, open_store(topic_id, index))

    def create(self, name: str, partitions: int, configs: dict[str, str] | None = None,
               topic_id: uuid.UUID | None = None) -> Topic:
        self.version += 1
        topic_id = topic_id or uuid.uuid4()
        topic = Topic(name, topic_id, [self._partition(topic_id, i) for i in range(partitions)],
                      dict(configs or {}))
        self.by_name[name] = topic
        self.by_id[topic.topic_id] = topic
        return topic

    def delete(self, name: str) -> Topic | None:
        self.version += 1
        topic = self.by_name.pop(name, None)
        if topic is not None:
            self.by_id.pop(topic.topic_id, None)
            for partition in topic.partitions:
                partition.store.delete()
        return topic

    def close(self) -> None:
        for topic in self.by_name.values():
            for partition in topic.partitions:
                partition.store.sync()
                partition.store.close()

    def apply(self, record: Any) -> None:
        """Fold a topic record (TopicKey -> TopicValue or tombstone) into the registry."""
        name = record.key.name
        value = record.value
        if value is None:
            self.delete(name)
            return
        topic = self.by_name.get(name)
        if topic is None:
            self.create(name, value.partitions, value.configs, uuid.UUID(bytes=value.topic_id))
        else:
            topic.configs = dict(value.configs)
            self.version += 1
            self.add_partitions(name, value.partitions)

    def add_partitions(self, name: str, count: int) -> None:
        self.version += 1
        topic = self.by_name[name]
        for i in range(len(topic.partitions), count):
            topic.partitions.append(self._partition(topic.topic_id, i))

    # TopicLookup protocol used by the group coordinator
    def partition_count(self, name: str) -> int | None:
        topic = self.by_name.get(name)
        return None if topic is None else len(topic.partitions)

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        topic = self.by_id.get(topic_id)
        return None if topic is None else topic.name

    def topic_id(self, name: str) -> uuid.UUID | None:
        topic = self.by_name.get(name)
        return None if topic is None else topic.topic_id

    def end_offset(self, name: str, partition: int) -> int | None:
        topic = self.by_name.get(name)
        if topic is None or not 0 <= partition < len(topic.partitions):
            return None
        return topic.partitions[partition].log_end_offset

    def topic_names(self) -> list[str]:
        """Every topic name (what KIP-848 regex subscriptions match against)."""
        return list(self.by_name)
