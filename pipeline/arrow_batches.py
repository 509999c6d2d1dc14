"""Segments turned into Arrow record batches: what the data source's workers yield.

Building columns in Python lists and handing them to Arrow once per batch is
the fast path of PySpark's Python data sources (no per-row conversion on the
JVM side). Each function reads one segment file.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pyarrow as pa

from kcsim.storage import StorageError, judge_segment

from .columns import LEADING, TIMESTAMP, timestamps
from .meta_log import SegmentRead, decoded_records, raw_records
from .partition_data import (
    PartitionSegment,
    read_partition_segment,
    segment_records,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from kcsim.storage import SegmentPlace

    from .columns import RecordColumns
    from .meta_log import Tear

BATCH_ROWS = 32_768

log = logging.getLogger("kcsim.pipeline")

RAW_SCHEMA = pa.schema([
    pa.field("segment", pa.int64(), nullable=False),
    pa.field("position", pa.int64(), nullable=False),
    pa.field("timestamp_ms", pa.int64(), nullable=False),
    pa.field("type_id", pa.int32(), nullable=False),
    pa.field("version", pa.int32(), nullable=False),
    pa.field("tombstone", pa.bool_(), nullable=False),
    pa.field("key", pa.binary(), nullable=False),
    pa.field("value", pa.binary()),
])

# The columns of Spark's own Kafka source, in its order.
MESSAGE_SCHEMA = pa.schema([
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("topic", pa.string(), nullable=False),
    pa.field("partition", pa.int32(), nullable=False),
    pa.field("offset", pa.int64(), nullable=False),
    pa.field("timestamp", TIMESTAMP, nullable=False),
    pa.field("timestampType", pa.int32(), nullable=False),
    pa.field("headers", pa.list_(pa.struct([pa.field("key", pa.string()),
                                            pa.field("value", pa.binary())]))),
])

SEGMENT_SCHEMA = pa.schema([
    pa.field("log", pa.string(), nullable=False),  # "meta", or "<topic>/<partition>"
    pa.field("path", pa.string(), nullable=False),
    pa.field("base", pa.int64(), nullable=False),
    pa.field("records", pa.int64()),  # records (meta) or batches (partition data) read
    pa.field("valid_bytes", pa.int64()),
    pa.field("file_bytes", pa.int64()),
    pa.field("torn", pa.bool_(), nullable=False),  # a torn tail: the read stopped there
    pa.field("problem", pa.string()),  # why the read stopped early, or failed
    pa.field("problem_position", pa.int64()),
])


def warn_tear(tear: Tear | None) -> None:
    if tear is not None:
        log.warning("torn tail in %s at byte %d (%s): the read stops there, %d bytes left out",
                    tear.path, tear.position, tear.reason, tear.dropped_bytes)


def record_batches(segment: SegmentPlace, columns: RecordColumns,
                   groups: frozenset[str] | None = None,
                   topics: frozenset[str] | None = None,
                   record_types: frozenset[str] | None = None) -> Iterator[pa.RecordBatch]:
    """The ``records`` view of one segment: decoded and flattened, in log order.

    Only records of ``record_types`` (names) are decoded when given; ``groups`` and
    ``topics`` keep the records whose key has that group or topic.
    """
    from .registry import record_types as registry

    wanted = None if record_types is None else frozenset(
        t.id for t in registry() if t.name in record_types)
    read = SegmentRead(segment)
    positions: list[int] = []
    stamps: list[int] = []
    keys: list[object] = []
    values: list[object] = []
    for position, timestamp, record in decoded_records(segment, read, wanted=wanted):
        key = record.key
        if groups is not None and getattr(key, "group", None) not in groups:
            continue
        if topics is not None and getattr(key, "topic", None) not in topics:
            continue
        positions.append(position)
        stamps.append(timestamp)
        keys.append(key)
        values.append(record.value)
        if len(keys) == BATCH_ROWS:
            yield _columns_batch(columns, segment.base, positions, stamps, keys, values)
            positions, stamps, keys, values = [], [], [], []
    if keys:
        yield _columns_batch(columns, segment.base, positions, stamps, keys, values)
    warn_tear(read.tear)


def _columns_batch(columns: RecordColumns, base: int, positions: list[int], stamps: list[int],
                   keys: list[object], values: list[object]) -> pa.RecordBatch:
    """Rows to columns, a column at a time: a column no record here fills is all
    nulls, and one that a single record type fills is one comprehension."""
    n = len(keys)
    key_types = [type(k) for k in keys]
    present = set(key_types)
    plans = columns.plans
    arrays: list[pa.Array] = [
        pa.array([base] * n, pa.int64()),
        pa.array(positions, pa.int64()),
        timestamps(stamps),
        pa.array([plans[t][0] for t in key_types], pa.string()),
        pa.array([v is None for v in values], pa.bool_()),
    ]
    for index, field in enumerate(columns.schema):
        if index < len(LEADING):
            continue
        here = {t: f for t, f in columns.by_column[index].items() if t in present}
        if not here:
            arrays.append(pa.nulls(n, field.type))
            continue
        data: list[object]
        if len(present) == 1:
            ((part, attr, convert),) = here.values()
            if part == 0:
                data = [getattr(x, attr) for x in keys]
            else:
                data = [None if x is None else getattr(x, attr) for x in values]
            if convert is not None:
                data = [None if v is None else convert(v) for v in data]
        else:
            data = [None] * n
            for i, (key_type, key, value) in enumerate(zip(key_types, keys, values)):
                filler = here.get(key_type)
                if filler is None:
                    continue
                part, attr, convert = filler
                owner = key if part == 0 else value
                if owner is None:
                    continue
                v = getattr(owner, attr)
                data[i] = v if convert is None or v is None else convert(v)
        arrays.append(pa.array(data, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=columns.schema)


def raw_batches(segment: SegmentPlace) -> Iterator[pa.RecordBatch]:
    """The ``raw`` view of one segment: each record's type id, version and encoded key and value."""
    read = SegmentRead(segment)
    rows = raw_records(segment, read)
    base = segment.base
    while True:
        chunk = [row for _, row in zip(range(BATCH_ROWS), rows)]
        if not chunk:
            break
        positions, timestamps, type_ids, versions, keys, values = zip(*chunk)
        yield pa.RecordBatch.from_arrays([
            pa.array([base] * len(chunk), pa.int64()),
            pa.array(positions, pa.int64()),
            pa.array(timestamps, pa.int64()),
            pa.array(type_ids, pa.int32()),
            pa.array(versions, pa.int32()),
            pa.array([v is None for v in values], pa.bool_()),
            pa.array(keys, pa.binary()),
            pa.array(values, pa.binary()),
        ], schema=RAW_SCHEMA)
    warn_tear(read.tear)


