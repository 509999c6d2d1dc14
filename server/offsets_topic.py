"""`__consumer_offsets`: the coordinator's records as a Kafka topic lag monitors can read.

Built as a log written beside kcsim's own record log, not as a view computed
over it: the record log keeps one global order and its compaction renumbers
the records of a segment, so per-partition offsets derived from it could not
be both dense and stable across restarts. The topic is an ordinary internal
topic of the broker (its partitions are partition logs like any topic's, so
Fetch, ListOffsets and long polls serve it unchanged); every record the
coordinator makes durable is appended to it, in Kafka's format
(`kcsim.coordinator.kafka_format`), once the writer has made it durable and
in the writer's order, so a reader never sees a change kcsim could still lose.

Consistency over restarts: a clean stop leaves a mark with the record log's
end; a start that finds the mark matching its log knows the topic holds every
durable record. Any other start (a crash between the two appends, a lost mark)
compares the topic's newest value of each key with the replayed state and
appends what differs, tombstones included, so readers see the durable state
again with offsets only ever growing.
"""

from __future__ import annotations

import functools
import logging
import os
import uuid
from typing import TYPE_CHECKING, Any

from kcsim.coordinator.kafka_format import (
    OFFSETS_TOPIC,
    kafka_record,
    partition_for,
    record_timestamp,
)
from kcsim.protocol.record_batch import batch_records, encode_batch

from .topic_records import TopicKey, TopicValue

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from kcsim.storage import Record

    from .topics import Topic, TopicRegistry

log = logging.getLogger("kcsim.offsets_topic")

# What Kafka gives __consumer_offsets (GroupCoordinatorConfig), shown by DescribeConfigs.
OFFSETS_TOPIC_CONFIGS: dict[str, str] = {
    "cleanup.policy": "compact",
    "compression.type": "producer",
    "segment.bytes": "104857600",
}
CLEAN_MARK = "offsets-topic.clean"
_READ_CHUNK = 16 * 1024 * 1024


def is_internal(name: str | None) -> bool:
    """Whether a topic is one the broker writes itself (clients may read, never write)."""
    return name == OFFSETS_TOPIC


def topic_record(partitions: int) -> Record:
    """The topic record that creates `__consumer_offsets` (once, at the first start)."""
    from kcsim.storage import Record

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

    def append(self, records: Sequence[Record]) -> None:
        """Append durable records: one batch per partition they fall in, then wake fetches."""
        by_partition: dict[int, list[tuple[bytes | None, bytes | None, int]]] = {}
        now = None
        version = self.offset_value_version
        for record in records:
            kafka = kafka_record(record, version)
            if kafka is None:
                continue
            group, key, value = kafka
            ts = record_timestamp(record)
            if ts is None:
                ts = now = self._now_ms() if now is None else now
            by_partition.setdefault(self._partition_of(group), []).append((key, value, ts))
        if by_partition:
            self._write(by_partition)

    def _write(self, by_partition: dict[int, list[tuple[bytes | None, bytes | None, int]]]) -> None:
        for index, entries in by_partition.items():
            partition = self.topic.partitions[index]
            batch, info = encode_batch(partition.log_end_offset, entries)
            partition.append(batch, info)
        self._data_arrived()

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
            offset = partition.log_start_offset
            while offset < partition.log_end_offset:
                chunks = partition.store.read(offset, _READ_CHUNK)
                if not chunks:
                    break
                for base, batch in chunks:
                    for rec in batch_records(batch, base, _no_compression):
                        if rec.key is not None:
                            out[rec.key] = (partition.index, rec.value)
                        offset = rec.offset + 1
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


def take_clean_mark(data_dir: str) -> int | None:
    """The record log end a clean stop left, removing the mark (a crash must not find it)."""
    path = os.path.join(data_dir, CLEAN_MARK)
    try:
        with open(path) as f:
            text = f.read().strip()
        os.unlink(path)
    except OSError:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def leave_clean_mark(data_dir: str, log_end: int) -> None:
    """Say the topic holds every record up to the record log's `log_end` (a clean stop)."""
    path = os.path.join(data_dir, CLEAN_MARK)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{log_end}\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
