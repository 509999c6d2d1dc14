"""Magic-v2 record batches built here, independently of the server's parser.

The fuzzer's Produce frames and the batch-validation tests carry batches a
real producer would send (CRC-32C over attributes..end, varint records), so
the server is checked against bytes it did not write itself.
"""

from __future__ import annotations

import struct

from crc32c import crc32c

from kcsim.protocol.primitives import varint_bytes

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc
PREFIX = struct.Struct(">qiibI")
# attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId,
# producerEpoch, baseSequence, recordCount
AFTER_CRC = struct.Struct(">hiqqqhii")
CRC_START = 21
CRC_AT = 17
TIMESTAMP = 1_700_000_000_000


def record(offset_delta: int, value: bytes, key: bytes | None = None) -> bytes:
    body = b"".join((
        b"\x00",  # attributes
        varint_bytes(0),  # timestamp delta
        varint_bytes(offset_delta),
        varint_bytes(-1) if key is None else varint_bytes(len(key)) + key,
        varint_bytes(len(value)), value,
        b"\x00",  # no headers
    ))
    return varint_bytes(len(body)) + body


def batch(values: list[bytes], *, base_offset: int = 0, attributes: int = 0,
          last_offset_delta: int | None = None, count: int | None = None,
          producer_id: int = -1, base_sequence: int = -1, magic: int = 2,
          records: bytes | None = None, producer_epoch: int | None = None) -> bytes:
    """One batch holding `values` as records 0..n-1; the keyword arguments build batches
    whose header lies about them (the CRC is computed over whatever is given)."""
    n = len(values)
    body = records if records is not None else b"".join(
        record(i, v) for i, v in enumerate(values))
    after_crc = AFTER_CRC.pack(
        attributes, n - 1 if last_offset_delta is None else last_offset_delta,
        TIMESTAMP, TIMESTAMP, producer_id,
        producer_epoch if producer_epoch is not None else (0 if producer_id >= 0 else -1),
        base_sequence,
        n if count is None else count) + body
    length = 4 + 1 + 4 + len(after_crc)  # epoch, magic, crc, then the CRC'd part
    return PREFIX.pack(base_offset, length, -1, magic, crc32c(after_crc)) + after_crc
