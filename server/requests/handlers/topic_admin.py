"""CreateTopics (19), DeleteTopics (20), CreatePartitions (37)."""

from __future__ import annotations

import uuid
from typing import Any

from kcsim.protocol.codecs import response_class
from kcsim.protocol.errors import ErrorCode
from kcsim.storage.records import Record

from ...offsets.topic import is_internal
from ...state.config_defs import ConfigProblem
from ...state.topic_configs import check_topic_configs
from ...state.topic_records import TopicKey, TopicValue
from ...state.topics import DEFAULT_TOPIC_CONFIGS, topic_name_problem
from ..routes import serves

CreateTopicsResponse = response_class(19)
DeleteTopicsResponse = response_class(20)
CreatePartitionsResponse = response_class(37)

MAX_PARTITIONS = 100_000
# Kafka's controller writes at most this many records for one request (a topic, each
# partition, each config): a larger creation fails whole with POLICY_VIOLATION.
MAX_RECORDS_PER_REQUEST = 10_000
_TOO_LARGE = "Unable to perform excessively large batch operation."
# ConfigSource: DYNAMIC_TOPIC_CONFIG 1, DEFAULT_CONFIG 5
_SOURCE_TOPIC, _SOURCE_DEFAULT = 1, 5


def topic_record(name: str, topic_id: uuid.UUID, partitions: int, configs: dict[str, str]) -> Record:
    return Record(TopicKey(name), TopicValue(topic_id.bytes, partitions, dict(configs)))




@serves(19)
def create_topics(broker: Any, ctx: Any, request: Any) -> Any:
    R = CreateTopicsResponse
    results = []
    records: list[Any] = []
    seen: dict[str, int] = {}
    for t in request.topics:
        seen[t.name] = seen.get(t.name, 0) + 1
    too_large = _created_records(broker, request.topics, seen) > MAX_RECORDS_PER_REQUEST
    for t in request.topics:
        name = t.name
        err, msg = _create_problem(broker, t, seen[name])
        if err == 0 and too_large:
            err, msg = ErrorCode.POLICY_VIOLATION, _TOO_LARGE
        partitions = _partitions(broker, t)
        configs = {c.name: c.value for c in t.configs if c.value is not None}
        # Kafka names even a validated-only topic with a fresh id.
        topic_id = uuid.uuid4() if err == 0 else uuid.UUID(int=0)
        if err == 0 and not request.validate_only:
            records.append(topic_record(name, topic_id, partitions, configs))
        ok = err == 0
        results.append(R.CreatableTopicResult(
            name=name,
            topic_id=topic_id,
            error_code=err, error_message=msg,
            num_partitions=partitions if ok else -1,
            replication_factor=1 if ok else -1,
            configs=[_config_entry(R.CreatableTopicConfigs, k, v, configs)
                     for k, v in sorted({**DEFAULT_TOPIC_CONFIGS, **configs}.items())] if ok else [],
        ))
    return broker.change(records, R(throttle_time_ms=0, topics=results))


def _partitions(broker: Any, t: Any) -> int:
    if t.num_partitions != -1:
        return int(t.num_partitions)
    return len(t.assignments) if t.assignments else int(broker.config.default_partitions)


def _created_records(broker: Any, topics: list[Any], seen: dict[str, int]) -> int:
    """The records Kafka's controller would write for the creatable topics of a request."""
    return sum(1 + _partitions(broker, t) + len(t.configs) for t in topics
               if _create_problem(broker, t, seen[t.name])[0] == 0)


def _create_problem(broker: Any, t: Any, occurrences: int) -> tuple[int, str | None]:
    if occurrences > 1:
        return ErrorCode.INVALID_REQUEST, f"Create topics request from client contains duplicate topic {t.name}"
    problem = topic_name_problem(t.name)
    if problem:
        return ErrorCode.INVALID_TOPIC_EXCEPTION, problem
    if broker.topics.get(t.name) is not None:
        return ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{t.name}' already exists."
    if t.assignments and (t.num_partitions != -1 or t.replication_factor != -1):
        return ErrorCode.INVALID_REQUEST, ("Both numPartitions or replicationFactor and "
                                           "replicasAssignments were set. Both cannot be used at the same time.")
    if t.num_partitions == 0 or t.num_partitions < -1 or t.num_partitions > MAX_PARTITIONS:
        return ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0."
    if t.replication_factor == 0 or t.replication_factor < -1:
        return ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0."
    topology = broker.topology  # None: one node
    registered = 1 if topology is None else len(topology.live_nodes())
    if t.replication_factor > registered:
        return ErrorCode.INVALID_REPLICATION_FACTOR, (
            f"Unable to replicate the partition {t.replication_factor} time(s): "
            f"The target replication factor of {t.replication_factor} cannot be reached "
            f"because only {registered} broker(s) are registered.")
    nodes = (broker.config.node_id,) if topology is None else topology.node_ids
    for a in t.assignments:
        if any(b not in nodes for b in a.broker_ids):
            return ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Replica assignment names an unknown broker."
    try:
        check_topic_configs({c.name: c.value for c in t.configs if c.value is not None})
    except ConfigProblem as problem:
        return ErrorCode.INVALID_CONFIG, str(problem)
    return 0, None


