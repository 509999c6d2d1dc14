"""The log start offset, kcsim against Kafka: DeleteRecords at every version both serve,
with the offsets Kafka refuses, then what ListOffsets and Fetch say below and at the new
start; OffsetForLeaderEpoch on the one epoch a fresh partition has; WriteTxnMarkers as an
admin sends it to abort a producer's transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class
from kcsim.protocol.record_batch import iter_batches
from tests.server.fuzz.batches import batch

from . import ops
from .ops import CREATE_TOPICS
from .test_transactions import add_partitions, init, latest, locate
from .test_transactions import produce as produce_in_txn

if TYPE_CHECKING:
    from .harness import Run

Across = Any
PRODUCE, FETCH, DELETE_RECORDS, OFFSET_FOR_LEADER_EPOCH, WRITE_TXN_MARKERS = 0, 1, 21, 23, 27
OFFSETS_TOPIC = "__consumer_offsets"
EARLIEST, LATEST = -2, -1


def produce(run: Run, topic: str, partition: int, *values: bytes) -> Any:
    cls = request_class(PRODUCE)
    return run.call(PRODUCE, 9, cls(acks=-1, timeout_ms=30000, topic_data=[
        cls.TopicProduceData(name=topic, partition_data=[
            cls.PartitionProduceData(index=partition, records=batch(list(values)))])]),
        compare=False)


def delete_records(run: Run, offsets: dict[tuple[str, int], int], version: int) -> Any:
    cls = request_class(DELETE_RECORDS)
    topics: dict[str, list[Any]] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append(
            cls.DeleteRecordsPartition(partition_index=partition, offset=offset))
    return run.call(DELETE_RECORDS, version, cls(timeout_ms=30000, topics=[
        cls.DeleteRecordsTopic(name=t, partitions=ps) for t, ps in topics.items()]))


def fetch(run: Run, topic: str, partition: int, offset: int, compare: bool = True) -> Any:
    cls = request_class(FETCH)
    return run.call(FETCH, 12, cls(
        replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
        session_id=0, session_epoch=-1, topics=[cls.FetchTopic(topic=topic, partitions=[
            cls.FetchPartition(partition=partition, current_leader_epoch=-1, fetch_offset=offset,
                               log_start_offset=-1, partition_max_bytes=1 << 20)])],
        forgotten_topics_data=[], rack_id=""), compare=compare)


def fetch_batches(run: Run, topic: str, partition: int, offset: int) -> Any:
    """Fetch, compared with the records reduced to which batches came back (base offset,
    count): kcsim keeps a batch's partition leader epoch as the producer sent it (-1) where
    Kafka stamps its own (0), a difference of the Produce path, not of the log start."""
    answer = fetch(run, topic, partition, offset, compare=False)
    for part in answer.responses[0].partitions:
        records = part.records or b""
        part.records = repr([(int.from_bytes(records[b.start:b.start + 8], "big"), b.record_count)
                             for b in iter_batches(records)]).encode()
    run.record(FETCH, 12, answer)
    return answer


def create_compacted(run: Run, name: str) -> None:
    cls = request_class(CREATE_TOPICS)
    run.call(CREATE_TOPICS, 7, cls(timeout_ms=30000, topics=[cls.CreatableTopic(
        name=name, num_partitions=1, replication_factor=1, assignments=[],
        configs=[cls.CreatableTopicConfig(name="cleanup.policy", value="compact")])]),
        compare=False)
    ops.wait_for_topic(run, name, 1)


def delete_records_cases(run: Run, version: int) -> None:
    """Moving the log start forward (mid-batch, to the high watermark), the offsets Kafka
    refuses, and what ListOffsets and Fetch answer below and at the new start."""
    topic, compacted = run.topic(), run.topic("compacted")
    ops.create_topic(run, topic, 2, compare=False)
    create_compacted(run, compacted)
    produce(run, topic, 0, b"a", b"b", b"c")
    produce(run, topic, 0, b"d", b"e")
    delete_records(run, {(topic, 0): 2, (topic, 1): -1}, version)
    delete_records(run, {(topic, 0): 1}, version)  # below the start: nothing moves
    delete_records(run, {(topic, 0): 6, (topic, 1): -2, (topic, 7): 0,
                         (run.topic("missing"), 0): 0, (compacted, 0): 0,
                         (OFFSETS_TOPIC, 0): 0}, version)
    ops.list_offsets(run, topic, [0, 1], EARLIEST)
    fetch(run, topic, 0, 1)
    fetch_batches(run, topic, 0, 2)
    delete_records(run, {(topic, 0): -1}, version)
    ops.list_offsets(run, topic, [0], EARLIEST)
    ops.list_offsets(run, topic, [0], LATEST)
    fetch(run, topic, 0, 4)
    fetch(run, topic, 0, 5)


def offset_for_leader_epoch(run: Run, version: int) -> None:
    """End offsets of the partition's one epoch, of epochs before and after it, and the
    fencing of a stale or future current epoch."""
    topic = run.topic()
    ops.create_topic(run, topic, 2, compare=False)
    produce(run, topic, 0, b"a", b"b")
    cls = request_class(OFFSET_FOR_LEADER_EPOCH)
    asks = [(-1, 0), (0, 0), (-1, -1), (-1, 1), (1, 0), (0, 5)]  # (current epoch, epoch)
    run.call(OFFSET_FOR_LEADER_EPOCH, version, cls(replica_id=-1, topics=[
        cls.OffsetForLeaderTopic(topic=topic, partitions=[
            cls.OffsetForLeaderPartition(partition=0, current_leader_epoch=current,
                                         leader_epoch=epoch)
            for current, epoch in asks]),
        cls.OffsetForLeaderTopic(topic=topic, partitions=[
            cls.OffsetForLeaderPartition(partition=1, current_leader_epoch=-1, leader_epoch=0),
            cls.OffsetForLeaderPartition(partition=3, current_leader_epoch=-1, leader_epoch=0)]),
        cls.OffsetForLeaderTopic(topic=run.topic("missing"), partitions=[
            cls.OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=0)]),
    ]))


def _marker(producer_id: int, epoch: int, commit: bool, partitions: dict[str, list[int]]) -> Any:
    cls = request_class(WRITE_TXN_MARKERS)
    return cls.WritableTxnMarker(
        producer_id=producer_id, producer_epoch=epoch, transaction_result=commit,
        coordinator_epoch=0, transaction_version=0, topics=[
            cls.WritableTxnMarkerTopic(name=t, partition_indexes=ps) for t, ps in partitions.items()])


def markers(run: Run, version: int, *marks: Any) -> Any:
    """WriteTxnMarkers, compared with the broker's producer ids as placeholders."""
    cls = request_class(WRITE_TXN_MARKERS)
    answer = run.call(WRITE_TXN_MARKERS, version, cls(markers=list(marks)), compare=False)
    for i, result in enumerate(answer.markers):
        result.producer_id = f"<pid {i}>"
    run.record(WRITE_TXN_MARKERS, version, answer)
    return answer


