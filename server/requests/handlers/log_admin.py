"""DeleteRecords (21), OffsetForLeaderEpoch (23) and DescribeLogDirs (35): what admins and
consumers ask of a partition's log as a whole: where it starts, where an epoch ends, what
it weighs.

kcsim has one log directory (the data directory; in memory, a virtual one) and one
leader whose epoch is 0 for every partition, so each answer is Kafka's for that history.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import response_class
from kcsim.protocol.errors import ErrorCode

from ...offsets.topic import is_internal
from ...state.topics import DEFAULT_TOPIC_CONFIGS
from ..routes import serves

if TYPE_CHECKING:
    from ...state.broker_state import BrokerState as Broker
    from ...state.topics import Partition, Topic
    from ..context import RequestContext

DeleteRecordsResponse = response_class(21)
OffsetForLeaderEpochResponse = response_class(23)
DescribeLogDirsResponse = response_class(35)
_DRTopic = DeleteRecordsResponse.DeleteRecordsTopicResult
_DRPart = DeleteRecordsResponse.DeleteRecordsPartitionResult
_OETopic = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
_OEPart = OffsetForLeaderEpochResponse.EpochEndOffset
_LDResult = DescribeLogDirsResponse.DescribeLogDirsResult
_LDTopic = DescribeLogDirsResponse.DescribeLogDirsTopic
_LDPart = DescribeLogDirsResponse.DescribeLogDirsPartition

HIGH_WATERMARK = -1  # DeleteRecords: "up to the high watermark"
NO_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH: no epoch given, none checked
LEADER_EPOCH = 0  # the one leader's epoch, since each partition was created
IN_MEMORY_LOG_DIR = "/kcsim/in-memory"


def _partition(topic: Topic | None, index: int) -> Partition | None:
    if topic is None or not 0 <= index < len(topic.partitions):
        return None
    return topic.partitions[index]


# -- DeleteRecords ---------------------------------------------------------------------


def _deletes_allowed(topic: Topic) -> bool:
    """Kafka deletes records only where the cleanup policy includes `delete`."""
    policy = topic.configs.get("cleanup.policy", DEFAULT_TOPIC_CONFIGS["cleanup.policy"])
    return "delete" in (p.strip() for p in policy.split(","))


def _delete_records(topic: Topic | None, index: int, offset: int) -> tuple[int, int]:
    """(error, low watermark) for one partition, as Kafka's ReplicaManager and Partition
    answer it: internal topics and compacted-only topics refuse, -1 means the high
    watermark, any other negative offset or one above the high watermark is out of range,
    and an offset at or below the log start leaves it where it is."""
    partition = _partition(topic, index)
    if topic is None or partition is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1
    if is_internal(topic.name):
        return ErrorCode.INVALID_TOPIC_EXCEPTION, -1
    if not _deletes_allowed(topic):
        return ErrorCode.POLICY_VIOLATION, -1
    target = partition.high_watermark if offset == HIGH_WATERMARK else offset
    if not 0 <= target <= partition.high_watermark:
        return ErrorCode.OFFSET_OUT_OF_RANGE, -1
    try:
        return ErrorCode.NONE, partition.move_log_start(target)
    except OSError:
        return ErrorCode.KAFKA_STORAGE_ERROR, -1


@serves(21)
def delete_records(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    """Moves each partition's log start at once, durably (the store writes the offset and
    syncs it before returning): a single replica has no followers to wait for, so the
    request's time-out never runs out."""
    topics = []
    for t in request.topics:
        topic = broker.topics.get(t.name)
        parts = []
        for p in t.partitions:
            error, low = _delete_records(topic, p.partition_index, p.offset)
            parts.append(_DRPart(partition_index=p.partition_index, low_watermark=low,
                                 error_code=error))
        topics.append(_DRTopic(name=t.name, partitions=parts))
    return DeleteRecordsResponse(throttle_time_ms=0, topics=topics)


# -- OffsetForLeaderEpoch ----------------------------------------------------------------


def _epoch_end(partition: Partition, current: int, epoch: int) -> tuple[int, int, int]:
    """(error, epoch, end offset): Kafka's fencing of the current epoch, then its leader
    epoch cache (`LeaderEpochFileCache.endOffsetFor`) holding one entry, epoch 0 from the
    log start: that epoch ends at the log end offset, a later one is unknown, an earlier
    one ends where epoch 0 starts."""
    if current != NO_EPOCH and current != LEADER_EPOCH:
        error = (ErrorCode.UNKNOWN_LEADER_EPOCH if current > LEADER_EPOCH
                 else ErrorCode.FENCED_LEADER_EPOCH)
        return error, -1, -1
    if epoch == NO_EPOCH or epoch > LEADER_EPOCH:
        return ErrorCode.NONE, -1, -1
    if epoch == LEADER_EPOCH:
        return ErrorCode.NONE, LEADER_EPOCH, partition.log_end_offset
    return ErrorCode.NONE, epoch, partition.log_start_offset


@serves(23)
def offset_for_leader_epoch(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    topics = []
    for t in request.topics:
        topic = broker.topics.get(t.topic)
        parts = []
        for p in t.partitions:
            partition = _partition(topic, p.partition)
            error, epoch, end = (
                (int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), -1, -1) if partition is None
                else _epoch_end(partition, p.current_leader_epoch, p.leader_epoch))
            parts.append(_OEPart(error_code=error, partition=p.partition, leader_epoch=epoch,
                                 end_offset=end))
        topics.append(_OETopic(topic=t.topic, partitions=parts))
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=topics)


# -- DescribeLogDirs -----------------------------------------------------------------------


def _log_dir(broker: Broker) -> tuple[str, int, int]:
    """(path, total bytes, usable bytes) of the one log directory; -1 where unknown."""
    config = broker.config
    if config.in_memory:
        return IN_MEMORY_LOG_DIR, -1, -1
    path = os.path.abspath(config.data_dir)
    try:
        stats = os.statvfs(path)
    except OSError:
        return path, -1, -1
    return path, stats.f_blocks * stats.f_frsize, stats.f_bavail * stats.f_frsize


def _described(topic: Topic, indexes: list[int] | None) -> Any:
    chosen = (topic.partitions if indexes is None
              else [p for i in dict.fromkeys(indexes) if (p := _partition(topic, i)) is not None])
    return _LDTopic(name=topic.name, partitions=[
        _LDPart(partition_index=p.index, partition_size=p.size_bytes,
                offset_lag=max(0, p.log_end_offset - p.high_watermark), is_future_key=False)
        for p in chosen])


@serves(35)
def describe_log_dirs(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    """Every partition asked for that exists (all of them for null topics), as Kafka lists
    the logs it hosts; unknown topics and partitions are left out."""
    if request.topics is None:
        asked: list[tuple[Topic, list[int] | None]] = [
            (topic, None) for topic in broker.topics.by_name.values()]
    else:
        asked = [(topic, t.partitions) for t in request.topics
                 if (topic := broker.topics.get(t.topic)) is not None]
    path, total, usable = _log_dir(broker)
    described = [d for topic, indexes in asked if (d := _described(topic, indexes)).partitions]
    return DescribeLogDirsResponse(throttle_time_ms=0, error_code=0, results=[_LDResult(
        error_code=0, log_dir=path, topics=described, total_bytes=total, usable_bytes=usable,
        is_cordoned=False)])
