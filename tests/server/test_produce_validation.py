"""Produce checks each partition's record batch before storing anything, as Kafka does.

A batch that is corrupt (bad length, magic or CRC-32C) answers CORRUPT_MESSAGE;
one that breaks the request's rules or lies about its records answers
INVALID_RECORD; either way the partition's log end offset does not move, and the
other partitions of the same request are appended as usual.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.protocol.codecs import codec
from kcsim.protocol.errors import ErrorCode

from .fuzz.batches import CRC_AT, batch, record
from .fuzz.wire import Connection

if TYPE_CHECKING:
    from kcsim.server.embedded import EmbeddedServer

PRODUCE, LIST_OFFSETS, CREATE_TOPICS = 0, 2, 19
PRODUCE_V, LIST_OFFSETS_V = 9, 7
TOPIC = "orders"

Produce = codec(PRODUCE, "request").cls
ListOffsets = codec(LIST_OFFSETS, "request").cls
CreateTopics = codec(CREATE_TOPICS, "request").cls

GOOD = batch([b"a", b"b"])


def flipped(raw: bytes, at: int) -> bytes:
    return raw[:at] + bytes([raw[at] ^ 0x01]) + raw[at + 1:]


def with_crc_of(raw: bytes, crc: int) -> bytes:
    return raw[:CRC_AT] + struct.pack(">I", crc) + raw[CRC_AT + 4:]


BAD = {
    # the batch's own bytes
    "flipped-record-byte": (flipped(GOOD, len(GOOD) - 3), ErrorCode.CORRUPT_MESSAGE),
    "wrong-crc": (with_crc_of(GOOD, 12345), ErrorCode.CORRUPT_MESSAGE),
    "length-below-a-record": (GOOD[:8] + struct.pack(">i", 5) + GOOD[12:],
                              ErrorCode.CORRUPT_MESSAGE),
    "magic-3": (GOOD[:16] + b"\x03" + GOOD[17:], ErrorCode.CORRUPT_MESSAGE),
    "magic-negative": (GOOD[:16] + b"\xfe" + GOOD[17:], ErrorCode.CORRUPT_MESSAGE),
    "header-under-61-bytes": (struct.pack(">qiib", 0, 14, -1, 2) + bytes(13),
                              ErrorCode.CORRUPT_MESSAGE),
    # the request's rules
    "magic-1": (batch([b"a"], magic=1), ErrorCode.INVALID_RECORD),
    "no-batch": (b"", ErrorCode.INVALID_RECORD),
    "only-a-cut-batch": (GOOD[:-1], ErrorCode.INVALID_RECORD),
    "two-batches": (GOOD + GOOD, ErrorCode.INVALID_RECORD),
    "base-offset-not-0": (batch([b"a"], base_offset=7), ErrorCode.INVALID_RECORD),
    # a batch whose CRC is right but whose header lies about its records
    "count-above-records": (batch([b"a", b"b"], count=3, last_offset_delta=2),
                            ErrorCode.INVALID_RECORD),
    "count-below-records": (batch([b"a", b"b"], count=1, last_offset_delta=0),
                            ErrorCode.INVALID_RECORD),
    "count-zero": (batch([], count=0, last_offset_delta=-1), ErrorCode.INVALID_RECORD),
    "count-vs-offset-delta": (batch([b"a", b"b"], last_offset_delta=5),
                              ErrorCode.INVALID_RECORD),
    "record-past-the-batch": (batch([b"a"], records=record(0, b"a")[:-2]),
                              ErrorCode.INVALID_RECORD),
    "control-batch": (batch([b"a"], attributes=0x20), ErrorCode.INVALID_RECORD),
    "idempotent-without-sequence": (batch([b"a"], producer_id=5, base_sequence=-1),
                                    ErrorCode.INVALID_RECORD),
    "unknown-compression": (batch([b"a"], attributes=0x07), ErrorCode.INVALID_RECORD),
}


def produce(conn: Connection, partitions: dict[int, bytes | None], version: int = PRODUCE_V
            ) -> dict[int, Any]:
    request = Produce(transactional_id=None, acks=-1, timeout_ms=5000, topic_data=[
        Produce.TopicProduceData(name=TOPIC, partition_data=[
            Produce.PartitionProduceData(index=i, records=r) for i, r in partitions.items()])])
    response, _ = conn.call(PRODUCE, version, request)
    return {p.index: p for p in response.responses[0].partition_responses}


def log_end(conn: Connection, partition: int) -> int:
    request = ListOffsets(replica_id=-1, isolation_level=0, topics=[ListOffsets.ListOffsetsTopic(
        name=TOPIC, partitions=[ListOffsets.ListOffsetsPartition(partition_index=partition,
                                                                  timestamp=-1)])])
    response, _ = conn.call(LIST_OFFSETS, LIST_OFFSETS_V, request)
    part = response.topics[0].partitions[0]
    assert part.error_code == 0
    return int(part.offset)


@pytest.fixture
def conn(kcsim: EmbeddedServer) -> Any:
    assert kcsim.port is not None
    with Connection(kcsim.port) as c:
        created, _ = c.call(CREATE_TOPICS, 7, CreateTopics(topics=[CreateTopics.CreatableTopic(
            name=TOPIC, num_partitions=2, replication_factor=1)], timeout_ms=5000))
        assert created.topics[0].error_code == 0
        yield c


def test_a_good_batch_is_appended(conn: Connection) -> None:
    answer = produce(conn, {0: GOOD})
    assert (answer[0].error_code, answer[0].base_offset) == (0, 0)
    assert log_end(conn, 0) == 2


@pytest.mark.parametrize(("records", "error"), list(BAD.values()), ids=list(BAD))
def test_a_bad_batch_is_refused_and_nothing_of_its_partition_is_stored(
        conn: Connection, records: bytes, error: ErrorCode) -> None:
    answer = produce(conn, {0: records, 1: GOOD})
    assert ErrorCode(answer[0].error_code) is error, answer[0].error_message
    assert answer[0].base_offset == -1
    assert answer[0].error_message
    assert log_end(conn, 0) == 0
    assert (answer[1].error_code, log_end(conn, 1)) == (0, 2)


def test_zstd_before_v7_is_refused(conn: Connection) -> None:
    answer = produce(conn, {0: batch([b"z"], attributes=0x04)}, version=6)
    assert answer[0].error_code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert log_end(conn, 0) == 0


def test_bytes_after_the_batch_are_dropped_as_kafka_trims_them(conn: Connection) -> None:
    """A second batch cut short after a whole one: Kafka stops at it and keeps the first."""
    answer = produce(conn, {0: GOOD + GOOD[:30]})
    assert answer[0].error_code == 0
    assert log_end(conn, 0) == 2
    answer = produce(conn, {0: GOOD})
    assert answer[0].base_offset == 2
