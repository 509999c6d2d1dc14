"""DeleteRecords, OffsetForLeaderEpoch, DescribeLogDirs and WriteTxnMarkers over a socket,
request by request: the answers Kafka 4.4 gives (tests/oracle/test_log_admin.py compares
them with a real broker), including the refusals no client library lets through."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode

from .fuzz.batches import batch
from .fuzz.wire import Connection

if TYPE_CHECKING:
    from collections.abc import Iterator

    from kcsim.server.embedded import EmbeddedServer

PRODUCE, LIST_OFFSETS, CREATE_TOPICS = 0, 2, 19
DELETE_RECORDS, OFFSET_FOR_LEADER_EPOCH, WRITE_TXN_MARKERS, DESCRIBE_LOG_DIRS = 21, 23, 27, 35
TOPIC, COMPACTED = "logs", "compacted"
E = ErrorCode


@pytest.fixture
def conn(kcsim: EmbeddedServer) -> Iterator[Connection]:
    """Topic `logs` (2 partitions, 5 records in partition 0 as batches of 3 and 2) and a
    compacted topic."""
    assert kcsim.port is not None
    create = request_class(CREATE_TOPICS)
    produce = request_class(PRODUCE)
    with Connection(kcsim.port) as c:
        c.call(CREATE_TOPICS, 7, create(timeout_ms=5000, topics=[
            create.CreatableTopic(name=TOPIC, num_partitions=2, replication_factor=1),
            create.CreatableTopic(name=COMPACTED, num_partitions=1, replication_factor=1,
                                  configs=[create.CreatableTopicConfig(
                                      name="cleanup.policy", value="compact")])]))
        for values in ([b"a", b"b", b"c"], [b"d", b"e"]):
            answer, _ = c.call(PRODUCE, 9, produce(acks=-1, timeout_ms=5000, topic_data=[
                produce.TopicProduceData(name=TOPIC, partition_data=[
                    produce.PartitionProduceData(index=0, records=batch(values))])]))
            assert answer.responses[0].partition_responses[0].error_code == 0
        yield c


def delete(conn: Connection, offsets: dict[tuple[str, int], int],
           version: int = 2) -> dict[tuple[str, int], tuple[int, int]]:
    cls = request_class(DELETE_RECORDS)
    topics: dict[str, list[Any]] = {}
    for (name, index), offset in offsets.items():
        topics.setdefault(name, []).append(cls.DeleteRecordsPartition(partition_index=index,
                                                                      offset=offset))
    answer, _ = conn.call(DELETE_RECORDS, version, cls(timeout_ms=5000, topics=[
        cls.DeleteRecordsTopic(name=n, partitions=ps) for n, ps in topics.items()]))
    return {(t.name, p.partition_index): (p.error_code, p.low_watermark)
            for t in answer.topics for p in t.partitions}


def earliest(conn: Connection, index: int = 0) -> int:
    cls = request_class(LIST_OFFSETS)
    answer, _ = conn.call(LIST_OFFSETS, 7, cls(replica_id=-1, topics=[cls.ListOffsetsTopic(
        name=TOPIC, partitions=[cls.ListOffsetsPartition(partition_index=index, timestamp=-2)])]))
    return int(answer.topics[0].partitions[0].offset)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_delete_records_answers_as_kafka(conn: Connection, version: int) -> None:
    assert delete(conn, {(TOPIC, 0): 2, (TOPIC, 1): -1}, version) == {
        (TOPIC, 0): (E.NONE, 2), (TOPIC, 1): (E.NONE, 0)}
    assert delete(conn, {(TOPIC, 0): 1}, version) == {(TOPIC, 0): (E.NONE, 2)}
    assert delete(conn, {(TOPIC, 0): 6, (TOPIC, 1): -2, (TOPIC, 9): 0, ("nowhere", 0): 0,
                         (COMPACTED, 0): 0, ("__consumer_offsets", 0): 0}, version) == {
        (TOPIC, 0): (E.OFFSET_OUT_OF_RANGE, -1), (TOPIC, 1): (E.OFFSET_OUT_OF_RANGE, -1),
        (TOPIC, 9): (E.UNKNOWN_TOPIC_OR_PARTITION, -1),
        ("nowhere", 0): (E.UNKNOWN_TOPIC_OR_PARTITION, -1),
        (COMPACTED, 0): (E.POLICY_VIOLATION, -1),
        ("__consumer_offsets", 0): (E.INVALID_TOPIC_EXCEPTION, -1)}
    assert earliest(conn) == 2
    assert delete(conn, {(TOPIC, 0): -1}, version) == {(TOPIC, 0): (E.NONE, 5)}
    assert earliest(conn) == 5


def epoch_ends(conn: Connection, asks: list[tuple[int, int, int]],
               version: int = 4) -> list[tuple[int, int, int]]:
    """(error, epoch, end offset) for each (partition, current epoch, epoch) of `logs`."""
    cls = request_class(OFFSET_FOR_LEADER_EPOCH)
    answer, _ = conn.call(OFFSET_FOR_LEADER_EPOCH, version, cls(replica_id=-1, topics=[
        cls.OffsetForLeaderTopic(topic=TOPIC, partitions=[
            cls.OffsetForLeaderPartition(partition=p, current_leader_epoch=c, leader_epoch=e)
            for p, c, e in asks])]))
    return [(p.error_code, p.leader_epoch, p.end_offset) for p in answer.topics[0].partitions]


@pytest.mark.parametrize("version", [2, 3, 4])
def test_offset_for_leader_epoch_answers_from_the_one_epoch(conn: Connection,
                                                            version: int) -> None:
    assert epoch_ends(conn, [(0, -1, 0), (0, 0, 0), (1, -1, 0), (0, -1, -1), (0, -1, 3),
                             (0, 2, 0), (0, -3, 0), (4, -1, 0)], version) == [
        (E.NONE, 0, 5), (E.NONE, 0, 5), (E.NONE, 0, 0), (E.NONE, -1, -1), (E.NONE, -1, -1),
        (E.UNKNOWN_LEADER_EPOCH, -1, -1), (E.FENCED_LEADER_EPOCH, -1, -1),
        (E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1)]


def log_dirs(conn: Connection, topics: dict[str, list[int]] | None, version: int = 4) -> Any:
    cls = request_class(DESCRIBE_LOG_DIRS)
    answer, _ = conn.call(DESCRIBE_LOG_DIRS, version, cls(topics=None if topics is None else [
        cls.DescribableLogDirTopic(topic=t, partitions=ps) for t, ps in topics.items()]))
    return answer


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_describe_log_dirs_lists_the_partitions_asked_for(conn: Connection,
                                                          version: int) -> None:
    (result,) = log_dirs(conn, {TOPIC: [0, 1, 7], "nowhere": [0]}, version).results
    assert (result.error_code, result.log_dir) == (0, "/kcsim/in-memory")
    ((name, sizes),) = [(t.name, {p.partition_index: p.partition_size for p in t.partitions})
                        for t in result.topics]
    assert name == TOPIC and set(sizes) == {0, 1} and sizes[1] == 0
    before = sizes[0]
    assert before > 0
    assert delete(conn, {(TOPIC, 0): 3}) == {(TOPIC, 0): (E.NONE, 3)}
    (result,) = log_dirs(conn, None, version).results
    sizes = {(t.name, p.partition_index): p.partition_size
             for t in result.topics for p in t.partitions}
    assert {(TOPIC, 0), (TOPIC, 1), (COMPACTED, 0)} <= set(sizes)
    assert 0 < sizes[(TOPIC, 0)] < before  # the first batch is wholly below the start


def write_markers(conn: Connection, producer_id: int, epoch: int, commit: bool,
                  partitions: dict[str, list[int]], version: int = 1) -> dict[tuple[str, int], int]:
    cls = request_class(WRITE_TXN_MARKERS)
    answer, _ = conn.call(WRITE_TXN_MARKERS, version, cls(markers=[cls.WritableTxnMarker(
        producer_id=producer_id, producer_epoch=epoch, transaction_result=commit,
        coordinator_epoch=0, topics=[cls.WritableTxnMarkerTopic(name=t, partition_indexes=ps)
                                     for t, ps in partitions.items()])]))
    (marker,) = answer.markers
    assert marker.producer_id == producer_id
    return {(t.name, p.partition_index): p.error_code for t in marker.topics
            for p in t.partitions}


def log_end(conn: Connection, index: int) -> int:
    cls = request_class(LIST_OFFSETS)
    answer, _ = conn.call(LIST_OFFSETS, 7, cls(replica_id=-1, topics=[cls.ListOffsetsTopic(
        name=TOPIC, partitions=[cls.ListOffsetsPartition(partition_index=index, timestamp=-1)])]))
    return int(answer.topics[0].partitions[0].offset)


@pytest.mark.parametrize("version", [1, 2])
def test_write_txn_markers_writes_for_any_producer_and_names_unknown_partitions(
        conn: Connection, version: int) -> None:
    """A producer the partition never saw still gets its marker (Kafka writes it too);
    an epoch older than the partition knows is refused, and so are unknown partitions."""
    assert write_markers(conn, 4242, 3, False, {TOPIC: [1, 5], "nowhere": [0]}, version) == {
        (TOPIC, 1): E.NONE, (TOPIC, 5): E.UNKNOWN_TOPIC_OR_PARTITION,
        ("nowhere", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert log_end(conn, 1) == 1
    assert write_markers(conn, 4242, 2, True, {TOPIC: [1]}, version) == {
        (TOPIC, 1): E.INVALID_PRODUCER_EPOCH}
    assert log_end(conn, 1) == 1
