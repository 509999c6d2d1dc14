"""The coordinator's records in Kafka's `__consumer_offsets` format, and their partitions.

The expected hashes and partitions are what Java computes (`String.hashCode`, Kafka's
`Utils.abs`, modulo 50); the bytes follow Kafka 4.x's record schemas.
"""

from __future__ import annotations

import uuid

import pytest

from kcsim.coordinator.kafka_format import (
    PAUSED_RECORD_TYPE,
    java_string_hash,
    kafka_record,
    partition_for,
)
from kcsim.coordinator.records import (
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    GroupMetadataKey,
    OffsetCommitKey,
    OffsetCommitValue,
    PausedTopic,
    PausedTopicPartitionsKey,
    PausedTopicPartitionsValue,
)
from kcsim.storage.records import Record


@pytest.mark.parametrize(("group", "java_hash", "partition"), [
    ("hello", 99162322, 22),
    ("polygenelubricants", -2**31, 0),  # Math.abs would stay negative: Utils.abs gives 0
    ("zzzzzzzz", -1910022912, 12),  # overflows past 2^31 and comes out negative
    ("группа", 1749938458, 8),
    ("\U0001F600grp", 1276929186, 36),  # hashed over UTF-16 code units (a surrogate pair)
    ("console-consumer-12345", 158455506, 6),
])
def test_a_group_lands_in_the_partition_kafka_gives_it(group: str, java_hash: int,
                                                        partition: int) -> None:
    assert java_string_hash(group) == java_hash
    assert partition_for(group, 50) == partition


def test_an_offset_commit_is_written_as_kafka_4_writes_it() -> None:
    record = Record(OffsetCommitKey("g", "t", 3), OffsetCommitValue(9, 2, "m", 1000))
    assert kafka_record(record) == (
        "g",
        b"\x00\x01" + b"\x00\x01g" + b"\x00\x01t" + b"\x00\x00\x00\x03",
        b"\x00\x04" + (9).to_bytes(8, "big") + (2).to_bytes(4, "big") + b"\x02m"
        + (1000).to_bytes(8, "big") + b"\x00",
    )


def test_an_offset_with_an_explicit_expiry_is_written_in_value_version_1() -> None:
    record = Record(OffsetCommitKey("g", "t", 0), OffsetCommitValue(9, -1, "", 1000, 5000))
    _, _, value = kafka_record(record)  # type: ignore[misc]
    assert value == (b"\x00\x01" + (9).to_bytes(8, "big") + b"\x00\x00"
                     + (1000).to_bytes(8, "big") + (5000).to_bytes(8, "big"))


def test_deletions_are_tombstones() -> None:
    for key in (OffsetCommitKey("g", "t", 0), GroupMetadataKey("g"),
                ConsumerGroupMetadataKey("g"), PausedTopicPartitionsKey("g")):
        group, _, value = kafka_record(Record(key, None))  # type: ignore[misc]
        assert (group, value) == ("g", None)


def test_the_paused_record_takes_kcsims_type_and_the_kips_schema() -> None:
    topic_id = uuid.uuid4()
    record = Record(PausedTopicPartitionsKey("g"),
                    PausedTopicPartitionsValue([PausedTopic(topic_id.bytes, "t", [1, 4])]))
    _, key, value = kafka_record(record)  # type: ignore[misc]
    assert key == PAUSED_RECORD_TYPE.to_bytes(2, "big") + b"\x00\x01g"
    # v0, flexible: compact array of (uuid, compact int32 array, no tags), no tags.
    assert value == (b"\x00\x00" + b"\x02" + topic_id.bytes + b"\x03"
                     + (1).to_bytes(4, "big") + (4).to_bytes(4, "big") + b"\x00" + b"\x00")


def test_a_consumer_group_epoch_carries_its_metadata_hash_as_a_tagged_field() -> None:
    record = Record(ConsumerGroupMetadataKey("g"), ConsumerGroupMetadataValue(3, 9))
    _, key, value = kafka_record(record)  # type: ignore[misc]
    assert key == b"\x00\x03\x00\x01g"
    assert value == b"\x00\x00" + (3).to_bytes(4, "big") + b"\x01\x00\x08" + (9).to_bytes(8, "big")


def test_an_offset_commit_can_be_written_as_kafka_3_wrote_it() -> None:
    """Value v3 (Kafka 2.1 to 3.x): not flexible, so a classic string and no tags."""
    record = Record(OffsetCommitKey("g", "t", 3), OffsetCommitValue(9, 2, "m", 1000))
    _, _, value = kafka_record(record, offset_value_version=3)  # type: ignore[misc]
    assert value == (b"\x00\x03" + (9).to_bytes(8, "big") + (2).to_bytes(4, "big")
                     + b"\x00\x01m" + (1000).to_bytes(8, "big"))


@pytest.mark.parametrize("version", [3, 4])
@pytest.mark.parametrize("metadata", ["", None, "m" * 200, "é✓"])
def test_the_packed_offset_commit_is_the_declared_schemas_encoding(version: int,
                                                                    metadata: str | None) -> None:
    from kcsim.coordinator.kafka_format import _offset_commit_declared, offset_commit

    key = OffsetCommitKey("grüppe", "topic-1", 2**31 - 1)
    for value in (OffsetCommitValue(2**62, 7, metadata, 1_700_000_000_123),
                  OffsetCommitValue(0, -1, metadata, 0), None):
        assert offset_commit(key, value, version) == _offset_commit_declared(key, value, version)
