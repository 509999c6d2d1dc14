"""Magic-v2 record batches built here, independently of the server's parser.

Building them in the bench (header, CRC-32C over attributes..end, varint
records) means the produce workload also checks that kcsim accepts batches it
did not write itself, and `walk` re-checks every fetched batch's CRC.
"""

from __future__ import annotations

import struct
import time
from typing import NamedTuple

import crc32c

from kcsim.protocol.primitives import varint_bytes

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc
_PREFIX = struct.Struct(">qiibI")
# attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId,
# producerEpoch, baseSequence, recordCount
_AFTER_CRC = struct.Struct(">hiqqqhii")
_HEADER = struct.Struct(">qiibIhiqqqhii")
CRC_START = 21  # attributes follow baseOffset(8) length(4) epoch(4) magic(1) crc(4)
_NULL = varint_bytes(-1)


def record(offset_delta: int, value: bytes, key: bytes | None = None,
           timestamp_delta: int = 0) -> bytes:
    body = b"".join((
        b"\x00",  # attributes
        varint_bytes(timestamp_delta),
        varint_bytes(offset_delta),
        _NULL if key is None else varint_bytes(len(key)) + key,
        varint_bytes(len(value)), value,
        b"\x00",  # no headers
    ))
    return varint_bytes(len(body)) + body


TRANSACTIONAL = 0x10


def batch(values: list[bytes], base_offset: int = 0, timestamp_ms: int | None = None, *,
          producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
          transactional: bool = False) -> bytes:
    """One uncompressed batch holding `values` as records 0..n-1 (of an idempotent or
    transactional producer when `producer_id` is given)."""
    ts = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    recs = b"".join(record(i, v) for i, v in enumerate(values))
    after_crc = _AFTER_CRC.pack(TRANSACTIONAL if transactional else 0, len(values) - 1, ts, ts,
                                producer_id, producer_epoch, base_sequence, len(values)) + recs
    crc = crc32c.crc32c(after_crc)
    length = 4 + 1 + 4 + len(after_crc)  # epoch, magic, crc, then the CRC'd part
    return _PREFIX.pack(base_offset, length, -1, 2, crc) + after_crc


class BatchSummary(NamedTuple):
    batches: int
    records: int
    first_offset: int
    next_offset: int  # one past the last record


def walk(buf: bytes, check_crc: bool = True) -> BatchSummary:
    """Count batches and records in a `records` field, checking magic and CRC."""
    view = memoryview(buf)
    pos = 0
    end = len(buf)
    batches = records = 0
    first = next_offset = -1
    while end - pos >= _HEADER.size:
        (base, length, _epoch, magic, crc, _attrs, last_delta, _bts, _mts,
         _pid, _pep, _seq, count) = _HEADER.unpack_from(buf, pos)
        size = 12 + length
        if pos + size > end:
            break  # a truncated trailing batch is allowed by the protocol
        if magic != 2:
            raise ValueError(f"batch at byte {pos} has magic {magic}")
        if check_crc and crc32c.crc32c(view[pos + CRC_START : pos + size]) != crc:
            raise ValueError(f"batch at offset {base} fails its CRC-32C")
        if first < 0:
            first = base
        next_offset = base + last_delta + 1
        batches += 1
        records += count
        pos += size
    return BatchSummary(batches, records, first, next_offset)
