"""Topics and their partitions: names, ids, configs and the in-memory data plane.

A partition keeps the record batches it was given (rewritten only in their base
offset), an index of base offsets for fetches from any offset, the log start
offset and the high watermark (single replica: the log end offset).
"""

from __future__ import annotations

import bisect
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from protocol.record_batch import BatchInfo, record_timestamps, with_base_offset

MAX_TOPIC_NAME = 249
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


@dataclass
class Partition:
    index: int
    batches: list[bytes] = field(default_factory=list)
    base_offsets: list[int] = field(default_factory=list)
    max_timestamps: list[int] = field(default_factory=list)
    log_start_offset: int = 0
    log_end_offset: int = 0
    size_bytes: int = 0
    max_timestamp: int = -1
    max_timestamp_offset: int = -1

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    def append(self, batch: bytes, info: BatchInfo) -> int:
        """Append one batch; returns the base offset assigned to it."""
        base = self.log_end_offset
        self.batches.append(with_base_offset(batch, base))
        self.base_offsets.append(base)
        self.max_timestamps.append(info.max_timestamp)
        self.log_end_offset = base + info.last_offset_delta + 1
        self.size_bytes += info.size
        if info.max_timestamp > self.max_timestamp:
            self.max_timestamp = info.max_timestamp
            self.max_timestamp_offset = base + info.last_offset_delta
        return base

    def read(self, offset: int, max_bytes: int) -> list[bytes]:
        """Whole batches from the one holding `offset`; at least one batch (KIP-74)."""
        i = bisect.bisect_right(self.base_offsets, offset) - 1
        if i < 0:
            i = 0
        out: list[bytes] = []
        total = 0
        batches = self.batches
        while i < len(batches):
            b = batches[i]
            if out and total + len(b) > max_bytes:
                break
            out.append(b)
            total += len(b)
            i += 1
        return out

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int]:
        """(offset, timestamp) of the first record with timestamp >= target, or (-1, -1)."""
        for i, max_ts in enumerate(self.max_timestamps):
            if max_ts < timestamp:
                continue
            batch = self.batches[i]
            base = self.base_offsets[i]
            if batch[21 + 1] & 0x07 == 0:  # attributes low byte: uncompressed
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

    def config_value(self, key: str) -> str | None:
        return self.configs.get(key, DEFAULT_TOPIC_CONFIGS.get(key))


class TopicRegistry:
    """All topics by name and by id; the single place topics are created or removed."""

    def __init__(self, on_change: Callable[[str], None] | None = None) -> None:
        self.by_name: dict[str, Topic] = {}
        self.by_id: dict[uuid.UUID, Topic] = {}
        self._on_change = on_change

    def get(self, name: str) -> Topic | None:
        return self.by_name.get(name)

    def create(self, name: str, partitions: int, configs: dict[str, str] | None = None,
               topic_id: uuid.UUID | None = None) -> Topic:
        topic = Topic(name, topic_id or uuid.uuid4(), [Partition(i) for i in range(partitions)],
                      dict(configs or {}))
        self.by_name[name] = topic
        self.by_id[topic.topic_id] = topic
        return topic

    def delete(self, name: str) -> Topic | None:
        topic = self.by_name.pop(name, None)
        if topic is not None:
            self.by_id.pop(topic.topic_id, None)
        return topic

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
            self.add_partitions(name, value.partitions)

    def add_partitions(self, name: str, count: int) -> None:
        topic = self.by_name[name]
        for i in range(len(topic.partitions), count):
            topic.partitions.append(Partition(i))

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
