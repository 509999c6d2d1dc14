"""Kafka record batches (magic v2): checked as Kafka checks them, counted, offsets assigned,
and their records read back.

Batches are stored exactly as received. The broker rewrites only the base
offset (bytes 0-7), which lies outside the CRC, so the client's CRC stays valid.
"""

from __future__ import annotations

import struct
from array import array
from typing import TYPE_CHECKING, NamedTuple, NoReturn

from crc32c import crc32c

from .errors import ErrorCode
from .primitives import DecodeError, read_varint, varint_bytes

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes,
# lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch,
# baseSequence, recordCount
_HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = _HEADER.size  # 61
_LOG_OVERHEAD = 12  # baseOffset + batchLength
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_MIN_RECORD_OVERHEAD = 14  # the smallest legacy record: a batch length below it is corrupt
_MAGIC_AT = 16
_ATTRIBUTES_AT = 21
_CRC_START = 21  # the CRC-32C covers the batch from its attributes onward
_ZSTD = 4
_CONTROL = 0x20


class BatchInfo(NamedTuple):
    start: int  # position of the batch in the buffer it came from
    size: int  # total bytes including the 12-byte log overhead
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    record_count: int
    attributes: int

    @property
    def compressed(self) -> bool:
        return self.attributes & 0x07 != 0

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & 0x20)


def iter_batches(buf: bytes) -> Iterator[BatchInfo]:
    """Walk the batches of a `records` field; raise DecodeError on anything but v2."""
    pos = 0
    end = len(buf)
    while pos < end:
        if end - pos < HEADER_SIZE:
            raise DecodeError(f"record batch header truncated at byte {pos}")
        (_base, length, _epoch, magic, _crc, attrs, last_delta, base_ts, max_ts,
         _pid, _pepoch, _seq, count) = _HEADER.unpack_from(buf, pos)
        if magic != 2:
            raise DecodeError(f"record batch magic {magic} is not supported (only v2)")
        size = length + _LOG_OVERHEAD
        if length < HEADER_SIZE - _LOG_OVERHEAD or pos + size > end:
            raise DecodeError(f"record batch at byte {pos} declares {length} bytes beyond the data")
        if count < 0 or last_delta < 0:
            raise DecodeError(f"record batch at byte {pos} has a negative record count")
        yield BatchInfo(pos, size, last_delta, base_ts, max_ts, count, attrs)
        pos += size


def with_base_offset(batch: bytes, base_offset: int) -> bytes:
    """The same batch with its base offset set (the CRC does not cover it)."""
    return _I64.pack(base_offset) + batch[8:]


def record_timestamps(batch: bytes) -> list[tuple[int, int]]:
    """(offset delta, timestamp) of each record of an uncompressed batch."""
    (_b, _l, _e, _m, _c, _a, _ld, base_ts, _mx, _p, _pe, _s, count) = _HEADER.unpack_from(batch, 0)
    pos = HEADER_SIZE
    out = []
    for _ in range(count):
        length, pos = read_varint(batch, pos)
        body_start = pos
        pos += 1  # attributes
        ts_delta, pos = read_varint(batch, pos)
        off_delta, pos = read_varint(batch, pos)
        out.append((off_delta, base_ts + ts_delta))
        pos = body_start + length
    return out


# -- reading the records of a batch ---------------------------------------------

COMPRESSION_CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
TIMESTAMP_TYPE_LOG_APPEND = 0x08


class BatchHeader(NamedTuple):
    base_offset: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    record_count: int

    @property
    def codec(self) -> int:
        return self.attributes & 0x07

    @property
    def log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_LOG_APPEND)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & 0x20)


