"""Kafka record batches as the log cleaner sees them (`kcsim.storage.BatchRecords`).

Storage's cleaner (`kcsim.storage.clean_segments`, the algorithm the record log's
compaction uses too) keeps each key's newest record; this module says what a
record, a key and a tombstone are in a v2 batch, and what Kafka's cleaner does with
what is not an ordinary record:

- a record without a key goes (Kafka's cleaner counts it invalid and drops it);
- the data of an aborted transaction goes, whatever its keys (it never was);
- a transaction marker stays while any record of its transaction does, and until
  `delete.retention.ms` after it was written, as a tombstone does;
- a batch all of whose records went leaves nothing, except the last batch of an
  idempotent producer, kept empty so its sequence numbers survive a restart.

A batch that keeps every record is kept as it is (the same bytes object, which is
how the cleaner knows a segment is unchanged); one that keeps some is rebuilt with
the same header (base offset, offset range, timestamps, producer) around the kept
records' bytes, which are relative to that header and so copied verbatim. A
compressed batch is rebuilt uncompressed.
"""

from __future__ import annotations

import logging
import struct
from typing import TYPE_CHECKING

from crc32c import crc32c

from kcsim.protocol.compression import CompressionError, decompress
from kcsim.protocol.primitives import read_varint

if TYPE_CHECKING:
    from collections.abc import Iterable

    from kcsim.storage import CleanedBatch

    from .producer_state import Aborted

log = logging.getLogger("kcsim.log_cleaner")

_HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = _HEADER.size  # 61
_ATTRIBUTES_AT = 21
_TRANSACTIONAL = 0x10
_CONTROL = 0x20
_CODEC = 0x07
_LOG_APPEND_TIME = 0x08
_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. recordCount
_MAX_TIMESTAMP = struct.Struct(">q")
_MAX_TIMESTAMP_AT = 35
_LAST_OFFSET_DELTA = struct.Struct(">i")
_LAST_OFFSET_DELTA_AT = 23

Listed = list[tuple[bytes | None, bool, int]]


