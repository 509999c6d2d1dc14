"""Malformed requests are refused by the decoder, as Kafka's generated readers refuse them.

Every refusal is a DecodeError naming the message, its version and the field;
what Kafka reads leniently (any negative length of a nullable field is null,
malformed UTF-8 is replaced, bytes after the body are left alone) is read the
same way here.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest

from kcsim.protocol.codecs import codec
from kcsim.protocol.primitives import DecodeError, uvarint_bytes

JOIN_GROUP, OFFSET_COMMIT, API_VERSIONS, METADATA = 11, 8, 18, 3

I16 = struct.Struct(">h").pack
I32 = struct.Struct(">i").pack
I64 = struct.Struct(">q").pack


def join_group_v1(metadata_length: bytes, metadata: bytes = b"") -> bytes:
    """JoinGroup v1 body with one protocol whose metadata carries the given length prefix."""
    return (I16(1) + b"g" + I32(10000) + I32(30000) + I16(0) + I16(8) + b"consumer"
            + I32(1) + I16(5) + b"range" + metadata_length + metadata)


def offset_commit_v8(group: bytes = b"\x02g", tail: bytes = b"\x00\x01") -> bytes:
    """OffsetCommit v8 body: the group id's compact string is `group`; `tail` is
    group_instance_id, topics and the tagged-field count after member_id."""
    return group + I32(-1) + b"\x01" + tail + b"\x00"


def decode(api_key: int, version: int, body: bytes) -> Any:
    obj, end = codec(api_key, "request").decoder(version)(body, 0)
    return obj, end


def refusal(api_key: int, version: int, body: bytes) -> str:
    with pytest.raises(DecodeError) as info:
        decode(api_key, version, body)
    return str(info.value)


@pytest.mark.parametrize("length", [-1, -2, -(2**31)])
def test_a_null_in_a_non_nullable_bytes_field_is_refused(length: int) -> None:
    """The frame that made the handler crash: JoinGroup v1 metadata of length -1 (or less)."""
    message = refusal(JOIN_GROUP, 1, join_group_v1(I32(length)))
    assert "JoinGroupRequest v1" in message
    assert "protocols[].metadata" in message
    assert "non-nullable" in message


def test_a_null_in_a_non_nullable_classic_string_is_refused() -> None:
    message = refusal(JOIN_GROUP, 3, I16(-1) + join_group_v1(b"")[3:])
    assert "JoinGroupRequest v3, field group_id: non-nullable string is null" in message


def test_a_compact_null_in_a_non_nullable_string_is_refused() -> None:
    message = refusal(OFFSET_COMMIT, 8, offset_commit_v8(group=b"\x00"))
    assert "OffsetCommitRequest v8, field group_id: non-nullable string is null" in message


def test_a_compact_null_in_a_non_nullable_array_is_refused() -> None:
    message = refusal(OFFSET_COMMIT, 8, offset_commit_v8(tail=b"\x00\x00"))
    assert "OffsetCommitRequest v8, field topics: non-nullable array is null" in message


@pytest.mark.parametrize("length", [-1, -7])
def test_any_negative_length_of_a_nullable_field_is_null(length: int) -> None:
    """Kafka reads every negative length of a nullable field as null, not just -1."""
    body = (I16(1) + b"g" + I32(1) + I16(1) + b"m" + I32(1)  # group, generation, member, 1 topic
            + I16(1) + b"t" + I32(1) + I32(0) + I64(5) + I64(-1) + I16(length))
    obj, end = decode(OFFSET_COMMIT, 1, body)
    assert end == len(body)
    assert obj.topics[0].partitions[0].committed_metadata is None


def test_a_length_past_the_end_of_the_frame_is_refused() -> None:
    message = refusal(JOIN_GROUP, 1, join_group_v1(I32(50), b"abc"))
    assert "JoinGroupRequest v1, field protocols[].metadata: bytes length 50 runs past the end" in message


def test_an_array_count_past_the_end_of_the_frame_is_refused() -> None:
    body = join_group_v1(b"")[: -(4 + 2 + 5)] + I32(1_000_000)
    message = refusal(JOIN_GROUP, 1, body)
    assert "field protocols: array of 1000000 items runs past the end" in message


def test_a_scalar_array_needs_room_for_every_item() -> None:
    """OffsetFetch v1 partition indexes are int32s: a count of 3 needs 12 bytes, not 3."""
    body = I16(1) + b"g" + I32(1) + I16(1) + b"t" + I32(3) + b"\x00" * 8
    message = refusal(9, 1, body)
    assert "OffsetFetchRequest v1, field topics[].partition_indexes: array of 3 items" in message


def test_a_compact_string_over_32767_bytes_is_refused() -> None:
    body = offset_commit_v8(group=uvarint_bytes(40000 + 1) + b"g" * 40000)
    message = refusal(OFFSET_COMMIT, 8, body)
    assert "field group_id: string length 40000 is over 32767" in message


def test_a_tagged_field_running_past_the_frame_is_refused() -> None:
    body = offset_commit_v8()[:-1] + b"\x01" + uvarint_bytes(7) + uvarint_bytes(100) + b"xy"
    message = refusal(OFFSET_COMMIT, 8, body)
    assert "OffsetCommitRequest v8, field (tagged fields): tag 7 of 100 bytes runs past" in message


def test_unknown_tagged_fields_within_the_frame_are_skipped() -> None:
    body = offset_commit_v8()[:-1] + b"\x01" + uvarint_bytes(7) + uvarint_bytes(2) + b"xy"
    obj, end = decode(OFFSET_COMMIT, 8, body)
    assert (obj.group_id, end) == ("g", len(body))


@pytest.mark.parametrize("cut", range(1, 10))
def test_a_frame_cut_inside_a_fixed_width_field_names_the_field(cut: int) -> None:
    body = join_group_v1(I32(0))[:3 + cut]  # cut inside the two int32 timeouts or after
    message = refusal(JOIN_GROUP, 1, body)
    assert message.startswith("JoinGroupRequest v1, field ")
    field = message.split(", field ")[1].split(":")[0]
    assert field in {"session_timeout_ms", "rebalance_timeout_ms", "member_id"}


def test_a_cut_uuid_names_the_field() -> None:
    """Metadata v10 topics carry a topic id: a frame ending inside it."""
    body = b"\x02" + b"\x00" * 7
    message = refusal(METADATA, 10, body)
    assert "MetadataRequest v10, field topics[].topic_id" in message


def test_malformed_utf8_is_replaced_as_kafka_does() -> None:
    body = I16(2) + b"\xff\xfe" + join_group_v1(b"")[3:] + I32(0)
    obj, _ = decode(JOIN_GROUP, 1, body)
    assert obj.group_id == "\ufffd\ufffd"


def test_the_decoder_stops_at_the_end_of_the_message() -> None:
    """Bytes after a request body are left alone (a Kafka broker ignores them); decoding
    a whole buffer refuses them."""
    body = join_group_v1(I32(0)) + b"extra"
    obj, end = decode(JOIN_GROUP, 1, body)
    assert (obj.group_id, end) == ("g", len(body) - 5)
    with pytest.raises(DecodeError, match="JoinGroupRequest v1: 5 bytes after the message"):
        codec(JOIN_GROUP, "request").decode(body, 1)


def test_api_versions_refusals_name_the_field() -> None:
    """ApiVersions v3 compact strings: the software name claims more than the frame has."""
    message = refusal(API_VERSIONS, 3, b"\x7fabc")
    assert "ApiVersionsRequest v3, field client_software_name" in message
