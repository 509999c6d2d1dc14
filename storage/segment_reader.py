"""Reading one record-log segment on its own, judged as start-up judges it.

A reader that is not the server (the Spark pipeline, diagnostics) reads a
segment file without opening the log around it: it may be a live server's,
and must not be changed. :func:`judge_segment` reads the file, validates its
frames with the scan replay uses and hands the scan to start-up's own judge
(``segment_check.judge_scan``); the :class:`JudgedSegment` it returns walks the
valid frames (:class:`Frame`, undecoded) and decodes their records with the
replay's decoders. The frame layout stays private to ``storage.segment``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from .errors import CorruptLogError
from .segment import (
    FRAME,
    FRAME_FLAG_BATCH,
    FRAME_FLAG_TOMBSTONE,
    FRAME_HEADER_SIZE,
    NIL,
    SEGMENT_HEADER_SIZE,
    batch_pairs,
    decode_frames,
    decode_raw_pairs,
    iter_frame_bounds,
    scan_frames,
)
from .segment_check import judge_scan

if TYPE_CHECKING:
    from collections.abc import Container, Iterator

    from .records import Record, RecordTypes
    from .segment_check import SegmentPlace, SegmentVerdict

PlacedRecord: TypeAlias = tuple[int, int, "Record"]
"""(log position, frame timestamp ms, record)."""

RawRecord: TypeAlias = tuple[int, int, int, int, bytes, bytes | None]
"""(log position, frame timestamp ms, type id, value version, encoded key, encoded value
or None for a tombstone): a record as written, for whoever re-frames it (compaction)."""


class Frame(msgspec.Struct, frozen=True, gc=False):
    """One valid frame, undecoded: where it is and what its header says."""

    position: int  # log position of its (first) record
    start: int  # byte offset in the file
    end: int  # byte offset just after it
    type_id: int
    version: int  # the value version it was written with
    timestamp_ms: int  # when it was written
    records: int  # 1, or how many records a batch frame holds
    batch: bool
    tombstone: bool  # a plain frame whose value is deleted


def iter_frames(buf: bytes, start: int, end: int, position: int) -> Iterator[Frame]:
    """The frames of the already validated bytes ``buf[start:end]``, the first at ``position``."""
    unpack = FRAME.unpack_from
    for frame_start, frame_end in iter_frame_bounds(buf, start, end):
        _length, _crc, _magic, flags, version, timestamp, key_len, type_id = unpack(
            buf, frame_start)
        batch = bool(flags & FRAME_FLAG_BATCH)
        records = key_len if batch else 1
        yield Frame(position, frame_start, frame_end, type_id, version, timestamp, records,
                    batch, bool(flags & FRAME_FLAG_TOMBSTONE))
        position += records


class JudgedSegment:
    """One segment file as read, and start-up's verdict on it (:attr:`verdict`).

    The readers cover the valid frames only (up to ``verdict.valid_bytes``) and
    do not raise for the verdict's damage: call ``verdict.raise_damage()`` to
    refuse what start-up refuses, or read what is valid for diagnostics.
    """

    __slots__ = ("buf", "place", "types", "verdict")

    def __init__(self, place: SegmentPlace, types: RecordTypes, buf: bytes,
                 verdict: SegmentVerdict) -> None:
        self.place = place
        self.types = types
        self.buf = buf
        self.verdict = verdict

    def frames(self) -> Iterator[Frame]:
        return iter_frames(self.buf, SEGMENT_HEADER_SIZE, self.verdict.valid_bytes,
                           self.place.base)

    def records(self, wanted: Container[int] | None = None) -> Iterator[PlacedRecord]:
        """Every record (of the ``wanted`` type ids), decoded by the replay's decoder.

        Consecutive wanted frames are decoded as one run; frames of other types
        are skipped undecoded. A frame that does not decode raises the
        CorruptLogError replay raises for it.
        """
        run: list[Frame] = []
        for frame in self.frames():
            if wanted is None or frame.type_id in wanted:
                run.append(frame)
                continue
            if run:
                yield from self._decode_run(run)
                run = []
        if run:
            yield from self._decode_run(run)

    def _decode_run(self, run: list[Frame]) -> Iterator[PlacedRecord]:
        buf = self.buf
        try:
            decoded = decode_frames(self.types, buf, run[0].start, run[-1].end)
            for frame in run:
                timestamp, position = frame.timestamp_ms, frame.position
                for _ in range(frame.records):
                    yield position, timestamp, next(decoded)
                    position += 1
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise undecodable(self.types, self.place.path, buf, run[-1].end, exc) from exc

    def frame_pairs(self, wanted: Container[int] | None = None,
                    ) -> Iterator[tuple[Frame, list[tuple[Any, Any]]]]:
        """Each frame (of the ``wanted`` type ids) with its records as decoded
        (key, value or None) pairs: a batch frame's in one decode, for readers that
        build columns a frame at a time. Raises as :meth:`records` raises."""
        buf = self.buf
        view = memoryview(buf)
        codecs = self.types.codecs
        for frame in self.frames():
            if wanted is not None and frame.type_id not in wanted:
                continue
            decode_key, decode_value, _, decode_batch = codecs[frame.type_id]  # type: ignore[misc]
            body = frame.start + FRAME_HEADER_SIZE
            try:
                if frame.batch:
                    pairs = batch_pairs(decode_batch, view[body:frame.end], frame.records)
                else:
                    key_end = body + FRAME.unpack_from(buf, frame.start)[6]
                    pairs = [(decode_key(view[body:key_end]),
                              None if frame.tombstone else decode_value(view[key_end:frame.end]))]
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise undecodable(self.types, self.place.path, buf, frame.end, exc) from exc
            yield frame, pairs

    def raw_records(self) -> Iterator[RawRecord]:
        """Every record as encoded, a batch frame's split out as compaction splits them."""
        buf = self.buf
        view = memoryview(buf)
        for frame in self.frames():
            body = frame.start + FRAME_HEADER_SIZE
            if not frame.batch:
                key_end = body + FRAME.unpack_from(buf, frame.start)[6]
                yield (frame.position, frame.timestamp_ms, frame.type_id, frame.version,
                       buf[body:key_end], None if frame.tombstone else buf[key_end:frame.end])
                continue
            try:
                pairs = decode_raw_pairs(view[body:frame.end])
            except msgspec.DecodeError as exc:
                raise CorruptLogError(self.place.path, frame.start,
                                      f"record does not decode: {exc}") from exc
            position = frame.position
            for key, value in pairs:
                raw_value = bytes(value)
                yield (position, frame.timestamp_ms, frame.type_id, frame.version, bytes(key),
                       None if raw_value == NIL else raw_value)
                position += 1


def judge_segment(place: SegmentPlace, types: RecordTypes) -> JudgedSegment:
    """Read the segment at ``place`` and judge it as start-up would; changes nothing."""
    with open(place.path, "rb") as f:
        buf = f.read()
    scan = scan_frames(types, buf, SEGMENT_HEADER_SIZE, len(buf))
    return JudgedSegment(place, types, buf, judge_scan(place, buf, scan))


def undecodable(types: RecordTypes, path: str, buf: bytes, size: int,
                exc: Exception) -> CorruptLogError:
    """The error for frames that pass their CRC but do not decode, at the first such frame."""
    position = SEGMENT_HEADER_SIZE
    for frame_start, frame_end in iter_frame_bounds(buf, SEGMENT_HEADER_SIZE, size):
        try:
            list(decode_frames(types, buf, frame_start, frame_end))
        except (msgspec.DecodeError, msgspec.ValidationError):
            position = frame_start
            break
    return CorruptLogError(path, position, f"record does not decode: {exc}")
