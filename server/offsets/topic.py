"""`__consumer_offsets`: the coordinator's records as a Kafka topic lag monitors can read.

Built as a log written beside kcsim's own record log, not as a view computed
over it: the record log keeps one global order and its compaction renumbers
the records of a segment, so per-partition offsets derived from it could not
be both dense and stable across restarts. The topic is an ordinary internal
topic of the broker (its partitions are partition logs like any topic's, so
Fetch, ListOffsets and long polls serve it unchanged); once a client has read it
(`activation`), every record the coordinator makes durable is appended to
it, in Kafka's format
(`kcsim.coordinator.kafka_format`), once the writer has made it durable and
in the writer's order, so a reader never sees a change kcsim could still lose.
Each compaction of the record log compacts the topic too, a partition at a time
(:meth:`OffsetsTopic.run_compactions`).

What a start does to bring the topic up to date with the replayed log is in
`checkpoint`; this module appends, catches up, resyncs and compacts.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any

import trio
import trio.lowlevel

from kcsim.coordinator.kafka_format import (
    OFFSETS_TOPIC,
    kafka_record,
    offset_commit,
    partition_for,
    record_timestamp,
)
from kcsim.coordinator.records import OffsetCommitKey
from kcsim.protocol.record_batch import KafkaRecord, batch_records, encode_batch
from kcsim.storage import Record

from ..state.topic_records import TopicKey, TopicValue

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from ..state.topics import Topic, TopicRegistry

log = logging.getLogger("kcsim.offsets_topic")

# What Kafka gives __consumer_offsets (GroupCoordinatorConfig), shown by DescribeConfigs.
OFFSETS_TOPIC_CONFIGS: dict[str, str] = {
    "cleanup.policy": "compact",
    "compression.type": "producer",
    "segment.bytes": "104857600",
}
COMPACTED_BATCH_RECORDS = 1000
_READ_CHUNK = 16 * 1024 * 1024
_YIELD_AFTER_S = 0.001  # work of a worker thread between two offers of the GIL


def is_internal(name: str | None) -> bool:
    """Whether a topic is one the broker writes itself (clients may read, never write)."""
    return name == OFFSETS_TOPIC


def topic_record(partitions: int) -> Record:
    """The topic record that creates `__consumer_offsets` (once, at the first start)."""
    return Record(TopicKey(OFFSETS_TOPIC),
                  TopicValue(uuid.uuid4().bytes, partitions, dict(OFFSETS_TOPIC_CONFIGS)))


class OffsetsTopic:
    """Appends the coordinator's durable records to `__consumer_offsets`."""

    def __init__(self, topic: Topic, now_ms: Callable[[], int],
                 data_arrived: Callable[[], object], offset_value_version: int = 4) -> None:
        self.topic = topic
        self.offset_value_version = offset_value_version
        self.partitions = len(topic.partitions)
        self._now_ms = now_ms
        self._data_arrived = data_arrived
        self._partition_of = functools.lru_cache(maxsize=1 << 16)(
            functools.partial(_partition, partitions=self.partitions))
        self._compaction = (0, 0)
        self._compaction_wanted = trio.Event()
        # Without a record log to follow (--in-memory) the topic compacts itself once it
        # has grown by this many records, and by twice what it kept after that.
        self.compact_every: int | None = None
        self.tombstone_retention_ms = 0
        self._appended = 0
        self._kept = 0

    def append(self, records: Sequence[Record]) -> None:
        """Append durable records: one batch per partition they fall in, then wake fetches."""
        by_partition = self._encode(records)
        if by_partition:
            self._write(by_partition)

    def _write(self, by_partition: dict[int, list[tuple[bytes | None, bytes | None, int]]]) -> None:
        for index, entries in by_partition.items():
            partition = self.topic.partitions[index]
            batch, info = encode_batch(partition.log_end_offset, entries)
            partition.append(batch, info)
            self._appended += len(entries)
        self._data_arrived()
        every = self.compact_every
        if every is not None and self._appended >= max(every, 2 * self._kept):
            self._appended = 0
            self.compaction_due(self._now_ms(), self.tombstone_retention_ms)

    def catch_up(self, tail: Sequence[Record], ends: Sequence[int]) -> int | None:
        """Append the records of `tail` (the record log after a checkpoint whose end offsets
        were `ends`) that the topic does not show yet; how many, or None when what it shows
        past `ends` is not the start of `tail` (then only a resync can tell)."""
        if len(ends) != self.partitions:
            return None
        wanted = self._encode(tail)
        missing: dict[int, list[tuple[bytes | None, bytes | None, int]]] = {}
        for index, partition in enumerate(self.topic.partitions):
            if not partition.log_start_offset <= ends[index] <= partition.log_end_offset:
                return None
            shown = self._records(partition, ends[index])
            entries = wanted.get(index, [])
            if len(shown) > len(entries) or any(
                    (r.key, r.value) != entries[i][:2] for i, r in enumerate(shown)):
                return None
            if len(entries) > len(shown):
                missing[index] = entries[len(shown):]
        if missing:
            self._write(missing)
        return sum(len(v) for v in missing.values())

    def _encode(self, records: Sequence[Record]
                ) -> dict[int, list[tuple[bytes | None, bytes | None, int]]]:
        by_partition: dict[int, list[tuple[bytes | None, bytes | None, int]]] = {}
        now = None
        version = self.offset_value_version
        partition_of = self._partition_of
        for record in records:
            key = record.key
            if type(key) is OffsetCommitKey and record.value is not None:  # most records
                body, value = offset_commit(key, record.value, version)
                entry = (body, value, record.value.commit_timestamp)
                by_partition.setdefault(partition_of(key.group), []).append(entry)
                continue
            kafka = kafka_record(record, version)
            if kafka is None:
                continue
            group, body, value = kafka
            ts = record_timestamp(record)
            if ts is None:
                ts = now = self._now_ms() if now is None else now
            by_partition.setdefault(partition_of(group), []).append((body, value, ts))
        return by_partition

    def sync(self) -> None:
        for partition in self.topic.partitions:
            partition.store.sync()

    def compaction_due(self, now_ms: int, tombstone_retention_ms: int) -> None:
        """The writer's `on_compacted`: kcsim's log was compacted, so compact the topic, one
        partition at a time (:meth:`run_compactions`)."""
        self._compaction = (now_ms, tombstone_retention_ms)
        self._compaction_wanted.set()

    async def run_compactions(self) -> None:
        """Compact the topic whenever kcsim's log was: a partition per step, letting every
        other task run between two, so no request waits for more than one partition."""
        while True:
            await self._compaction_wanted.wait()
            self._compaction_wanted = trio.Event()
            now_ms, retention_ms = self._compaction
            for partition in self.topic.partitions:
                if self.compact_partition(partition, now_ms, retention_ms):
                    self._data_arrived()  # fetches waiting at an offset now gone answer
                await trio.lowlevel.checkpoint()
            self._kept = sum(p.log_end_offset - p.log_start_offset for p in self.topic.partitions)

    def compact_partition(self, partition: Any, now_ms: int, tombstone_retention_ms: int) -> int:
        """Keep each key's newest record, and tombstones younger than the retention; the
        log start moves to the first record kept. Offsets stay, batches keep the ranges of
        what they dropped. Returns how many records were dropped."""
        records = self._records(partition, partition.log_start_offset)
        newest = {r.key: i for i, r in enumerate(records)}
        kept = [r for i, r in enumerate(records) if newest[r.key] == i and not (
            r.value is None and r.timestamp < now_ms - tombstone_retention_ms)]
        if len(kept) == len(records):
            return 0
        end = partition.log_end_offset
        batches = []
        for first in range(0, len(kept), COMPACTED_BATCH_RECORDS):
            run = kept[first:first + COMPACTED_BATCH_RECORDS]
            base = run[0].offset
            after = (kept[first + COMPACTED_BATCH_RECORDS].offset
                     if first + COMPACTED_BATCH_RECORDS < len(kept) else end)
            batch, info = encode_batch(base, [(r.key, r.value, r.timestamp) for r in run],
                                       [r.offset - base for r in run], after - 1 - base)
            batches.append((base, info.last_offset_delta, batch, info.max_timestamp))
        partition.rewrite(batches, kept[0].offset if kept else end)
        return len(records) - len(kept)

    def ends(self) -> list[int]:
        return [p.log_end_offset for p in self.topic.partitions]

    def resync(self, state: dict[bytes, tuple[str, bytes | None, int | None]]) -> int:
        """Append what the topic lacks of `state` (key -> group, newest value, timestamp):
        changed and missing keys, and tombstones for keys the state no longer has.
        Returns how many records were appended."""
        shown = self._newest_values()
        by_partition: dict[int, list[tuple[bytes | None, bytes | None, int]]] = {}
        now = self._now_ms()
        for key, (group, value, ts) in state.items():
            current = shown.pop(key, None)
            if (None if current is None else current[1]) != value:
                by_partition.setdefault(self._partition_of(group), []).append(
                    (key, value, now if ts is None else ts))
        for key, (index, value) in shown.items():  # keys the replayed log no longer has
            if value is not None:
                by_partition.setdefault(index, []).append((key, None, now))
        if by_partition:
            self._write(by_partition)
        return sum(len(v) for v in by_partition.values())

    def _newest_values(self) -> dict[bytes, Any]:
        """Each key's newest value in the topic as it is (key -> (partition, value))."""
        out: dict[bytes, Any] = {}
        for partition in self.topic.partitions:
            for rec in self._records(partition, partition.log_start_offset):
                if rec.key is not None:
                    out[rec.key] = (partition.index, rec.value)
        return out

    @staticmethod
    def _records(partition: Any, offset: int) -> list[KafkaRecord]:
        """The partition's records from `offset` to its end."""
        out: list[KafkaRecord] = []
        while offset < partition.log_end_offset:
            chunks = partition.store.read(offset, _READ_CHUNK)
            if not chunks:
                break
            for base, batch in chunks:
                for rec in batch_records(batch, base, _no_compression):
                    if rec.offset >= offset:
                        out.append(rec)
                last = base + int.from_bytes(batch[23:27], "big")  # lastOffsetDelta
                offset = max(offset, last + 1)
        return out