class KafkaBatches:
    """One cleaning of one partition: the aborted transactions it skips, the markers it may
    drop (written before `expire_before_ms`), what it learnt in the first pass."""

    def __init__(self, aborted: Iterable[Aborted], expire_before_ms: int) -> None:
        self._aborted: dict[int, list[tuple[int, int]]] = {}
        for a in aborted:
            self._aborted.setdefault(a.producer_id, []).append((a.first_offset, a.last_offset))
        self._expire_before_ms = expire_before_ms
        self._last_batch_of: dict[int, int] = {}  # idempotent producer -> its last batch's base
        self._second_pass = False
        self._txn_kept: dict[int, bool] = {}  # producer -> a record of its transaction stayed
        self._whole: set[int] = set()  # batches that cannot be inflated here: kept whole

    # -- BatchRecords -------------------------------------------------------------------

    def records(self, base: int, batch: bytes) -> Listed | None:
        header = _HEADER.unpack_from(batch)
        attributes, producer_id = header[5], header[9]
        if attributes & _CONTROL or (attributes & _TRANSACTIONAL
                                     and self._is_aborted(producer_id, base)):
            return None
        if producer_id >= 0 and not self._second_pass:
            self._last_batch_of[producer_id] = base
        body = self._body(batch, header)
        return None if body is None else _read_records(*body, header, None)

    def filtered(self, base: int, batch: bytes, keep: list[bool] | None) -> CleanedBatch | None:
        self._second_pass = True
        header = _HEADER.unpack_from(batch)
        attributes, last_delta, max_ts, producer_id = header[5], header[6], header[8], header[9]
        if keep is None:
            if base in self._whole:
                return base, last_delta, batch, max_ts
            if not attributes & _CONTROL:
                return None  # an aborted transaction's data
            if self._txn_kept.pop(producer_id, False) or max_ts >= self._expire_before_ms:
                return base, last_delta, batch, max_ts
            return None  # a marker whose transaction left nothing, past its horizon
        if attributes & _TRANSACTIONAL and any(keep):
            self._txn_kept[producer_id] = True
        if all(keep):
            return base, last_delta, batch, max_ts
        if not any(keep) and (attributes & _TRANSACTIONAL or producer_id < 0
                              or self._last_batch_of.get(producer_id) != base):
            return None
        inflated = self._body(batch, header)
        assert inflated is not None
        spans: list[tuple[int, int]] = []
        _read_records(*inflated, header, spans)
        body = inflated[0]
        kept = b"".join([body[start:end] for (start, end), k in zip(spans, keep) if k])
        return base, last_delta, _rebuilt(batch, attributes & ~_CODEC, sum(keep), kept), max_ts

    def max_timestamp(self, batch: bytes) -> int:
        return int(_MAX_TIMESTAMP.unpack_from(batch, _MAX_TIMESTAMP_AT)[0])

    def last_offset_delta(self, batch: bytes) -> int:
        return int(_LAST_OFFSET_DELTA.unpack_from(batch, _LAST_OFFSET_DELTA_AT)[0])

    def gap(self, base: int, last: int, max_timestamp: int) -> CleanedBatch:
        after_crc = _AFTER_CRC.pack(0, last - base, max_timestamp, max_timestamp, -1, -1, -1, 0)
        batch = (struct.pack(">qiib", base, 9 + len(after_crc), 0, 2)
                 + struct.pack(">I", crc32c(after_crc)) + after_crc)
        return base, last - base, batch, max_timestamp

    # -- parsing ------------------------------------------------------------------------

    def _is_aborted(self, producer_id: int, offset: int) -> bool:
        return any(first <= offset <= last for first, last in self._aborted.get(producer_id, ()))

    def _body(self, batch: bytes, header: tuple[int, ...]) -> tuple[bytes, int] | None:
        """The bytes holding the batch's records, inflated, and where they start in them;
        None for a batch that cannot be inflated (kept whole)."""
        attributes = header[5]
        if not attributes & _CODEC:
            return batch, HEADER_SIZE
        try:
            return decompress(attributes & _CODEC, batch[HEADER_SIZE:]), 0
        except CompressionError as exc:
            log.warning("cannot clean a compressed batch at offset %d, keeping it whole: %s",
                        header[0], exc)
            self._whole.add(header[0])
            return None


def _read_records(body: bytes, pos: int, header: tuple[int, ...],
                  spans: list[tuple[int, int]] | None) -> Listed:
    """(key, tombstone, timestamp) of each record of `body` from `pos`; with `spans`,
    where each one is in it too."""
    attributes, base_ts, max_ts, count = header[5], header[7], header[8], header[12]
    append_time = attributes & _LOG_APPEND_TIME
    listed: Listed = []
    for _ in range(count):
        start = pos
        first = body[pos]
        if first < 0x80:  # the record's length, in one byte: most records
            length, pos = (first >> 1) ^ -(first & 1), pos + 1
        else:
            length, pos = read_varint(body, pos)
        end = pos + length
        ts_delta, pos = read_varint(body, pos + 1)  # after the record's attributes
        first = body[pos]
        pos += 1 if first < 0x80 else read_varint(body, pos)[1] - pos  # the offset delta
        key_length, pos = read_varint(body, pos)
        key = None
        if key_length >= 0:
            key = body[pos:pos + key_length]
            pos += key_length
        listed.append((key, body[pos] == 1,  # a value length of -1 is the varint 0x01
                       max_ts if append_time else base_ts + ts_delta))
        if spans is not None:
            spans.append((start, end))
        pos = end
    return listed


def _rebuilt(batch: bytes, attributes: int, count: int, records: bytes) -> bytes:
    """The batch's header (its offsets, timestamps and producer) around other records."""
    after_crc = (struct.pack(">h", attributes) + batch[_ATTRIBUTES_AT + 2:HEADER_SIZE - 4]
                 + struct.pack(">i", count) + records)
    return (batch[:8] + struct.pack(">i", 9 + len(after_crc)) + batch[12:17]
            + struct.pack(">I", crc32c(after_crc)) + after_crc)