class KafkaRecord(NamedTuple):
    """One record of a batch, with its offset and timestamp made absolute."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]


def batch_header(batch: bytes | memoryview) -> BatchHeader:
    """The v2 header of one batch; DecodeError for another magic or a short batch."""
    if len(batch) < HEADER_SIZE:
        raise DecodeError("record batch header truncated")
    (base, _length, _epoch, magic, _crc, attrs, last_delta, base_ts, max_ts,
     pid, _pepoch, _seq, count) = _HEADER.unpack_from(batch, 0)
    if magic != 2:
        raise DecodeError(f"record batch magic {magic} is not supported (only v2)")
    return BatchHeader(base, attrs, last_delta, base_ts, max_ts, pid, count)


def batch_records(batch: bytes | memoryview, base_offset: int,
                  decompress: Callable[[int, bytes], bytes]) -> list[KafkaRecord]:
    """Every record of one v2 batch whose first offset is ``base_offset``.

    ``decompress(codec, data)`` inflates a compressed records section (codec as
    in the attributes: 1 gzip, 2 snappy, 3 lz4, 4 zstd); keeping it a parameter
    keeps this module free of compression libraries. With LogAppendTime every
    record carries the batch's max timestamp, as Kafka's consumers see it.
    """
    header = batch_header(batch)
    body: bytes | memoryview = memoryview(batch)[HEADER_SIZE:]
    if header.codec:
        body = decompress(header.codec, bytes(body))
    append_time = header.max_timestamp if header.log_append_time else None
    out: list[KafkaRecord] = []
    pos = 0
    try:
        for _ in range(header.record_count):
            length, pos = read_varint(body, pos)
            end = pos + length
            pos += 1  # record attributes (unused)
            ts_delta, pos = read_varint(body, pos)
            off_delta, pos = read_varint(body, pos)
            key, pos = _varbytes(body, pos)
            value, pos = _varbytes(body, pos)
            count, pos = read_varint(body, pos)
            headers = []
            for _ in range(count):
                name, pos = _varbytes(body, pos)
                data, pos = _varbytes(body, pos)
                headers.append(((name or b"").decode(), data))
            if pos != end:
                raise DecodeError(f"record at offset delta {off_delta} is {end - pos} bytes "
                                  "longer than its fields")
            out.append(KafkaRecord(base_offset + off_delta,
                                   append_time if append_time is not None
                                   else header.base_timestamp + ts_delta,
                                   key, value, headers))
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise DecodeError(f"malformed record in batch at offset {base_offset}: {exc}") from None
    return out


def _varbytes(buf: bytes | memoryview, pos: int) -> tuple[bytes | None, int]:
    length, pos = read_varint(buf, pos)
    if length < 0:
        return None, pos
    end = pos + length
    if end > len(buf):
        raise DecodeError("record field runs past the end of its batch")
    return bytes(buf[pos:end]), end


class BatchRejected(ValueError):
    """A Produce partition's records that Kafka would not append: `code` is its answer."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def _corrupt(message: str) -> BatchRejected:
    return BatchRejected(ErrorCode.CORRUPT_MESSAGE, message)


def _invalid(message: str) -> BatchRejected:
    return BatchRejected(ErrorCode.INVALID_RECORD, message)


def produced_batch(records: bytes | None, version: int) -> tuple[BatchInfo, int]:
    """The one batch a Produce (v3+) partition carries, checked before anything is stored;
    returns it with the bytes it spans. Raises BatchRejected with Kafka's error code.

    In Kafka's order: walking the batches (a length below the smallest record or a
    magic above 2 is CORRUPT_MESSAGE; a batch cut short at the end is left out, as
    Kafka trims it), then the request's rules (exactly one batch, magic 2, no zstd
    before v7: INVALID_RECORD / UNSUPPORTED_COMPRESSION_TYPE), then the batch itself
    (base offset 0, CRC-32C: CORRUPT_MESSAGE; record count, offsets, control and
    sequence fields, records present: INVALID_RECORD).
    """
    if not records:
        raise _no_batch(version)
    if len(records) < HEADER_SIZE:  # no whole batch fits: only error answers remain
        _refuse_short(records, version)
    # The header at once; each check below reads the field Kafka checks at that step.
    (base, length, _epoch, magic, crc, attrs, last_delta, base_ts, max_ts,
     pid, _pepoch, seq, count) = _HEADER.unpack_from(records, 0)
    if length < _MIN_RECORD_OVERHEAD:
        raise _corrupt(f"Record size {length} is less than the minimum record overhead"
                       f" ({_MIN_RECORD_OVERHEAD})")
    if magic > 2 or magic < 0:  # -128..-1: the negative magics Kafka also refuses
        raise _corrupt(f"Invalid magic found in record: {magic & 0xFF}")
    first = length + _LOG_OVERHEAD
    if first > len(records):
        raise _no_batch(version)
    _check_placement(records, version, first, magic, attrs, base)
    if crc32c(memoryview(records)[_CRC_START:first]) != crc:
        raise _corrupt(f"Record is corrupt (stored crc = {crc})")
    if count <= 0:
        raise _invalid(f"Invalid reported count for record batch: {count}")
    if last_delta + 1 != count:
        raise _invalid(f"Inconsistent batch offset range [0, {last_delta}] and count of"
                       f" records {count}")
    if attrs & _CONTROL:
        raise _invalid("Clients are not allowed to write control records")
    if pid >= 0 and seq < 0:
        raise _invalid(f"Invalid sequence number {seq} in record batch with producerId {pid}")
    if attrs & 0x07 == 0:
        _check_records(records, first, count)
    return BatchInfo(0, first, last_delta, base_ts, max_ts, count, attrs), first


