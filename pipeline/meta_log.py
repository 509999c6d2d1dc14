"""The coordinator's record log under ``<data-dir>/meta``, read one segment at a time.

Planning lists the segments as a read-only open of the log sees them (headers
checked, a committed compaction's outputs in place of its inputs). Reading a
segment validates it with the replay's scan (``storage.segment.scan_frames``),
decodes it with the replay's decoder (``decode_frames``) and judges what
stopped the scan the way ``RecordLog`` does at start-up:
the torn tail of the last segment ends the read and is reported as a
:class:`Tear`; damage anywhere else, a record that does not decode or one this
kcsim cannot read raises the error the server would refuse to start with.
Nothing on disk is changed, so a live server's data directory can be read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from kcsim.storage.errors import CorruptLogError, StorageError, UnsupportedRecordError
from kcsim.storage.log import RecordLog
from kcsim.storage.segment import (
    FRAME,
    FRAME_FLAG_BATCH,
    FRAME_FLAG_TOMBSTONE,
    FRAME_HEADER_SIZE,
    FRAME_PREFIX_SIZE,
    NIL,
    SEGMENT_HEADER_SIZE,
    ScanResult,
    decode_frames,
    decode_raw_pairs,
    find_valid_frame,
    scan_frames,
)

from .registry import TopicKey, record_types

if TYPE_CHECKING:
    from collections.abc import Iterator

    from kcsim.storage.records import Record, RecordTypes


@dataclass(frozen=True)
class SegmentFile:
    """One segment as planned: enough for a worker to read and judge it alone."""

    path: str
    base: int
    sealed_end: int | None
    is_last: bool
    next_base: int | None  # where the following segment starts (None for the last)


@dataclass(frozen=True)
class Tear:
    """Where a read stopped short: the torn tail a server's start-up would cut."""

    path: str
    position: int  # byte offset of the first invalid frame
    reason: str
    dropped_bytes: int


def meta_dir(data_dir: str | os.PathLike[str]) -> str:
    return os.path.join(os.fspath(data_dir), "meta")


def plan_segments(data_dir: str | os.PathLike[str]) -> list[SegmentFile]:
    """The segments of the data directory's record log, oldest first (none if it has no log)."""
    directory = meta_dir(data_dir)
    if not os.path.isdir(directory):
        return []
    with RecordLog.open(directory, types=record_types(), read_only=True) as log:
        segments = log.segments
    return [
        SegmentFile(s.path, s.base, s.sealed_end, i == len(segments) - 1,
                    segments[i + 1].base if i + 1 < len(segments) else None)
        for i, s in enumerate(segments)
    ]


@dataclass
class SegmentRead:
    """What reading one segment found besides its records."""

    segment: SegmentFile
    records: int = 0
    valid_bytes: int = SEGMENT_HEADER_SIZE
    file_bytes: int = 0
    tear: Tear | None = field(default=None)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def decoded_records(segment: SegmentFile, read: SegmentRead, types: RecordTypes | None = None,
                    wanted: frozenset[int] | None = None,
                    ) -> Iterator[tuple[int, int, Record]]:
    """(position, frame timestamp ms, record) of every record (of the ``wanted`` type ids).

    The segment is validated by the replay's scan (``scan_frames``) and judged as
    start-up judges it; its frames are then decoded by ``decode_frames``, the
    replay's decoder for validated segments, a run of wanted frames at a time
    (frames of other types are skipped undecoded). Fills ``read``; raises where
    the server's start-up would refuse.
    """
    types = types or record_types()
    buf = _read(segment.path)
    read.file_bytes = len(buf)
    scan = scan_frames(types, buf, SEGMENT_HEADER_SIZE, len(buf))
    judge(segment, buf, scan, read)
    unpack = FRAME.unpack_from
    pos, end, position = SEGMENT_HEADER_SIZE, scan.valid_end, segment.base
    run_at = pos
    try:
        while pos < end:
            length, _crc, _magic, flags, _version, timestamp, count, type_id = unpack(buf, pos)
            if not flags & FRAME_FLAG_BATCH:
                count = 1
            if wanted is not None and type_id not in wanted:
                position += count
                pos += FRAME_PREFIX_SIZE + length
                continue
            run_at = pos
            frames = []
            while True:
                frames.append((timestamp, count))
                pos += FRAME_PREFIX_SIZE + length
                if pos >= end:
                    break
                length, _crc, _magic, flags, _version, timestamp, count, type_id = unpack(buf, pos)
                if not flags & FRAME_FLAG_BATCH:
                    count = 1
                if wanted is not None and type_id not in wanted:
                    break
            records = decode_frames(types, buf, run_at, pos)
            for timestamp, count in frames:
                for _ in range(count):
                    yield position, timestamp, next(records)
                    position += 1
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise CorruptLogError(segment.path, run_at, f"record does not decode: {exc}") from exc


