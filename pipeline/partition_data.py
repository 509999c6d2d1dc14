"""The produced data under ``<data-dir>/partitions/<topic id hex>/<partition>/``, as records.

Each segment file is read on its own (one Spark partition each): its frames
are CRC-checked and walked as ``PartitionLog.open`` walks them, and its Kafka
batches are decoded, inflated with the batch's codec. Control batches
(transaction markers) are skipped, as consumers skip them; offsets before the
partition's log start offset are left out, as a fetch would. A torn tail of a
partition's newest segment ends the read and is reported; other damage raises.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kcsim.protocol.compression import decompress
from kcsim.protocol.record_batch import batch_header, batch_records
from kcsim.storage import (
    SEGMENT_SUFFIX,
    CorruptLogError,
    SegmentBatches,
    read_log_start_offset,
    read_segment_batches,
)

from .meta_log import Tear

if TYPE_CHECKING:
    from collections.abc import Iterator

    from kcsim.protocol.record_batch import KafkaRecord


@dataclass(frozen=True)
class PartitionSegment:
    """One segment file of one topic partition, as planned."""

    topic: str
    partition: int
    path: str
    base: int
    is_last: bool
    next_base: int | None
    log_start_offset: int


def partitions_dir(data_dir: str | os.PathLike[str]) -> str:
    return os.path.join(os.fspath(data_dir), "partitions")


def plan_partition_segments(data_dir: str | os.PathLike[str], topic_names: dict[bytes, str],
                            topics: set[str] | None = None,
                            partitions: set[int] | None = None) -> list[PartitionSegment]:
    """Every segment file of every partition (of ``topics`` / ``partitions`` when given).

    A topic directory the record log has no name for (a topic deleted while
    its files remain) is shown under its id in hex.
    """
    root = partitions_dir(data_dir)
    if not os.path.isdir(root):
        return []
    planned = []
    for topic_hex in sorted(os.listdir(root)):
        try:
            topic = topic_names.get(bytes.fromhex(topic_hex), topic_hex)
        except ValueError:
            continue
        if topics is not None and topic not in topics:
            continue
        topic_dir = os.path.join(root, topic_hex)
        if not os.path.isdir(topic_dir):
            continue
        for name in os.listdir(topic_dir):
            if not name.isdigit() or (partitions is not None and int(name) not in partitions):
                continue
            directory = os.path.join(topic_dir, name)
            bases = sorted(
                int(f[: -len(SEGMENT_SUFFIX)]) for f in os.listdir(directory)
                if f.endswith(SEGMENT_SUFFIX) and f[: -len(SEGMENT_SUFFIX)].isdigit()
            )
            start = read_log_start_offset(directory)
            for i, base in enumerate(bases):
                path = os.path.join(directory, f"{base:020d}{SEGMENT_SUFFIX}")
                following = bases[i + 1] if i + 1 < len(bases) else None
                planned.append(PartitionSegment(topic, int(name), path, base,
                                                following is None, following, start))
    planned.sort(key=lambda s: (s.topic, s.partition, s.base))
    return planned


def read_partition_segment(segment: PartitionSegment) -> tuple[SegmentBatches, Tear | None]:
    """The segment's valid batches and its torn tail, if any; raises for other damage."""
    found = read_segment_batches(segment.path, segment.base)
    tear = None
    if found.damage is not None:
        position, reason = found.damage
        if not (segment.is_last and found.torn):
            raise CorruptLogError(segment.path, position, reason)
        tear = Tear(segment.path, position, reason, found.file_bytes - position)
    elif segment.next_base is not None and segment.next_base != found.end_offset:
        what = "missing segment" if segment.next_base > found.end_offset else "overlapping segment"
        raise CorruptLogError(segment.path, found.valid_bytes,
                              f"{what}: expected offset {found.end_offset}, "
                              f"found {segment.next_base}")
    return found, tear


def segment_records(found: SegmentBatches, log_start_offset: int,
                    ) -> Iterator[tuple[KafkaRecord, int]]:
    """(record, timestamp type: 0 create time, 1 log append time) of the data batches."""
    for base, batch in found.batches:
        header = batch_header(batch)
        if header.is_control:
            continue
        timestamp_type = 1 if header.log_append_time else 0
        for record in batch_records(batch, base, decompress):
            if record.offset >= log_start_offset:
                yield record, timestamp_type