def _no_batch(version: int) -> BatchRejected:
    return _invalid(f"Produce requests with version {version} must have at least one"
                    " record batch per partition")


def _check_placement(records: bytes, version: int, first: int, magic: int, attrs: int,
                     base: int) -> None:
    """The request's rules (magic 2, a known compression, zstd from v7 on, exactly one
    batch), then the batch's base offset 0 and a whole header."""
    if magic != 2:
        raise _invalid(f"Produce requests with version {version} are only allowed to contain"
                       " record batches with magic version 2")
    codec = attrs & 0x07
    if codec == _ZSTD and version < 7:
        raise BatchRejected(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                            f"Produce requests with version {version} are not allowed to use"
                            " ZStandard compression")
    if codec > _ZSTD:
        raise _invalid(f"Unknown compression type id {codec}")
    if len(records) - first >= _LOG_OVERHEAD and _next_batch_size(records, first) is not None:
        raise _invalid(f"Produce requests with version {version} are only allowed to contain"
                       " exactly one record batch per partition")
    if base != 0:
        raise _invalid(f"The baseOffset of the record batch should be 0, but it is {base}")
    if first < HEADER_SIZE:
        raise _corrupt(f"Record batch is corrupt (the size {first} is smaller than the minimum"
                       f" allowed overhead {HEADER_SIZE})")


def _refuse_short(records: bytes, version: int) -> NoReturn:
    """The error for records shorter than a batch header, in Kafka's order."""
    first = _next_batch_size(records, 0)
    if first is None:
        raise _no_batch(version)
    (attrs,) = _I16.unpack_from(records, _ATTRIBUTES_AT)  # a whole batch is >= 26 bytes
    (base,) = _I64.unpack_from(records, 0)
    _check_placement(records, version, first, records[_MAGIC_AT], attrs, base)
    raise AssertionError(f"a batch of {first} bytes, shorter than a header, was let through")


def _next_batch_size(records: bytes, pos: int) -> int | None:
    """Size of the batch at `pos`, or None where the batches end (nothing more, or a batch
    cut short: Kafka stops there); CORRUPT_MESSAGE for a length or magic no batch has."""
    remaining = len(records) - pos
    if remaining < _LOG_OVERHEAD:
        return None
    (length,) = _I32.unpack_from(records, pos + 8)
    if length < _MIN_RECORD_OVERHEAD:
        raise _corrupt(f"Record size {length} is less than the minimum record overhead"
                       f" ({_MIN_RECORD_OVERHEAD})")
    if remaining < _MAGIC_AT + 1:
        return None
    magic = records[pos + _MAGIC_AT]
    if magic > 2:  # a byte: 128-255 are the negative magics Kafka also refuses
        raise _corrupt(f"Invalid magic found in record: {magic}")
    size = length + _LOG_OVERHEAD
    return None if remaining < size else size