def raw_records(segment: SegmentFile, read: SegmentRead, types: RecordTypes | None = None,
                ) -> Iterator[tuple[int, int, int, int, bytes, bytes | None]]:
    """(position, timestamp ms, type id, value version, key, value or None) as encoded.

    The frames are validated by the replay's scan; batch frames are split into
    their records as compaction splits them, without decoding keys or values.
    """
    buf = _read(segment.path)
    read.file_bytes = len(buf)
    scan = scan_frames(types or record_types(), buf, SEGMENT_HEADER_SIZE, len(buf))
    judge(segment, buf, scan, read)
    view = memoryview(buf)
    unpack = FRAME.unpack_from
    pos, end, position = SEGMENT_HEADER_SIZE, scan.valid_end, segment.base
    while pos < end:
        length, _crc, _magic, flags, version, timestamp, key_len, type_id = unpack(buf, pos)
        frame_end = pos + FRAME_PREFIX_SIZE + length
        body = pos + FRAME_HEADER_SIZE
        if flags & FRAME_FLAG_BATCH:
            try:
                pairs = decode_raw_pairs(view[body:frame_end])
            except msgspec.DecodeError as exc:
                raise CorruptLogError(segment.path, pos, f"record does not decode: {exc}") from exc
            for key, value in pairs:
                raw_value = bytes(value)
                yield (position, timestamp, type_id, version, bytes(key),
                       None if raw_value == NIL else raw_value)
                position += 1
        else:
            yield (position, timestamp, type_id, version, buf[body:body + key_len],
                   None if flags & FRAME_FLAG_TOMBSTONE else buf[body + key_len:frame_end])
            position += 1
        pos = frame_end


def judge(segment: SegmentFile, buf: bytes, scan: ScanResult, read: SegmentRead) -> None:
    """What start-up would do with this scan (``RecordLog._accept_scan``), without
    changing anything: note the torn tail of the last segment, raise for the rest."""
    path = segment.path
    read.records, read.valid_bytes = scan.count, scan.valid_end
    if scan.unsupported:
        raise UnsupportedRecordError(path, scan.valid_end, scan.problem or "")
    if segment.sealed_end is not None and segment.base + scan.count > segment.sealed_end:
        raise CorruptLogError(path, 0, f"{scan.count} records exceed the sealed range "
                                       f"[{segment.base}, {segment.sealed_end})")
    if scan.problem is not None:
        if segment.is_last and find_valid_frame(buf, scan.valid_end, len(buf)) is None:
            read.tear = Tear(path, scan.valid_end, scan.problem, len(buf) - scan.valid_end)
            return
        raise CorruptLogError(path, scan.valid_end, scan.problem)
    end = segment.sealed_end if segment.sealed_end is not None else segment.base + scan.count
    if segment.next_base is not None and segment.sealed_end is None and segment.next_base != end:
        what = "missing segment" if segment.next_base > end else "overlapping segment"
        raise CorruptLogError(path, scan.valid_end, f"{what}: expected a segment starting at "
                                                    f"position {end}, found {segment.next_base}")


def topic_names(data_dir: str | os.PathLike[str], *, strict: bool = True) -> dict[bytes, str]:
    """Topic id -> name of the topics the log holds now (deleted ones left out).

    Only the topic records are decoded (with the replay's codecs); the other
    frames are validated by the same scan and skipped. Damage raises as in a
    read, or with ``strict=False`` ends the walk there (for diagnostics).
    """
    types = record_types()
    topic_type = types.by_key[TopicKey]
    codec = types.codecs[topic_type.id]
    assert codec is not None
    decode_key, decode_value, _, decode_batch = codec
    ids: dict[str, bytes] = {}
    unpack = FRAME.unpack_from
    for segment in plan_segments(data_dir):
        buf = _read(segment.path)
        scan = scan_frames(types, buf, SEGMENT_HEADER_SIZE, len(buf))
        try:
            judge(segment, buf, scan, SegmentRead(segment))
        except StorageError:
            if strict:
                raise
        view = memoryview(buf)
        pos = SEGMENT_HEADER_SIZE
        while pos < scan.valid_end:
            length, _crc, _magic, flags, _version, _ts, key_len, type_id = unpack(buf, pos)
            frame_end = pos + FRAME_PREFIX_SIZE + length
            if type_id == topic_type.id:
                body = pos + FRAME_HEADER_SIZE
                if flags & FRAME_FLAG_BATCH:
                    pairs = decode_batch(view[body:frame_end])
                else:
                    value = (None if flags & FRAME_FLAG_TOMBSTONE
                             else decode_value(view[body + key_len:frame_end]))
                    pairs = [(decode_key(view[body:body + key_len]), value)]
                for key, value in pairs:
                    if value is None:
                        ids.pop(key.name, None)
                    else:
                        ids[key.name] = value.topic_id
            pos = frame_end
        if scan.problem is not None:
            break
    return {topic_id: name for name, topic_id in ids.items()}
