"""On-disk format of record-log segments: file header, frames, scanning, decoding.

A segment file is a 32-byte header followed by frames::

    header: magic "KCSL" | format u16 | flags u16 | base u64 | end u64 | crc u32 | pad u32
    frame:  length u32 | crc32c u32 | magic u8 | flags u8 | value_version u16
            | timestamp_ms i64 | key_len u32 | type_id u16 | key | value

All integers are little-endian. ``length`` counts the bytes after the CRC
field and the CRC covers exactly those bytes. Flag bit 0 marks a tombstone
(the value is empty). ``type_id`` sits right before the key so that
``type_id + key`` is one contiguous slice: compaction uses it as the identity
of a record without decoding anything. The per-frame magic byte lets a scan
find out cheaply whether valid frames follow a damaged one.

Flag bit 1 marks a batch frame: several records of one type written by one
append, as Kafka writes one record batch per commit. Its ``key_len`` field
holds the record count and the key and value are replaced by one msgpack
array of ``[key, value]`` pairs (a nil value is a tombstone). One encode and
one CRC per batch instead of per record is what makes a 10-partition commit
cheap; a batch is also all-or-nothing on a torn write, like the commit it
records. A batch never holds fewer than two records.

The format gives records no meaning: type ids, value versions and the classes
that keys and values decode to come from the RecordTypes the caller passes
in (the log it was opened with). A valid frame whose type id that registry
does not declare, or whose version is newer than it reads, stops a scan as
unsupported: the log was written by a newer kcsim and must not be cut.

Positions ("base" and "end") count records, like Kafka offsets: a segment
covers positions [base, end). An open segment's end is base + its record count;
a sealed segment (rolled, or written by compaction) stores its end in the
header, which lets a scan spot a missing segment even after compaction
removed records.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
from crc32c import crc32c

from .records import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator, Sequence

    from .records import RecordCodec, RecordTypes

SEGMENT_SUFFIX = ".log"

SEGMENT_MAGIC = b"KCSL"
SEGMENT_FORMAT = 1
SEGMENT_FLAG_SEALED = 0x1
_SEGMENT_HEADER = struct.Struct("<4sHHQQ")
_SEGMENT_HEADER_CRC = struct.Struct("<I4x")
SEGMENT_HEADER_SIZE = _SEGMENT_HEADER.size + _SEGMENT_HEADER_CRC.size  # 32

DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024
"""Where a segment rolls unless configured otherwise: the record log's, each partition
log's and the compactors' outputs (one default, so a compacted log looks like a live one)."""

FRAME = struct.Struct("<IIBBHqIH")
FRAME_HEADER_SIZE = FRAME.size  # 26
FRAME_PREFIX_SIZE = 8  # length + crc
FRAME_MAGIC = 0xC5
FRAME_FLAG_TOMBSTONE = 0x1
FRAME_FLAG_BATCH = 0x2
MAX_BATCH_RECORDS = 1024
_FRAME_PREFIX = struct.Struct("<II")
_FRAME_BODY = struct.Struct("<BBHqIH")
_MIN_LENGTH = FRAME_HEADER_SIZE - FRAME_PREFIX_SIZE
IDENTITY_OFFSET = FRAME_HEADER_SIZE - 2  # type_id, then the key: one slice
_MAGIC_BYTE = bytes([FRAME_MAGIC])
MIN_SEGMENT_BYTES = SEGMENT_HEADER_SIZE + FRAME_HEADER_SIZE  # room for a header and one frame


def segment_name(base: int) -> str:
    """File name of the segment starting at ``base`` (Kafka style, zero padded)."""
    return f"{base:020d}{SEGMENT_SUFFIX}"


def parse_segment_name(name: str) -> int | None:
    """Base position encoded in a segment file name, or None for other files."""
    stem, suffix = name[: -len(SEGMENT_SUFFIX)], name[-len(SEGMENT_SUFFIX):]
    if suffix != SEGMENT_SUFFIX or len(stem) != 20 or not stem.isdigit():
        return None
    return int(stem)


# -- segment header -----------------------------------------------------------


def encode_segment_header(base: int, sealed_end: int | None) -> bytes:
    flags = SEGMENT_FLAG_SEALED if sealed_end is not None else 0
    head = _SEGMENT_HEADER.pack(SEGMENT_MAGIC, SEGMENT_FORMAT, flags, base, sealed_end or 0)
    return head + _SEGMENT_HEADER_CRC.pack(crc32c(head))


def decode_segment_header(buf: bytes) -> tuple[int, int | None] | str:
    """(base, sealed_end) from a segment header, or why it is invalid."""
    if len(buf) < SEGMENT_HEADER_SIZE:
        return "truncated segment header"
    magic, fmt, flags, base, end = _SEGMENT_HEADER.unpack_from(buf, 0)
    (crc,) = _SEGMENT_HEADER_CRC.unpack_from(buf, _SEGMENT_HEADER.size)
    if magic != SEGMENT_MAGIC:
        return "bad segment magic"
    if crc != crc32c(bytes(buf[: _SEGMENT_HEADER.size])):
        return "segment header CRC mismatch"
    if fmt != SEGMENT_FORMAT:
        return f"unknown segment format {fmt}"
    return base, (end if flags & SEGMENT_FLAG_SEALED else None)


# -- segments as the log sees them ------------------------------------------------


@dataclass(eq=False)
class Segment:
    """One segment file: where it is, what it covers and how much of it is valid."""

    base: int
    path: str
    size: int  # valid bytes, header included
    count: int  # records (a batch frame holds several)
    sealed_end: int | None = None

    @property
    def end(self) -> int:
        return self.sealed_end if self.sealed_end is not None else self.base + self.count

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


# -- frames ---------------------------------------------------------------------

_encode = msgspec.msgpack.Encoder().encode


def encode_frames(types: RecordTypes, records: Sequence[Record],
                  timestamp_ms: int) -> list[tuple[bytes, int]]:
    """(frame, record count) pairs: each run of records of one type becomes one batch
    frame, a lone record a plain frame. Raises TypeError for a key or value that is
    not of a type in ``types``, before anything is returned."""
    frames: list[tuple[bytes, int]] = []
    by_key = types.by_key
    total = len(records)
    start = 0
    while start < total:
        key_type = type(records[start].key)
        record_type = by_key.get(key_type)
        if record_type is None:
            raise TypeError(f"{key_type.__name__} is not the key of a record type of this log")
        value_type = record_type.value
        stop = start
        limit = min(total, start + MAX_BATCH_RECORDS)
        while stop < limit:
            record = records[stop]
            if type(record.key) is not key_type:
                break
            value = record.value
            if value is not None and type(value) is not value_type:
                raise TypeError(f"{record_type.name} record needs a {value_type.__name__} value, "
                                f"got {type(value).__name__}")
            stop += 1
        if stop - start == 1:
            record = records[start]
            value = record.value
            frames.append((plain_frame_bytes(record_type.id, record_type.version, timestamp_ms,
                                             _encode(record.key),
                                             None if value is None else _encode(value)), 1))
        else:
            run = records if start == 0 and stop == total else records[start:stop]
            head = _FRAME_BODY.pack(FRAME_MAGIC, FRAME_FLAG_BATCH, record_type.version,
                                    timestamp_ms, stop - start, record_type.id)
            body = head + _encode(run)  # [key, value] pairs
            frames.append((_FRAME_PREFIX.pack(len(body), crc32c(body)) + body, stop - start))
        start = stop
    return frames


def plain_frame_bytes(type_id: int, version: int, timestamp_ms: int, key: bytes,
                      value: bytes | None) -> bytes:
    """A plain frame from already encoded key and value (None: a tombstone)."""
    flags = FRAME_FLAG_TOMBSTONE if value is None else 0
    body = b"".join((_FRAME_BODY.pack(FRAME_MAGIC, flags, version, timestamp_ms, len(key),
                                      type_id), key, value or b""))
    return _FRAME_PREFIX.pack(len(body), crc32c(body)) + body


# -- decoding -----------------------------------------------------------------

decode_raw_pairs = msgspec.msgpack.Decoder(list[tuple[msgspec.Raw, msgspec.Raw]]).decode
"""A batch's records as encoded (key, value) pairs, whatever their type (compaction)."""
NIL = b"\xc0"  # a tombstone's value inside a batch


