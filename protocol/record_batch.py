"""Kafka record batches (magic v2): just enough to count records and assign offsets.

Batches are stored exactly as received. The broker rewrites only the base
offset (bytes 0-7), which lies outside the CRC, so the client's CRC stays valid.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, NamedTuple

from .primitives import DecodeError, read_varint

if TYPE_CHECKING:
    from collections.abc import Iterator

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
