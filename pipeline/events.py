"""The ``events`` view: the group events a data directory's record log holds, one row each.

``spark.read.format("kcsim").option("kind", "events").load(data_dir)``: the
`group_event` records (only those are decoded), with the fields every reader of
events shows (`event_fields`: the HTTP API, the event-log file, `kcsim events`), and
the event's time also as a Spark timestamp. ``detail`` is the event's detail as a JSON
object (its values are numbers, strings or lists: ``from_json`` or
``get_json_object`` reach them). Rows come in log order within a segment; order by
``seq`` for the broker's order. The log keeps the newest `EVENT_SLOTS` events.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import msgspec
import pyarrow as pa

from .arrow_batches import BATCH_ROWS, warn_tear
from .columns import TIMESTAMP, timestamps
from .meta_log import SegmentRead, decoded_records
from .registry import record_types

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from kcsim.coordinator.records import GroupEventValue
    from kcsim.storage import SegmentPlace

EVENT_RECORD_TYPE = "group_event"

EVENT_SCHEMA = pa.schema([
    pa.field("seq", pa.int64(), nullable=False),
    pa.field("time", TIMESTAMP, nullable=False),
    pa.field("time_ms", pa.int64(), nullable=False),
    pa.field("group", pa.string(), nullable=False),
    pa.field("group_type", pa.string(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
    pa.field("cause", pa.string(), nullable=False),
    pa.field("member", pa.string(), nullable=False),
    pa.field("detail", pa.string(), nullable=False),  # a JSON object
])

_json = msgspec.json.Encoder().encode


@functools.cache
def event_type() -> frozenset[int]:
    """The type id of the event records, as the readers' `wanted`."""
    return frozenset(t.id for t in record_types() if t.name == EVENT_RECORD_TYPE)


def event_batches(segment: SegmentPlace,
                  only: dict[str, frozenset[object]] | None = None) -> Iterator[pa.RecordBatch]:
    """The events of one segment, in log order; `only` keeps those whose columns named
    there (the filters pushed down: group, group_type, kind) have one of the values given."""
    read = SegmentRead(segment)
    yield from events_batches(
        (record.value for _, _, record in decoded_records(segment, read, wanted=event_type())),
        only)
    warn_tear(read.tear)


def events_batches(events: Iterable[GroupEventValue | None],
                   only: dict[str, frozenset[object]] | None = None) -> Iterator[pa.RecordBatch]:
    """`events` as the view's batches (tombstones and those `only` leaves out dropped)."""
    only = only or {}
    rows: list[tuple[int, int, str, str, str, str, str, str]] = []
    for e in events:
        if e is None or any(getattr(e, column) not in values for column, values in only.items()):
            continue
        rows.append((e.seq, e.time_ms, e.group, e.group_type, e.kind, e.cause, e.member,
                     _json(e.detail).decode()))
        if len(rows) == BATCH_ROWS:
            yield _batch(rows)
            rows = []
    if rows:
        yield _batch(rows)


def _batch(rows: list[tuple[int, int, str, str, str, str, str, str]]) -> pa.RecordBatch:
    seq, time_ms, group, group_type, kind, cause, member, detail = map(list, zip(*rows))
    return pa.RecordBatch.from_arrays(
        [pa.array(seq, pa.int64()), timestamps(time_ms), pa.array(time_ms, pa.int64()),
         *(pa.array(column, pa.string())
           for column in (group, group_type, kind, cause, member, detail))],
        schema=EVENT_SCHEMA)