def _config_entry(cls: Any, key: str, value: str, explicit: dict[str, str]) -> Any:
    return cls(name=key, value=value, read_only=False,
               config_source=_SOURCE_TOPIC if key in explicit else _SOURCE_DEFAULT,
               is_sensitive=False)


@serves(20)
def delete_topics(broker: Any, ctx: Any, request: Any) -> Any:
    R = DeleteTopicsResponse
    results = []
    records: list[Any] = []
    if ctx.api_version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    deleted: list[Any] = []
    for name, topic_id in wanted:
        topic = broker.topics.get(name) if name is not None else broker.topics.by_id.get(topic_id)
        if topic is not None and topic in deleted:
            topic = None  # named twice: the second finds it gone
        if topic is not None and is_internal(topic.name):
            # Refused as a cluster that does not let this client delete it would refuse
            # (docs/kafka-differences.md): the broker writes this topic itself.
            results.append(R.DeletableTopicResult(
                name=name, topic_id=topic_id or uuid.UUID(int=0),
                error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, error_message=None))
            continue
        if topic is None:
            err = ErrorCode.UNKNOWN_TOPIC_ID if name is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            results.append(R.DeletableTopicResult(
                name=name, topic_id=topic_id or uuid.UUID(int=0), error_code=err,
                error_message="This server does not host this topic ID." if name is None
                else "This server does not host this topic-partition."))
            continue
        deleted.append(topic)
        records.append(Record(TopicKey(topic.name), None))
        results.append(R.DeletableTopicResult(name=topic.name, topic_id=topic.topic_id,
                                              error_code=0, error_message=None))
    answer = broker.change(records, R(throttle_time_ms=0, responses=results))
    if broker.groups is not None and deleted:  # groups that paused its partitions forget them
        for topic in deleted:
            answer.records += broker.groups.topic_deleted(topic.topic_id).records
    return answer


@serves(37)
def create_partitions(broker: Any, ctx: Any, request: Any) -> Any:
    R = CreatePartitionsResponse
    results = []
    records: list[Any] = []
    added = 0
    for t in request.topics:
        topic = broker.topics.get(t.name)
        if topic is not None and len(topic.partitions) < t.count <= MAX_PARTITIONS:
            added += t.count - len(topic.partitions)
    if added > MAX_RECORDS_PER_REQUEST:
        return R(throttle_time_ms=0, results=[R.CreatePartitionsTopicResult(
            name=t.name, error_code=ErrorCode.POLICY_VIOLATION, error_message=_TOO_LARGE)
            for t in request.topics])
    grown: set[str] = set()
    for t in request.topics:
        err: int
        msg: str | None
        topic = broker.topics.get(t.name)
        if t.name in grown:
            err, msg = ErrorCode.INVALID_REQUEST, f"Duplicate topic {t.name} in the request."
        elif is_internal(t.name):  # its partition count places the groups' records
            err, msg = ErrorCode.TOPIC_AUTHORIZATION_FAILED, None
        elif topic is None:
            err, msg = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{t.name}' does not exist."
        elif t.count <= len(topic.partitions):
            err, msg = ErrorCode.INVALID_PARTITIONS, (
                f"Topic currently has {len(topic.partitions)} partitions, which is higher than "
                f"the requested {t.count}." if t.count < len(topic.partitions)
                else f"Topic already has {t.count} partitions.")
        elif t.count > MAX_PARTITIONS:
            err, msg = ErrorCode.INVALID_PARTITIONS, "Too many partitions requested."
        else:
            err, msg = 0, None
            if not request.validate_only:
                records.append(topic_record(topic.name, topic.topic_id, t.count, topic.configs))
                grown.add(t.name)
        results.append(R.CreatePartitionsTopicResult(name=t.name, error_code=err, error_message=msg))
    return broker.change(records, R(throttle_time_ms=0, results=results))
