"""Kafka record batches (magic v2): count records and assign offsets, and read records back.

Batches are stored exactly as received. The broker rewrites only the base
offset (bytes 0-7), which lies outside the CRC, so the client's CRC stays valid.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, NamedTuple

from .primitives import DecodeError, read_varint

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes,
# lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch,
# baseSequence, recordCount
_HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = _HEADER.size  # 61
_LOG_OVERHEAD = 12  # baseOffset + batchLength
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")


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
