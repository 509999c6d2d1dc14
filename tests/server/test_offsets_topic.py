"""`__consumer_offsets` is there from the start, as Kafka shows it, and clients cannot write it.

Over the wire: Metadata reports it internal with `offsets_topic_num_partitions` partitions,
DescribeConfigs shows it compacted, Produce, DeleteTopics and CreatePartitions are refused,
and a commit shows up in the group's partition in Kafka's record format.
"""

from __future__ import annotations

import struct
import uuid
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.coordinator.kafka_format import OFFSETS_TOPIC, partition_for
from kcsim.protocol.codecs import codec
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.record_batch import batch_records

from .fuzz.batches import batch
from .fuzz.wire import Connection

if TYPE_CHECKING:
    from kcsim.server.embedded import EmbeddedServer

PRODUCE, FETCH, METADATA, OFFSET_COMMIT = 0, 1, 3, 8
DELETE_TOPICS, CREATE_TOPICS, DESCRIBE_CONFIGS, CREATE_PARTITIONS = 20, 19, 32, 37
Metadata = codec(METADATA, "request").cls
Produce = codec(PRODUCE, "request").cls
Fetch = codec(FETCH, "request").cls
OffsetCommit = codec(OFFSET_COMMIT, "request").cls
DeleteTopics = codec(DELETE_TOPICS, "request").cls
CreateTopics = codec(CREATE_TOPICS, "request").cls
DescribeConfigs = codec(DESCRIBE_CONFIGS, "request").cls
CreatePartitions = codec(CREATE_PARTITIONS, "request").cls
TOPIC_RESOURCE = 2


@pytest.fixture
def conn(kcsim: EmbeddedServer) -> Any:
    assert kcsim.port is not None
    with Connection(kcsim.port) as c:
        yield c


def describe(conn: Connection, names: list[str] | None) -> dict[str, Any]:
    request = Metadata(topics=None if names is None else [
        Metadata.MetadataRequestTopic(name=n) for n in names], allow_auto_topic_creation=True)
    response, _ = conn.call(METADATA, 12, request)
    return {t.name: t for t in response.topics}


def test_metadata_reports_it_internal_with_fifty_partitions(conn: Connection) -> None:
    topic = describe(conn, [OFFSETS_TOPIC])[OFFSETS_TOPIC]
    assert (topic.error_code, topic.is_internal, len(topic.partitions)) == (0, True, 50)
    assert describe(conn, None)[OFFSETS_TOPIC].is_internal  # listed with every topic


@pytest.mark.kcsim(offsets_topic_num_partitions=7)
def test_its_partition_count_is_the_setting(conn: Connection) -> None:
    assert len(describe(conn, [OFFSETS_TOPIC])[OFFSETS_TOPIC].partitions) == 7


def test_describe_configs_shows_it_compacted(conn: Connection) -> None:
    response, _ = conn.call(DESCRIBE_CONFIGS, 4, DescribeConfigs(resources=[
        DescribeConfigs.DescribeConfigsResource(resource_type=TOPIC_RESOURCE,
                                                resource_name=OFFSETS_TOPIC,
                                                configuration_keys=["cleanup.policy"])]))
    [result] = response.results
    assert result.error_code == 0
    assert {c.name: c.value for c in result.configs} == {"cleanup.policy": "compact"}


def test_produce_to_it_is_refused_as_kafka_refuses_it(conn: Connection) -> None:
    request = Produce(transactional_id=None, acks=-1, timeout_ms=5000, topic_data=[
        Produce.TopicProduceData(name=OFFSETS_TOPIC, partition_data=[
            Produce.PartitionProduceData(index=0, records=batch([b"x"]))])])
    response, _ = conn.call(PRODUCE, 9, request)
    [part] = response.responses[0].partition_responses
    assert (part.error_code, part.base_offset) == (ErrorCode.INVALID_TOPIC_EXCEPTION, -1)
    assert fetch(conn, 0, 0) == []


