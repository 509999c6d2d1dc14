"""Paths of the generated codecs that small random messages rarely reach.

Fixed-width fields are read together with the first byte of the varint that
follows them (a length or a tagged-field count); a varint longer than one
byte, or a non-empty tagged section, takes a slower path. The round-trip
properties keep strings and arrays short, so these cases are built here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from kcsim.protocol.codecs import codec
from kcsim.protocol.primitives import uvarint_bytes

from .test_roundtrip import CASES, SAMPLE, filled

if TYPE_CHECKING:
    from kcsim.protocol.compiler import MessageCodec

LONG = 130  # items, bytes and characters: every length needs a two-byte varint
LONG_SAMPLE = {**SAMPLE, "string": "é" * LONG, "bytes": b"b" * LONG, "records": b"r" * LONG}


@pytest.mark.parametrize(("c", "version"), CASES)
def test_long_values_roundtrip(c: MessageCodec, version: int) -> None:
    msg = filled(c, c.message.body, version, c.cls, sample=LONG_SAMPLE, items=LONG,
                 scalar_items=LONG)
    wire = c.encode(msg, version)
    assert c.decode(wire, version) == msg
    obj, end = c.decoder(version)(memoryview(wire), 0)  # the server passes views
    assert (obj, end) == (msg, len(wire))


def test_unknown_tags_after_fixed_fields_are_skipped() -> None:
    """OffsetCommit v8 response partitions end with fixed fields, then their tag count."""
    c = codec(8, "response")
    cls: Any = c.cls
    unknown = uvarint_bytes(2) + uvarint_bytes(5) + b"\x02ab" + uvarint_bytes(300) + b"\x00"
    wire = (
        b"\x00\x00\x00\x07"  # throttle_time_ms
        + b"\x02" + b"\x02t"  # one topic, named "t"
        + b"\x03"  # two partitions
        + b"\x00\x00\x00\x01" + b"\x00\x03" + unknown
        + b"\x00\x00\x00\x02" + b"\x00\x00" + b"\x00"
        + b"\x00"  # topic tags
        + b"\x00"  # response tags
    )
    expected = cls(throttle_time_ms=7, topics=[cls.OffsetCommitResponseTopic(name="t", partitions=[
        cls.OffsetCommitResponsePartition(partition_index=1, error_code=3),
        cls.OffsetCommitResponsePartition(partition_index=2, error_code=0),
    ])])
    assert c.decode(wire, 8) == expected