def _unsupported_reason(codecs: list[RecordCodec | None], type_id: int, version: int) -> str:
    if codecs[type_id] is None:
        return f"unknown record type {type_id}"
    return f"record type {type_id} version {version} is newer than this kcsim reads"


# -- scanning and decoding ----------------------------------------------------


@dataclass(frozen=True)
class ScanResult:
    """Outcome of walking a segment's frames from its header onwards."""

    count: int  # records in the valid frames
    valid_end: int  # byte position just after the last valid frame
    problem: str | None = None  # why the walk stopped early
    unsupported: bool = False  # the frame at valid_end is valid but unreadable here


def _frame_problem(buf: bytes, view: memoryview, pos: int, end: int) -> tuple[str | None, int]:
    """Why the frame at ``pos`` is invalid (None if valid) and where it ends."""
    if end - pos < FRAME_HEADER_SIZE:
        return "partial frame", end
    length, crc, magic, _flags, _version, _ts, key_len, _type_id = FRAME.unpack_from(buf, pos)
    frame_end = pos + FRAME_PREFIX_SIZE + length
    if magic != FRAME_MAGIC:
        return "bad frame magic", end
    if length < _MIN_LENGTH + key_len:
        return "frame length shorter than its header", end
    if frame_end > end:
        return "frame runs past the end of the file", end
    if crc32c(view[pos + FRAME_PREFIX_SIZE:frame_end]) != crc:
        return "frame CRC mismatch", frame_end
    return None, frame_end


