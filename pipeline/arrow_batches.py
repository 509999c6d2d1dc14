"""Segments turned into Arrow record batches: what the data source's workers yield.

Building columns in Python lists and handing them to Arrow once per batch is
the fast path of PySpark's Python data sources (no per-row conversion on the
JVM side). Each function reads one segment file.

The records view is the hot one (a coordinator log holds millions of records,
and the view has a column for every field of every record type). Its records
are gathered a frame at a time and each column is filled by one call over the
batch's keys or values, so the Python work per record is the decode and a few
C-level steps; the JVM's share is set by the column count (Spark turns every
batch into rows of all the view's columns, whatever the query reads).
"""

from __future__ import annotations

import logging
import operator
from itertools import repeat
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from kcsim.storage import StorageError, judge_segment

from .columns import LEADING, TIMESTAMP, timestamps
from .meta_log import SegmentRead, judged, raw_records
from .partition_data import (
    PartitionSegment,
    read_partition_segment,
    segment_records,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

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
    ``topics`` keep the records whose key has that group or topic. A frame's
    records are decoded in one call and gathered a frame at a time: no Python
    step runs once per record unless a filter asks for it.
    """
    from .registry import record_types as registry

    wanted = None if record_types is None else frozenset(
        t.id for t in registry() if t.name in record_types)
    read = SegmentRead(segment)
    found = judged(segment, read)
    positions: list[int] = []
    stamps: list[int] = []
    keys: list[object] = []
    values: list[object] = []
    for frame, pairs in found.frame_pairs(wanted):
        if groups is None and topics is None:
            positions.extend(range(frame.position, frame.position + len(pairs)))
        else:
            kept = [i for i, (key, _) in enumerate(pairs) if _selected(key, groups, topics)]
            if len(kept) < len(pairs):
                pairs = [pairs[i] for i in kept]
            positions.extend(frame.position + i for i in kept)
        stamps.extend(repeat(frame.timestamp_ms, len(pairs)))
        keys.extend(map(_KEY, pairs))
        values.extend(map(_VALUE, pairs))
        if len(keys) >= BATCH_ROWS:  # a batch of exactly BATCH_ROWS, the rest kept for the next
            yield _columns_batch(columns, segment.base, positions[:BATCH_ROWS],
                                 stamps[:BATCH_ROWS], keys[:BATCH_ROWS], values[:BATCH_ROWS])
            del positions[:BATCH_ROWS], stamps[:BATCH_ROWS], keys[:BATCH_ROWS]
            del values[:BATCH_ROWS]
    if keys:
        yield _columns_batch(columns, segment.base, positions, stamps, keys, values)
    warn_tear(read.tear)


_KEY = operator.itemgetter(0)
_VALUE = operator.itemgetter(1)


def _selected(key: object, groups: frozenset[str] | None, topics: frozenset[str] | None) -> bool:
    return ((groups is None or getattr(key, "group", None) in groups)
            and (topics is None or getattr(key, "topic", None) in topics))


def _columns_batch(columns: RecordColumns, base: int, positions: Sequence[int],
                   stamps: Sequence[int], keys: Sequence[object],
                   values: Sequence[object]) -> pa.RecordBatch:
    """Rows to columns, a column at a time, each with one call over a list.

    A column no record here fills is all nulls. With several record types in
    the batch, each type's rows are gathered on their own (a type's columns are
    then one call each too) and the columns put back in log order with one take.
    """
    n = len(keys)
    key_types = list(map(type, keys))
    kinds = list(dict.fromkeys(key_types))
    tombstones = list(map(operator.is_, values, repeat(None)))
    names = [columns.plans[t][0] for t in kinds]
    if len(kinds) == 1:
        kind_names = pa.repeat(pa.scalar(names[0], pa.string()), n)
        filled = _fields(columns, kinds[0], keys, values, True in tombstones)
    else:
        code_of = {t: code for code, t in enumerate(kinds)}
        codes = np.fromiter(map(code_of.__getitem__, key_types), np.int32, n)
        kind_names = pa.array(names, pa.string()).take(codes)
        order = np.argsort(codes, kind="stable")
        counts = np.bincount(codes, minlength=len(kinds)).tolist()
        by_kind: list[dict[int, pa.Array]] = []
        start = 0
        for kind, count in zip(kinds, counts):
            rows = order[start:start + count].tolist()
            start += count
            by_kind.append(_fields(columns, kind, list(map(keys.__getitem__, rows)),
                                   list(map(values.__getitem__, rows)),
                                   True in map(tombstones.__getitem__, rows)))
        back = np.argsort(order)
        filled = {}
        for index in sorted({i for kind_filled in by_kind for i in kind_filled}):
            parts = [kind_filled.get(index) for kind_filled in by_kind]
            filled[index] = pa.concat_arrays([
                _nulls(columns, index, count) if part is None else part
                for part, count in zip(parts, counts)]).take(back)
    arrays: list[pa.Array] = [
        pa.repeat(pa.scalar(base, pa.int64()), n),
        pa.array(positions, pa.int64()),
        timestamps(stamps),
        kind_names,
        pa.array(tombstones, pa.bool_()),
    ]
    for index in range(len(LEADING), len(columns.schema)):
        array = filled.get(index)
        arrays.append(_nulls(columns, index, n) if array is None else array)
    return pa.RecordBatch.from_arrays(arrays, schema=columns.schema)


_NULLS: dict[pa.DataType, pa.Array] = {}


def _nulls(columns: RecordColumns, index: int, n: int) -> pa.Array:
    """``n`` nulls of column ``index``; those of a full batch made once per type, most
    columns of a batch being all nulls. (Not a slice of a longer array: Arrow's stream
    writer would send some types' buffers whole.)"""
    field_type = columns.schema.field(index).type
    if n != BATCH_ROWS:
        return pa.nulls(n, field_type)
    kept = _NULLS.get(field_type)
    if kept is None:
        kept = _NULLS[field_type] = pa.nulls(n, field_type)
    return kept


def _fields(columns: RecordColumns, key_type: type, keys: Sequence[object],
            values: Sequence[object], tombstones: bool) -> dict[int, pa.Array]:
    """Column index -> array of the fields of ``key_type``'s records (all of that type)."""
    filled: dict[int, pa.Array] = {}
    schema = columns.schema
    for f in columns.plans[key_type][1]:
        get = operator.attrgetter(f.attr)
        data: list[object]
        if f.plain_int and (f.part == 0 or not tombstones):
            owners = keys if f.part == 0 else values
            filled[f.index] = pa.array(np.fromiter(map(get, owners), np.int64, len(owners)))
            continue
        if f.part == 0:
            data = list(map(get, keys))
        elif tombstones:
            data = [None if x is None else get(x) for x in values]
        else:
            data = list(map(get, values))
        convert = f.convert
        if convert is not None:
            data = [None if v is None else convert(v) for v in data]
        filled[f.index] = pa.array(data, schema.field(f.index).type)
    return filled


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