def _partition(group: str, partitions: int) -> int:
    return partition_for(group, partitions)


def _no_compression(codec: int, data: bytes) -> bytes:
    raise ValueError(f"__consumer_offsets holds only uncompressed batches, not codec {codec}")


class StateCollector:
    """The newest Kafka-format value of every coordinator key, folded from replayed records."""

    def __init__(self, offset_value_version: int = 4) -> None:
        self.state: dict[bytes, tuple[str, bytes | None, int | None]] = {}
        self.offset_value_version = offset_value_version

    def __call__(self, record: Record) -> None:
        kafka = kafka_record(record, self.offset_value_version)
        if kafka is not None:
            group, key, value = kafka
            self.state[key] = (group, value, record_timestamp(record))


def state_of(records: Iterable[Record], offset_value_version: int
             ) -> dict[bytes, tuple[str, bytes | None, int | None]]:
    """Each coordinator key's newest value among `records`, in Kafka's format, for
    :meth:`OffsetsTopic.resync`. Pure: a worker thread may run it."""
    collector = StateCollector(offset_value_version)
    yield_at = time.perf_counter() + _YIELD_AFTER_S
    for n, record in enumerate(records):
        collector(record)
        if not n & 63 and time.perf_counter() >= yield_at:
            time.sleep(0)  # hand over the GIL: the serving thread would wait up to 5 ms
            yield_at = time.perf_counter() + _YIELD_AFTER_S
    return collector.state


def ensure_topic(topics: TopicRegistry, partitions: int,
                 commit: Callable[[Sequence[Record]], None]) -> Topic:
    """`__consumer_offsets`, created at the first start; later starts keep its partition
    count whatever the setting says now, as Kafka does."""
    topic = topics.get(OFFSETS_TOPIC)
    if topic is None:
        record = topic_record(partitions)
        commit([record])
        topics.apply(record)
        topic = topics.get(OFFSETS_TOPIC)
        assert topic is not None
    elif len(topic.partitions) != partitions:
        log.warning("%s has %d partitions; offsets_topic_num_partitions=%d applies only "
                    "when the topic is created", OFFSETS_TOPIC, len(topic.partitions), partitions)
    return topic
