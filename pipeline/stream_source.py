"""The live ``kcsim`` source: ``spark.readStream.format("kcsim").load(data_dir)``.

A streaming query tails the coordinator's record log of a data directory while
``kcsim serve`` writes it, with the columns of the batch reader's ``records``
kind (with ``.option("kind", "events")``, the columns of its ``events`` view: the group
events the log holds), one row per record, in log order.

Offsets are ``{"segment": base, "position": p}``: ``p`` is a log position (the
next record to read; a record's position never changes, compaction keeps it),
``base`` the first position of the segment file that holds it. A micro-batch
reads the positions ``[start, end)``, one Spark partition per segment file
they span, so a restart from the checkpoint neither repeats nor skips a record.

Where the log ends is decided as start-up decides it: the newest segment is
judged by storage's own reader (``kcsim.storage.judge_segment``), and the end
is that of its last frame that checks out. A torn tail (a frame being written)
is not read; the next trigger takes it once it is whole. A segment that rolls
is followed: positions run on into the next file.

Compaction rewrites closed segments only, keeping positions, and drops records
that a later record of the same key superseded. A query that has fallen behind
into segments compaction rewrote therefore reads the newest record of each key
there and not the superseded ones, as a Kafka consumer of a compacted topic
does: never a repeat, never out of order. Each such gap is logged; with
``failOnCompacted`` it fails the query instead. A compaction that swaps files
while a task reads them is retried on the new files. A log that ends before
the query's offset (cut by ``kcsim serve --repair``, or another data directory)
fails the query: its positions would be read again with other records.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows

from kcsim.storage import JudgedSegment, StorageError

from .arrow_batches import BATCH_ROWS, _columns_batch
from .meta_log import SegmentRead, judged, plan_segments

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    import pyarrow as pa

    from kcsim.storage import Frame, SegmentPlace

log = logging.getLogger("kcsim.pipeline")

STARTS = ("earliest", "latest")
SWAP_RETRIES = 5  # reads of a range that compaction swapped files under


class StreamError(RuntimeError):
    """The log no longer holds what the query's offsets say it read."""


@dataclass(frozen=True)
class LogOffset:
    """A point in the log: the next position to read, and the segment holding it."""

    segment: int
    position: int

    def json(self) -> dict[str, int]:
        return {"segment": self.segment, "position": self.position}

    @classmethod
    def of(cls, offset: Mapping[str, Any]) -> LogOffset:
        return cls(int(offset["segment"]), int(offset["position"]))


def log_start(data_dir: str) -> LogOffset:
    places = plan_segments(data_dir)
    base = places[0].base if places else 0
    return LogOffset(base, base)


def segment_end(last: SegmentPlace) -> LogOffset:
    """The end of the last complete frame of the newest segment, judged as start-up
    judges it (a torn tail left out); raises what start-up would refuse to start with."""
    read = SegmentRead(last)
    judged(last, read)
    return LogOffset(last.base, last.base + read.records)