def message_batches(segment: PartitionSegment, partitions: frozenset[int] | None = None,
                    ) -> Iterator[pa.RecordBatch]:
    """The ``messages`` view of one partition segment, in offset order."""
    if partitions is not None and segment.partition not in partitions:
        return
    found, tear = read_partition_segment(segment)
    rows = segment_records(found, segment.log_start_offset)
    while True:
        chunk = [row for _, row in zip(range(BATCH_ROWS), rows)]
        if not chunk:
            break
        n = len(chunk)
        yield pa.RecordBatch.from_arrays([
            pa.array([r.key for r, _ in chunk], pa.binary()),
            pa.array([r.value for r, _ in chunk], pa.binary()),
            pa.array([segment.topic] * n, pa.string()),
            pa.array([segment.partition] * n, pa.int32()),
            pa.array([r.offset for r, _ in chunk], pa.int64()),
            timestamps([r.timestamp for r, _ in chunk]),
            pa.array([t for _, t in chunk], pa.int32()),
            pa.array([r.headers or None for r, _ in chunk], MESSAGE_SCHEMA.field("headers").type),
        ], schema=MESSAGE_SCHEMA)
    warn_tear(tear)


def meta_segment_row(segment: SegmentPlace) -> dict[str, object]:
    """What reading one record-log segment finds, damage included (never raises for it)."""
    from .registry import record_types

    verdict = judge_segment(segment, record_types()).verdict
    problem: str | None = None
    position: int | None = None
    if verdict.damage is not None:
        problem, position = verdict.damage.reason, verdict.damage.position
    elif verdict.torn_tail is not None:
        problem, position = verdict.torn_tail, verdict.valid_bytes
    return {"log": "meta", "path": segment.path, "base": segment.base,
            "records": verdict.records, "valid_bytes": verdict.valid_bytes,
            "file_bytes": verdict.file_bytes, "torn": verdict.torn_tail is not None,
            "problem": problem, "problem_position": position}


def partition_segment_row(segment: PartitionSegment) -> dict[str, object]:
    """What reading one partition segment finds (never raises for damage)."""
    row: dict[str, object] = {"log": f"{segment.topic}/{segment.partition}", "path": segment.path,
                              "base": segment.base, "torn": False, "records": None,
                              "valid_bytes": None, "file_bytes": None, "problem": None,
                              "problem_position": None}
    try:
        found, tear = read_partition_segment(segment)
    except StorageError as exc:
        row["problem"] = getattr(exc, "reason", str(exc))
        row["problem_position"] = getattr(exc, "position", None)
        return row
    row.update(records=len(found.batches), valid_bytes=found.valid_bytes,
               file_bytes=found.file_bytes)
    if tear is not None:
        row.update(torn=True, problem=tear.reason, problem_position=tear.position)
    return row