def _record_steps() -> array[int]:
    """For the first two bytes of a record (read little-endian), the bytes from its start
    to its end, where its length is a varint of one or two bytes (below 8 KiB) and not
    negative; 0 for every other case, which `read_varint` reads."""
    steps = array("H", bytes(2 * 65536))
    for first in range(0, 0x80, 2):  # one byte: the second is the record's own
        steps[first::256] = array("H", [1 + (first >> 1)]) * 256
    for first in range(0x80, 0x100, 2):
        for second in range(0x80):
            steps[first | second << 8] = 2 + (((first & 0x7F) | second << 7) >> 1)
    return steps


_STEPS = _record_steps()
_U16LE = struct.Struct("<H").unpack_from


def _check_records(batch: bytes, end: int, count: int) -> None:
    """An uncompressed batch holds exactly `count` (> 0) records, each within the batch.

    Produce checks every record, so a record's length is not decoded: its first two
    bytes index `_STEPS`, which says how far the record reaches. Records that all
    start with the same length bytes are as long as each other; when `count` of the
    first one's length fill the batch exactly, comparing those bytes at every record
    start (two slices) proves what the walk below would find record by record."""
    pos = HEADER_SIZE
    steps = _STEPS
    u16 = _U16LE
    try:
        step = steps[u16(batch, pos)[0]]
    except struct.error:  # fewer than two bytes left
        step = 0
    if step and step * count == end - pos and _same_length_bytes(batch, pos, end, step, count):
        return
    try:
        for _ in range(count):
            try:
                step = steps[u16(batch, pos)[0]]
            except struct.error:  # fewer than two bytes left
                step = 0
            if step:
                pos += step
                if pos > end:
                    raise _invalid("Incorrect declared batch size, premature EOF reached")
                continue
            length, pos = read_varint(batch, pos)
            if length < 0 or pos + length > end:
                raise _invalid("Incorrect declared batch size, premature EOF reached")
            pos += length
    except (IndexError, DecodeError):
        raise _invalid("Incorrect declared batch size, premature EOF reached") from None
    if pos != end:
        raise _invalid("Incorrect declared batch size, records still remaining in file")


def _same_length_bytes(batch: bytes, pos: int, end: int, step: int, count: int) -> bool:
    """Whether every record from `pos` on, `step` bytes apart, starts with the length
    bytes of the first: one byte when it is below 0x80, else two."""
    if batch[pos:end:step] != batch[pos:pos + 1] * count:
        return False
    return batch[pos] < 0x80 or batch[pos + 1:end:step] == batch[pos + 1:pos + 2] * count


def encode_batch(base_offset: int, records: Sequence[tuple[bytes | None, bytes | None, int]],
                 deltas: Sequence[int] | None = None, last_offset_delta: int | None = None
                 ) -> tuple[bytes, BatchInfo]:
    """One uncompressed v2 batch of (key, value, timestamp) records, offsets from
    `base_offset`, and its BatchInfo: what the broker writes itself (an internal topic).

    `deltas` places the records at those offset deltas instead of 0..n-1, and
    `last_offset_delta` lets the batch span further: a compacted batch keeps the offsets
    of the records it kept and the range of those it dropped, as Kafka's cleaner does."""
    base_ts = min(ts for _, _, ts in records)
    max_ts = max(ts for _, _, ts in records)
    body = bytearray()
    small = _SMALL_VARINTS
    for i, (key, value, ts) in enumerate(records):
        delta = i if deltas is None else deltas[i]
        ts_delta = ts - base_ts
        rec = b"".join((
            b"\x00",  # record attributes
            small[ts_delta] if ts_delta < _SMALL else varint_bytes(ts_delta),
            small[delta] if delta < _SMALL else varint_bytes(delta),
            _NULL if key is None else
            (small[len(key)] if len(key) < _SMALL else varint_bytes(len(key))) + key,
            _NULL if value is None else
            (small[len(value)] if len(value) < _SMALL else varint_bytes(len(value))) + value,
            b"\x00",  # no headers
        ))
        body += small[len(rec)] if len(rec) < _SMALL else varint_bytes(len(rec))
        body += rec
    last_delta = len(records) - 1 if deltas is None else deltas[-1]
    if last_offset_delta is not None:
        last_delta = max(last_delta, last_offset_delta)
    # From the attributes on: attributes, lastOffsetDelta, baseTimestamp, maxTimestamp,
    # producerId, producerEpoch, baseSequence, recordCount, records.
    covered = _CRC_COVERED.pack(0, last_delta, base_ts, max_ts, -1, -1, -1, len(records)) + body
    head = _LEADING.pack(base_offset, len(covered) + 9, 0, 2, crc32c(covered))
    batch = head + covered
    return batch, BatchInfo(0, len(batch), last_delta, base_ts, max_ts, len(records), 0)


