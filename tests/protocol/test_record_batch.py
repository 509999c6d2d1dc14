"""Produce walks every record of an uncompressed batch: the count in the header must
match the records, whatever width their length varints take."""

from __future__ import annotations

import struct

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.primitives import DecodeError, read_varint
from kcsim.protocol.record_batch import BatchRejected, produced_batch

from ..server.fuzz.batches import batch, record

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


def records_fit(body: bytes, count: int) -> bool:
    """The plain reading of the rule: `count` varint-prefixed records fill `body`."""
    pos = 0
    try:
        for _ in range(count):
            length, pos = read_varint(body, pos)
            if length < 0 or pos + length > len(body):
                return False
            pos += length
    except (IndexError, DecodeError):
        return False
    return pos == len(body)


@given(copies=st.integers(1, 20), size=SIZES, off=st.integers(-1, 1),
       where=st.one_of(st.none(), st.tuples(st.integers(0, 19), st.integers(0, 1)),
                       st.integers(0, 1 << 20)),
       value=st.integers(0, 255))
@example(copies=3, size=8_100, off=0, where=(1, 1), value=0x41)  # a second length byte
@example(copies=3, size=20, off=0, where=(2, 0), value=0x20)  # a first length byte
def test_records_of_one_size_are_checked_as_the_plain_walk_checks_them(
        copies: int, size: int, off: int, where: tuple[int, int] | int | None,
        value: int) -> None:
    """Records that all start with the same length bytes are checked in one go; with a
    byte changed (a record's first or second, or any), or a count one off, the answer
    is still the walk's."""
    one = record(0, b"v" * size)
    body = bytearray(one * copies)
    if isinstance(where, tuple):
        body[where[0] % copies * len(one) + where[1]] = value
    elif where is not None:
        body[where % len(body)] = value
    count = copies + off
    assume(count > 0)
    raw = batch([b""] * count, records=bytes(body))
    if records_fit(bytes(body), count):
        assert produced_batch(raw, PRODUCE_V)[1] == len(raw)
    else:
        with pytest.raises(BatchRejected) as rejected:
            produced_batch(raw, PRODUCE_V)
        assert rejected.value.code == ErrorCode.INVALID_RECORD


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
