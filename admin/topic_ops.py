"""Where topics and their partitions live (Metadata), and their offsets (ListOffsets).

ListOffsets goes to each partition's leader, so the client works against a real
multi-broker cluster as well as against kcsim's single broker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from uuid import UUID

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode

from .calls import Call, should_retry
from .effects import Gather, Sleep, Step
from .errors import AdminError, timed_out
from .results import (
    ClusterInfo,
    ListOffsetsResultInfo,
    Node,
    OffsetSpec,
    Outcomes,
    PartitionInfo,
    TopicDescription,
    TopicPartition,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

METADATA = 3
LIST_OFFSETS = 2
MetadataRequest = request_class(METADATA)
ListOffsetsRequest = request_class(LIST_OFFSETS)
METADATA_VERSIONS = (1, 12)  # v1: null means all topics; v13+ only adds a top-level error
LIST_OFFSETS_VERSIONS = (1, 11)
MAX_TIMESTAMP_VERSION = 7
READ_UNCOMMITTED = 0
NO_TOPIC_ID = UUID(int=0)


def metadata(call: Call, topics: Iterable[str] | None) -> Step[ClusterInfo]:
    """Brokers, and the named topics (None: every topic); retried while the cluster is unsettled."""
    names = None if topics is None else list(dict.fromkeys(topics))

    def build(version: int) -> Any:
        wanted = None if names is None else [
            MetadataRequest.MetadataRequestTopic(topic_id=NO_TOPIC_ID, name=n) for n in names]
        return MetadataRequest(topics=wanted, allow_auto_topic_creation=False)

    def attempt() -> Step[ClusterInfo]:
        reply = yield call.send(None, METADATA, build, METADATA_VERSIONS)
        return _cluster_info(reply.body)

    return (yield from call.retrying(attempt))


def _cluster_info(body: Any) -> ClusterInfo:
    brokers = tuple(Node(b.node_id, b.host, b.port) for b in body.brokers)
    topics: dict[str, TopicDescription | AdminError] = {}
    for t in body.topics:
        if t.name is None:
            continue
        if t.error_code:
            topics[t.name] = AdminError(t.error_code)
            continue
        partitions = tuple(sorted(
            (PartitionInfo(p.partition_index, p.leader_id if p.leader_id >= 0 else None)
             for p in t.partitions),
            key=lambda p: p.partition,
        ))
        topics[t.name] = TopicDescription(t.name, t.topic_id, partitions, bool(t.is_internal))
    controller = body.controller_id if body.controller_id >= 0 else None
    return ClusterInfo(brokers, body.cluster_id, controller, topics)


def describe_topics(call: Call, names: Iterable[str]) -> Step[Outcomes[str, TopicDescription]]:
    names = list(dict.fromkeys(names))
    if not names:
        return Outcomes({})
    info = yield from metadata(call, names)
    missing = AdminError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    return Outcomes({n: info.topics.get(n, missing) for n in names})


def list_offsets(
    call: Call, specs: Mapping[TopicPartition, int], isolation_level: int = READ_UNCOMMITTED
) -> Step[Outcomes[TopicPartition, ListOffsetsResultInfo]]:
    """The offset each partition's spec (OffsetSpec or a timestamp) names, asked of its leader."""
    results: dict[TopicPartition, ListOffsetsResultInfo | AdminError] = {}
    pending = dict(specs)
    last: AdminError | None = None
    while pending:
        try:
            info = yield from metadata(call, {tp.topic for tp in pending})
        except AdminError as exc:
            for tp in pending:
                results[tp] = exc
            break
        brokers = {b.node_id: b for b in info.brokers}
        by_leader: dict[Node, dict[TopicPartition, int]] = {}
        retry: dict[TopicPartition, int] = {}
        for tp, spec in pending.items():
            where = _leader(info, brokers, tp)
            if isinstance(where, AdminError):
                if should_retry(where):
                    retry[tp], last = spec, where
                else:
                    results[tp] = where
            else:
                by_leader.setdefault(where, {})[tp] = spec
        batches = list(by_leader.items())
        outcomes = yield Gather(tuple(
            _list_offsets_on(call, node, batch, isolation_level) for node, batch in batches))
        for (_node, batch), outcome in zip(batches, outcomes):
            for tp, spec in batch.items():
                value = outcome if isinstance(outcome, AdminError) else outcome[tp]
                if isinstance(value, AdminError) and should_retry(value):
                    retry[tp], last = spec, value
                else:
                    results[tp] = value
        pending = retry
        if pending:
            delay = call.next_delay()
            if delay is None:
                for tp in pending:
                    results[tp] = timed_out(call.timeout, last)
                break
            yield Sleep(delay)
    return Outcomes({tp: results[tp] for tp in specs})


def _leader(info: ClusterInfo, brokers: dict[int, Node], tp: TopicPartition) -> Node | AdminError:
    topic = info.topics.get(tp.topic)
    if topic is None:
        return AdminError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {tp.topic!r} does not exist")
    if isinstance(topic, AdminError):
        return topic
    for p in topic.partitions:
        if p.partition == tp.partition:
            if p.leader is None or p.leader not in brokers:
                return AdminError(ErrorCode.LEADER_NOT_AVAILABLE, f"{tp} has no leader")
            return brokers[p.leader]
    return AdminError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"partition {tp} does not exist")


def _list_offsets_on(
    call: Call, node: Node, specs: dict[TopicPartition, int], isolation_level: int
) -> Step[dict[TopicPartition, ListOffsetsResultInfo | AdminError]]:
    by_topic: dict[str, list[tuple[int, int]]] = {}
    for tp, spec in specs.items():
        by_topic.setdefault(tp.topic, []).append((tp.partition, spec))

    def build(version: int) -> Any:
        return ListOffsetsRequest(
            replica_id=-1, isolation_level=isolation_level, timeout_ms=int(call.timeout * 1000),
            topics=[ListOffsetsRequest.ListOffsetsTopic(name=topic, partitions=[
                ListOffsetsRequest.ListOffsetsPartition(partition_index=p, timestamp=spec)
                for p, spec in parts]) for topic, parts in by_topic.items()])

    wants_max_timestamp = any(spec == OffsetSpec.MAX_TIMESTAMP for spec in specs.values())
    lowest = MAX_TIMESTAMP_VERSION if wants_max_timestamp else LIST_OFFSETS_VERSIONS[0]
    reply = yield call.send(node, LIST_OFFSETS, build, (lowest, LIST_OFFSETS_VERSIONS[1]))
    out: dict[TopicPartition, ListOffsetsResultInfo | AdminError] = {}
    for t in reply.body.topics:
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition_index)
            if p.error_code:
                out[tp] = AdminError(p.error_code)
            else:
                epoch = p.leader_epoch if p.leader_epoch >= 0 else None
                out[tp] = ListOffsetsResultInfo(p.offset, p.timestamp, epoch)
    for tp in specs:
        out.setdefault(tp, AdminError(ErrorCode.UNKNOWN_SERVER_ERROR, f"no answer for {tp}"))
    return out