class KcsimStreamReader(DataSourceStreamReader):
    """Options: ``startingOffsets`` (earliest, the default, or latest),
    ``maxRecordsPerTrigger``, ``failOnCompacted`` (false)."""

    def __init__(self, data_dir: str, options: Mapping[str, Any], kind: str = "records") -> None:
        self.data_dir = data_dir
        self.kind = kind
        self.starting = str(options.get("startingOffsets", "earliest")).lower()
        if self.starting not in STARTS:
            raise ValueError(f"kcsim stream: startingOffsets must be one of {', '.join(STARTS)}, "
                             f"not {self.starting!r}")
        most = options.get("maxRecordsPerTrigger")
        self.max_records = int(most) if most is not None else None
        self.fail_on_compacted = str(options.get("failOnCompacted", "false")).lower() == "true"
        # the newest file as last judged (path, size, mtime) and where its frames end
        self._seen: tuple[tuple[str, int, int], LogOffset] | None = None

    def initialOffset(self) -> dict[str, int]:
        if self.starting == "latest":
            return (self._end() or log_start(self.data_dir)).json()
        return log_start(self.data_dir).json()

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable() if self.max_records is None else ReadMaxRows(self.max_records)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, int]:
        begin = LogOffset.of(start)
        end = self._end()
        if end is None:
            return begin.json()
        if end.position < begin.position:
            raise StreamError(
                f"the record log in {self.data_dir} ends at position {end.position}, before "
                f"this query's offset {begin.position}: it was cut (kcsim serve --repair) or "
                "replaced, and its positions would be read again with other records")
        if isinstance(limit, ReadMaxRows) and end.position - begin.position > limit.max_rows:
            return self._at(begin.position + limit.max_rows).json()
        return end.json()

    def _at(self, position: int) -> LogOffset:
        bases = [p.base for p in plan_segments(self.data_dir) if p.base <= position]
        return LogOffset(bases[-1] if bases else 0, position)

    def _end(self) -> LogOffset | None:
        """Where the log ends (None: no log yet); the newest segment is not judged
        again while its file is unchanged."""
        places = plan_segments(self.data_dir)
        if not places:
            return None
        path = places[-1].path
        try:
            stat = os.stat(path)
            look = (path, stat.st_size, stat.st_mtime_ns)
        except FileNotFoundError:
            look = (path, -1, -1)
        if self._seen is None or self._seen[0] != look:
            self._seen = (look, segment_end(places[-1]))
        return self._seen[1]

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        lo, hi = LogOffset.of(start).position, LogOffset.of(end).position
        if lo >= hi:
            return []
        cuts = [p.base for p in plan_segments(self.data_dir) if lo < p.base < hi]
        bounds = [lo, *cuts, hi]
        return [InputPartition((a, b, self.fail_on_compacted))
                for a, b in pairwise(bounds)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        lo, hi, fail_on_compacted = partition.value
        if self.kind == "events":
            yield from range_event_batches(self.data_dir, lo, hi)
            return
        batches = list(range_batches(self.data_dir, lo, hi))
        missing = hi - lo - sum(b.num_rows for b in batches)
        if missing:
            what = (f"{missing} of the positions [{lo}, {hi}) of {self.data_dir}'s record log "
                    "were compacted away before the stream read them")
            if fail_on_compacted:
                raise StreamError(what + " (failOnCompacted is on)")
            log.warning("%s: the newest record of each of their keys is read", what)
        yield from batches

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to release: the log is the server's."""


def range_batches(data_dir: str, lo: int, hi: int) -> Iterator[pa.RecordBatch]:
    """The ``records`` view of the positions ``[lo, hi)``, in log order."""
    from .source import _columns

    columns = _columns()
    for found in _judged_range(data_dir, lo, hi):
        rows = [(position, timestamp, record.key, record.value)
                for position, timestamp, record in _Window(found, lo, hi).records()
                if lo <= position < hi]
        for at in range(0, len(rows), BATCH_ROWS):
            positions, stamps, keys, values = (list(c) for c in zip(*rows[at:at + BATCH_ROWS]))
            yield _columns_batch(columns, found.place.base, positions, stamps, keys, values)


def range_event_batches(data_dir: str, lo: int, hi: int) -> Iterator[pa.RecordBatch]:
    """The ``events`` view of the positions ``[lo, hi)``, in log order."""
    from .events import event_type, events_batches

    for found in _judged_range(data_dir, lo, hi):
        yield from events_batches(
            record.value for position, _, record in _Window(found, lo, hi).records(event_type())
            if lo <= position < hi)


def _judged_range(data_dir: str, lo: int, hi: int) -> list[JudgedSegment]:
    """The segments holding positions ``[lo, hi)`` now, each read and judged; read again
    when compaction swaps the files between listing and reading them."""
    for attempt in range(SWAP_RETRIES):
        places = _overlapping(plan_segments(data_dir), lo, hi)
        try:
            return [judged(place, SegmentRead(place)) for place in places]
        except (FileNotFoundError, StorageError):
            if attempt == SWAP_RETRIES - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def _overlapping(places: list[SegmentPlace], lo: int, hi: int) -> list[SegmentPlace]:
    return [p for p in places
            if p.base < hi and (p.next_base is None or p.next_base > lo)]


class _Window(JudgedSegment):
    """A judged segment whose walk keeps the frames holding positions ``[lo, hi)``: only
    those are decoded (by storage's own decoder)."""

    def __init__(self, found: JudgedSegment, lo: int, hi: int) -> None:
        super().__init__(found.place, found.types, found.buf, found.verdict)
        self.lo = lo
        self.hi = hi

    def frames(self) -> Iterator[Frame]:
        for frame in super().frames():
            if frame.position >= self.hi:
                return
            if frame.position + frame.records > self.lo:
                yield frame


STREAMED_KINDS = ("records", "events")


def stream_reader(data_dir: str, kind: str, options: Mapping[str, Any]) -> KcsimStreamReader:
    if kind not in STREAMED_KINDS:
        raise ValueError(f"kcsim data source: kind {kind!r} is read in batch only; "
                         f"a stream reads the {' or '.join(STREAMED_KINDS)} kind")
    return KcsimStreamReader(data_dir, options, kind)