_CRC_COVERED = struct.Struct(">hiqqqhii")
_SMALL = 1 << 13
_SMALL_VARINTS = [varint_bytes(n) for n in range(_SMALL)]  # lengths and deltas, mostly
_NULL = varint_bytes(-1)
_LEADING = struct.Struct(">qiibI")
# -- transactions: who wrote a batch, and the markers that end transactions -------------

_TRANSACTIONAL = 0x10
_PRODUCER = struct.Struct(">qhi")  # producerId, producerEpoch, baseSequence
_PRODUCER_AT = 43
_CONTROL_KEY = struct.Struct(">hh")  # version, type (0 abort, 1 commit)
_CONTROL_VALUE = struct.Struct(">hi")  # version, coordinator epoch


class BatchProducer(NamedTuple):
    """The producer fields of a v2 batch header: what idempotence and transactions check."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    transactional: bool
    control: bool


def has_producer_id(batch: bytes | memoryview) -> bool:
    """Whether the batch names a producer (idempotent or transactional): the sign bit of
    its producerId, read without unpacking the header."""
    return batch[_PRODUCER_AT] < 0x80


def batch_producer(batch: bytes | memoryview) -> BatchProducer:
    pid, epoch, seq = _PRODUCER.unpack_from(batch, _PRODUCER_AT)
    (attrs,) = _I16.unpack_from(batch, _ATTRIBUTES_AT)
    return BatchProducer(pid, epoch, seq, bool(attrs & _TRANSACTIONAL), bool(attrs & _CONTROL))


def control_batch(producer_id: int, producer_epoch: int, commit: bool, timestamp_ms: int,
                  coordinator_epoch: int = 0) -> bytes:
    """A transaction marker: a transactional control batch of one record whose key says
    commit or abort (base offset 0: the partition sets it when appending)."""
    key = _CONTROL_KEY.pack(0, 1 if commit else 0)
    value = _CONTROL_VALUE.pack(0, coordinator_epoch)
    body = (b"\x00" + varint_bytes(0) + varint_bytes(0) + varint_bytes(len(key)) + key
            + varint_bytes(len(value)) + value + varint_bytes(0))
    record = varint_bytes(len(body)) + body
    after_crc = struct.pack(">hiqqqhii", _TRANSACTIONAL | _CONTROL, 0, timestamp_ms,
                            timestamp_ms, producer_id, producer_epoch, -1, 1) + record
    length = 4 + 1 + 4 + len(after_crc)  # partitionLeaderEpoch, magic, crc, the rest
    head = struct.pack(">qiib", 0, length, 0, 2)
    return head + struct.pack(">I", crc32c(after_crc)) + after_crc


def control_type(batch: bytes | memoryview) -> int | None:
    """1 for a commit marker, 0 for an abort marker, None for another control batch."""
    body = memoryview(batch)[HEADER_SIZE:]
    try:
        _length, pos = read_varint(body, 0)
        pos += 1
        _ts, pos = read_varint(body, pos)
        _off, pos = read_varint(body, pos)
        key_length, pos = read_varint(body, pos)
        if key_length < 4:
            return None
        _version, kind = _CONTROL_KEY.unpack_from(body, pos)
    except (IndexError, struct.error, DecodeError):
        return None
    return kind if kind in (0, 1) else None