def test_it_cannot_be_deleted_grown_or_created_again(conn: Connection) -> None:
    deleted, _ = conn.call(DELETE_TOPICS, 5, DeleteTopics(topic_names=[OFFSETS_TOPIC],
                                                          timeout_ms=5000))
    assert deleted.responses[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    grown, _ = conn.call(CREATE_PARTITIONS, 3, CreatePartitions(topics=[
        CreatePartitions.CreatePartitionsTopic(name=OFFSETS_TOPIC, count=60, assignments=None)],
        timeout_ms=5000, validate_only=False))
    assert grown.results[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    created, _ = conn.call(CREATE_TOPICS, 7, CreateTopics(topics=[CreateTopics.CreatableTopic(
        name=OFFSETS_TOPIC, num_partitions=3, replication_factor=1)], timeout_ms=5000))
    assert created.topics[0].error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    topic = describe(conn, [OFFSETS_TOPIC])[OFFSETS_TOPIC]
    assert (topic.error_code, len(topic.partitions)) == (0, 50)


def fetch(conn: Connection, partition: int, offset: int, max_wait_ms: int = 0) -> list[Any]:
    request = Fetch(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20,
                    isolation_level=0, session_id=0, session_epoch=-1, topics=[
                        Fetch.FetchTopic(topic=OFFSETS_TOPIC, topic_id=uuid.UUID(int=0),
                                         partitions=[Fetch.FetchPartition(
                                             partition=partition, fetch_offset=offset,
                                             partition_max_bytes=1 << 20)])],
                    forgotten_topics_data=[], rack_id="")
    response, _ = conn.call(FETCH, 12, request)
    part = response.responses[0].partitions[0]
    assert part.error_code == 0
    data = part.records or b""
    out, pos = [], 0
    while pos < len(data):
        size = int.from_bytes(data[pos + 8:pos + 12], "big") + 12
        chunk = data[pos:pos + size]
        out += batch_records(chunk, int.from_bytes(chunk[:8], "big"), lambda c, d: d)
        pos += size
    return out


def test_a_commit_lands_in_its_groups_partition_in_kafkas_format(conn: Connection) -> None:
    conn.call(CREATE_TOPICS, 7, CreateTopics(topics=[CreateTopics.CreatableTopic(
        name="orders", num_partitions=1, replication_factor=1)], timeout_ms=5000))
    group = "payments"
    request = OffsetCommit(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                           group_instance_id=None, retention_time_ms=-1, topics=[
                               OffsetCommit.OffsetCommitRequestTopic(name="orders", partitions=[
                                   OffsetCommit.OffsetCommitRequestPartition(
                                       partition_index=0, committed_offset=42,
                                       committed_leader_epoch=-1, committed_metadata="m")])])
    response, _ = conn.call(OFFSET_COMMIT, 8, request)
    assert response.topics[0].partitions[0].error_code == 0
    [record] = fetch(conn, partition_for(group, 50), 0)
    # OffsetCommitKey: type 1, then group, topic (int16-length strings) and partition.
    assert record.key == (b"\x00\x01" + b"\x00\x08payments" + b"\x00\x06orders"
                          + b"\x00\x00\x00\x00")
    # OffsetCommitValue v4: offset, leader epoch, metadata (compact), commit time, no tags.
    assert record.value == (b"\x00\x04" + (42).to_bytes(8, "big") + b"\xff\xff\xff\xff"
                            + b"\x02m" + record.timestamp.to_bytes(8, "big") + b"\x00")
    assert record.offset == 0


def test_in_memory_it_compacts_itself_as_it_grows(
        kcsim_embedded_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no record log to follow, the topic compacts itself every so many records: a
    reader from the start then finds each key once, with its newest value. (It is read
    first, so that the commits are written to it one by one; the last of them is the
    50th record, so the compaction it starts finds every record there.)"""
    import time

    from kcsim.server import app

    from .offsets_reader import fold, read_all

    monkeypatch.setattr(app, "IN_MEMORY_COMPACT_EVERY", 50)
    server = kcsim_embedded_factory(in_memory=True)
    with Connection(server.port) as conn:

        def read() -> dict[int, list[Any]]:
            return read_all(lambda api, version, request: conn.call(api, version, request)[0])

        assert sum(map(len, read().values())) == 0
        conn.call(CREATE_TOPICS, 7, CreateTopics(topics=[CreateTopics.CreatableTopic(
            name="orders", num_partitions=1, replication_factor=1)], timeout_ms=5000))
        for offset in range(1, 26):
            for group in ("a", "b"):
                commit(conn, group, offset)
        deadline = time.monotonic() + 10
        while sum(map(len, (topic := read()).values())) != 2:
            assert time.monotonic() < deadline, "the topic did not compact itself"
            time.sleep(0.05)
    assert [struct.unpack_from(">q", v, 2)[0] for v in fold(topic).values()] == [25, 25]
    assert all(records[0].offset > 0 for records in topic.values() if records)


def commit(conn: Connection, group: str, offset: int) -> None:
    request = OffsetCommit(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                           group_instance_id=None, retention_time_ms=-1, topics=[
                               OffsetCommit.OffsetCommitRequestTopic(name="orders", partitions=[
                                   OffsetCommit.OffsetCommitRequestPartition(
                                       partition_index=0, committed_offset=offset,
                                       committed_leader_epoch=-1, committed_metadata="")])])
    response, _ = conn.call(OFFSET_COMMIT, 8, request)
    assert response.topics[0].partitions[0].error_code == 0


def test_in_memory_the_first_read_finds_the_state_the_commits_left(
        kcsim_embedded_factory: Any) -> None:
    """Nothing is written to the topic until it is read; the first read fills it with each
    committed offset's newest value, at its commit time, in its group's partition."""
    from .offsets_reader import read_all

    server = kcsim_embedded_factory(in_memory=True)
    with Connection(server.port) as conn:
        conn.call(CREATE_TOPICS, 7, CreateTopics(topics=[CreateTopics.CreatableTopic(
            name="orders", num_partitions=1, replication_factor=1)], timeout_ms=5000))
        for group, offset in (("a", 1), ("b", 7), ("a", 5)):
            commit(conn, group, offset)
        topic = read_all(lambda api, version, request: conn.call(api, version, request)[0])
    assert {p: len(records) for p, records in topic.items() if records} == {
        partition_for("a", 50): 1, partition_for("b", 50): 1}
    for group, offset in (("a", 5), ("b", 7)):
        [record] = topic[partition_for(group, 50)]
        assert group.encode() in (record.key or b"")
        assert record.value is not None
        assert struct.unpack_from(">q", record.value, 2)[0] == offset
        assert struct.unpack_from(">q", record.value, 2 + 8 + 4 + 1)[0] == record.timestamp