def write_txn_markers(run: Run, version: int) -> None:
    """Aborting an open transaction from outside (`Admin.abortTransaction`): a stale epoch is
    refused, unknown partitions are named, a producer the partition never saw gets its
    marker all the same, and the abort frees the last stable offset."""
    topic, txn_id = run.topic(), run.group("tx")
    ops.create_topic(run, topic, 1, compare=False)
    locate(run, txn_id)
    pid, epoch = init(run, txn_id)
    add_partitions(run, txn_id, pid, epoch, {topic: [0]})
    produce_in_txn(run, topic, txn_id, pid, epoch, 0)
    latest(run, topic, 1)
    markers(run, version, _marker(pid, epoch - 5, False, {topic: [0]}))  # older than it knows
    markers(run, version, _marker(pid, epoch, False, {topic: [0, 3], run.topic("missing"): [0]}))
    latest(run, topic, 1)
    markers(run, version, _marker(pid, epoch, False, {topic: [0]}))  # not open: written again
    ops.list_offsets(run, topic, [0], LATEST)


def test_delete_records(across: Across) -> None:
    assert across(DELETE_RECORDS, delete_records_cases)


def test_offset_for_leader_epoch(across: Across) -> None:
    assert across(OFFSET_FOR_LEADER_EPOCH, offset_for_leader_epoch)


def test_write_txn_markers(across: Across) -> None:
    assert across(WRITE_TXN_MARKERS, write_txn_markers)