def scan_frames(types: RecordTypes, buf: bytes, start: int, end: int) -> ScanResult:
    """Walk and CRC-check frames in ``buf[start:end]``; stop at the first bad one."""
    view = memoryview(buf)
    unpack = FRAME.unpack_from
    decoders = types.codecs
    pos, count = start, 0
    try:
        while pos < end:
            length, crc, magic, flags, version, _ts, key_len, type_id = unpack(buf, pos)
            frame_end = pos + FRAME_PREFIX_SIZE + length
            if (
                magic != FRAME_MAGIC
                or frame_end > end
                or length < _MIN_LENGTH + key_len
                or crc32c(view[pos + FRAME_PREFIX_SIZE:frame_end]) != crc
            ):
                break
            entry = decoders[type_id]
            if entry is None or version > entry[2]:
                return ScanResult(count, pos, _unsupported_reason(decoders, type_id, version),
                                  True)
            pos = frame_end
            count += key_len if flags & FRAME_FLAG_BATCH else 1
    except struct.error:
        pass
    if pos >= end:
        return ScanResult(count, pos)
    problem, _ = _frame_problem(buf, view, pos, end)
    return ScanResult(count, pos, problem or "invalid frame")


def find_valid_frame(buf: bytes, start: int, end: int) -> int | None:
    """Position of some valid frame starting after ``start``, or None.

    Tells a torn tail (garbage up to the end) from damage in the middle of a
    file (valid frames follow). Candidates are found with bytes.find on the
    per-frame magic byte, so zero-filled or short tails cost next to nothing.
    """
    view = memoryview(buf)
    search_from = start + 1 + FRAME_PREFIX_SIZE
    while True:
        magic_at = buf.find(_MAGIC_BYTE, search_from, end)
        if magic_at < 0:
            return None
        candidate = magic_at - FRAME_PREFIX_SIZE
        problem, _ = _frame_problem(buf, view, candidate, end)
        if problem is None:
            return candidate
        search_from = magic_at + 1


