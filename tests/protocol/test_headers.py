"""Request headers: every version, a null client id, header tagged fields, truncation."""

from __future__ import annotations

import pytest

from kcsim.protocol.headers import (
    RequestHeader,
    decode_request_header,
    encode_request_header,
    read_client_id,
)
from kcsim.protocol.primitives import DecodeError

BODY = b"\x07\x07"


@pytest.mark.parametrize("header_version", [0, 1, 2])
@pytest.mark.parametrize("client_id", ["consumer-1", "", None, "ünïcode"])
def test_headers_round_trip_and_the_body_starts_after_them(header_version, client_id):
    header = RequestHeader(8, 8, 12345, client_id)
    frame = encode_request_header(header, header_version) + BODY
    decoded, pos = decode_request_header(frame, header_version)
    expected_id = client_id if header_version >= 1 else None
    assert decoded == RequestHeader(8, 8, 12345, expected_id)
    assert read_client_id(frame, header_version) == (expected_id, pos)
    assert frame[pos:] == BODY


def test_tagged_fields_of_a_v2_header_are_skipped():
    head = encode_request_header(RequestHeader(8, 8, 1, "c"), 1)
    frame = head + b"\x02" + b"\x00\x01\xaa" + b"\x05\x02\xbb\xcc" + BODY
    client_id, pos = read_client_id(frame, 2)
    assert (client_id, frame[pos:]) == ("c", BODY)


@pytest.mark.parametrize("cut", [9, 11, 16])
def test_a_header_cut_short_is_an_error(cut):
    """The errors the broker turns into closing the connection, as Kafka does."""
    frame = encode_request_header(RequestHeader(8, 8, 1, "client"), 2)[:cut]
    with pytest.raises(DecodeError):
        read_client_id(frame, 2)


def test_tagged_fields_past_the_end_are_an_error():
    frame = encode_request_header(RequestHeader(8, 8, 1, "c"), 1) + b"\x01\x00\x09\xaa"
    with pytest.raises(DecodeError):
        read_client_id(frame, 2)
