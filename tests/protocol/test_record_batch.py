"""Produce walks every record of an uncompressed batch: the count in the header must
match the records, whatever width their length varints take."""

from __future__ import annotations

import struct

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.record_batch import BatchRejected, produced_batch

from ..server.fuzz.batches import batch

# Record lengths of one, two and three varint bytes (the boundaries are 64 and 8,192).
SIZES = st.one_of(st.integers(0, 70), st.integers(8_150, 8_250), st.integers(20_000, 20_100))
PRODUCE_V = 9


@given(st.lists(SIZES, min_size=1, max_size=6))
def test_a_batch_whose_count_matches_its_records_is_accepted(sizes: list[int]) -> None:
    raw = batch([b"v" * size for size in sizes])
    info, spans = produced_batch(raw, PRODUCE_V)
    assert (info.record_count, spans) == (len(sizes), len(raw))


@given(st.lists(SIZES, min_size=1, max_size=6), st.sampled_from([-1, 1]))
def test_a_count_off_by_one_is_invalid_record(sizes: list[int], off: int) -> None:
    count = len(sizes) + off
    assume(count > 0)  # a count of 0 is refused before the records are walked
    raw = batch([b"v" * size for size in sizes], count=count, last_offset_delta=count - 1)
    with pytest.raises(BatchRejected) as rejected:
        produced_batch(raw, PRODUCE_V)
    assert rejected.value.code == ErrorCode.INVALID_RECORD
    assert ("premature EOF" if off > 0 else "records still remaining") in str(rejected.value)


@pytest.mark.parametrize("length", [b"\x01", b"\x81\x01", b"\x81\x80\x01"])  # -1, -65, -8193
def test_a_negative_record_length_is_invalid_record(length: bytes) -> None:
    raw = batch([b"v"], records=length + bytes(80))
    with pytest.raises(BatchRejected) as rejected:
        produced_batch(raw, PRODUCE_V)
    assert rejected.value.code == ErrorCode.INVALID_RECORD
    assert "premature EOF" in str(rejected.value)


_TAIL = struct.pack(">qiib", 0, 0x7FFFFFFF, -1, 2) + bytes(40)  # a second batch cut short


@pytest.mark.parametrize(("records", "code", "says"), [
    # a batch of 32 bytes, shorter than a batch header, with or without bytes after it
    (struct.pack(">qiib", 0, 20, -1, 2) + bytes(15), ErrorCode.CORRUPT_MESSAGE,
     "the size 32 is smaller than the minimum"),
    (struct.pack(">qiib", 0, 20, -1, 2) + bytes(15) + _TAIL, ErrorCode.CORRUPT_MESSAGE,
     "the size 32 is smaller than the minimum"),
    (struct.pack(">qiib", 3, 20, -1, 2) + bytes(15) + _TAIL, ErrorCode.INVALID_RECORD,
     "baseOffset of the record batch should be 0, but it is 3"),
    (struct.pack(">qiib", 0, 20, -1, 1) + bytes(15) + _TAIL, ErrorCode.INVALID_RECORD,
     "magic version 2"),
    (struct.pack(">qiib", 0, 13, -1, 2) + bytes(60), ErrorCode.CORRUPT_MESSAGE,
     "Record size 13 is less than the minimum record overhead"),
    (struct.pack(">qiib", 0, 100, -1, 2) + bytes(60), ErrorCode.INVALID_RECORD,
     "must have at least one record batch"),
])
def test_a_batch_header_is_checked_in_kafkas_order(records: bytes, code: int, says: str) -> None:
    with pytest.raises(BatchRejected) as rejected:
        produced_batch(records, PRODUCE_V)
    assert rejected.value.code == code
    assert says in str(rejected.value)