def batch_pairs(decode_batch: Callable[[Any], list[tuple[Any, Any]]], payload: memoryview,
                 count: int) -> list[tuple[Any, Any]]:
    """A batch's (key, value) pairs; as many as its header says, or it does not decode."""
    pairs = decode_batch(payload)
    if len(pairs) != count:
        raise msgspec.DecodeError(f"batch frame holds {len(pairs)} records, its header says {count}")
    return pairs


def decode_frames(types: RecordTypes, buf: bytes, start: int, end: int) -> Iterator[Record]:
    """Records of already-validated frames in ``buf[start:end]``, in order."""
    view = memoryview(buf)
    unpack = FRAME.unpack_from
    decoders = types.codecs
    pos = start
    while pos < end:
        length, _crc, _magic, flags, _version, _ts, key_len, type_id = unpack(buf, pos)
        key_start = pos + FRAME_HEADER_SIZE
        value_start = key_start + key_len
        pos += FRAME_PREFIX_SIZE + length
        decode_key, decode_value, _, decode_batch = decoders[type_id]
        if flags & FRAME_FLAG_BATCH:
            for key, value in batch_pairs(decode_batch, view[key_start:pos], key_len):
                yield Record(key, value)
            continue
        yield Record(
            decode_key(view[key_start:value_start]),
            None if flags & FRAME_FLAG_TOMBSTONE else decode_value(view[value_start:pos]),
        )


def scan_and_decode(types: RecordTypes, buf: bytes, start: int,
                    end: int) -> Generator[Record, None, ScanResult]:
    """Validate and decode in one pass: yields records, returns the ScanResult.

    This is the start-up replay loop, so validation and decoding share one walk
    over the frames and one struct unpack per frame.
    """
    view = memoryview(buf)
    unpack = FRAME.unpack_from
    decoders = types.codecs
    pos, count = start, 0
    try:
        while pos < end:
            length, crc, magic, flags, version, _ts, key_len, type_id = unpack(buf, pos)
            key_start = pos + FRAME_HEADER_SIZE
            value_start = key_start + key_len
            frame_end = pos + FRAME_PREFIX_SIZE + length
            if (
                magic != FRAME_MAGIC
                or frame_end > end
                or value_start > frame_end
                or crc32c(view[pos + FRAME_PREFIX_SIZE:frame_end]) != crc
            ):
                break
            entry = decoders[type_id]
            if entry is None or version > entry[2]:
                return ScanResult(count, pos, _unsupported_reason(decoders, type_id, version),
                                  True)
            if flags & FRAME_FLAG_BATCH:
                for key, value in batch_pairs(entry[3], view[key_start:frame_end], key_len):
                    yield Record(key, value)
                count += key_len
            else:
                yield Record(
                    entry[0](view[key_start:value_start]),
                    None if flags & FRAME_FLAG_TOMBSTONE else entry[1](view[value_start:frame_end]),
                )
                count += 1
            pos = frame_end
    except struct.error:
        pass
    if pos >= end:
        return ScanResult(count, pos)
    problem, _ = _frame_problem(buf, view, pos, end)
    return ScanResult(count, pos, problem or "invalid frame")


def iter_frame_bounds(buf: bytes, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(frame start, frame end) of each validated frame, in order."""
    unpack = FRAME.unpack_from
    pos = start
    while pos < end:
        length = unpack(buf, pos)[0]
        frame_end = pos + FRAME_PREFIX_SIZE + length
        yield pos, frame_end
        pos = frame_end


def frame_records(buf: bytes, pos: int) -> int:
    """How many records the validated frame at ``pos`` holds (a batch frame several)."""
    flags, key_len = FRAME.unpack_from(buf, pos)[3], FRAME.unpack_from(buf, pos)[6]
    return int(key_len) if flags & FRAME_FLAG_BATCH else 1


def frame_timestamp(buf: bytes, pos: int) -> int:
    """The write timestamp (ms) of the frame at ``pos``."""
    timestamp: int = FRAME.unpack_from(buf, pos)[5]
    return timestamp
