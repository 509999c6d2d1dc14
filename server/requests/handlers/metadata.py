"""Metadata (3), FindCoordinator (10) and DescribeCluster (60): where things live."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import response_class
from kcsim.protocol.errors import ErrorCode

from ...offsets.topic import is_internal
from ...state.routing import broker_nodes, controller_id, coordinator_node
from ...state.topics import topic_name_problem
from ..routes import serves
from .topic_admin import topic_record

if TYPE_CHECKING:
    from ...state.broker_state import BrokerState

MetadataResponse = response_class(3)
FindCoordinatorResponse = response_class(10)
DescribeClusterResponse = response_class(60)
_Broker = MetadataResponse.MetadataResponseBroker
_Topic = MetadataResponse.MetadataResponseTopic
_Partition = MetadataResponse.MetadataResponsePartition

INT32_MIN = -(2**31)
# AclOperation codes: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
# DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11; the bitfield sets bit (1 << code).
TOPIC_OPERATIONS = sum(1 << c for c in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_OPERATIONS = sum(1 << c for c in (5, 7, 8, 9, 10, 11, 12))  # + CLUSTER_ACTION 9, IDEMPOTENT_WRITE 12


def _describe_topic(broker: Any, topic: Any, ops: bool) -> Any:
    topology = broker.topology
    if topology is None:
        node = broker.config.node_id
        parts = [
            _Partition(error_code=0, partition_index=p.index, leader_id=node, leader_epoch=0,
                       replica_nodes=[node], isr_nodes=[node], offline_replicas=[])
            for p in topic.partitions
        ]
    else:
        name = topic.name
        parts = [
            _Partition(error_code=0, partition_index=p.index,
                       leader_id=topology.leader(name, p.index), leader_epoch=0,
                       replica_nodes=topology.replicas(name, p.index),
                       isr_nodes=topology.isr(name, p.index),
                       offline_replicas=topology.offline(name, p.index))
            for p in topic.partitions
        ]
    return _Topic(error_code=0, name=topic.name, topic_id=topic.topic_id,
                  is_internal=is_internal(topic.name),
                  partitions=parts,
                  topic_authorized_operations=TOPIC_OPERATIONS if ops else INT32_MIN)


def _brokers(broker: Any, ctx: Any) -> list[Any]:
    return [_Broker(node_id=node, host=host, port=port, rack=None)
            for node, host, port in broker_nodes(broker, ctx.listener)]


def _topics_version(broker: BrokerState) -> int:
    """What Metadata's answers depend on: the topics, and where they are led (both
    versions only grow, so their sum changes whenever either does)."""
    topology = broker.topology
    return broker.topics.version + (0 if topology is None else topology.version)


@serves(3, cache_state=_topics_version)
def metadata(broker: Any, ctx: Any, request: Any) -> Any:
    topics = broker.topics
    ops = bool(request.include_topic_authorized_operations)
    wanted = request.topics
    records: list[Any] = []
    created: dict[str, uuid.UUID] = {}
    out = []
    if wanted is None or (ctx.api_version == 0 and not wanted):
        out = [_describe_topic(broker, t, ops) for t in topics.by_name.values()]
    else:
        auto = broker.config.auto_create_topics and (
            request.allow_auto_topic_creation or ctx.api_version < 4)
        for item in wanted:
            name = item.name
            if name is None:
                topic = topics.by_id.get(item.topic_id)
                if topic is None:
                    out.append(_Topic(error_code=ErrorCode.UNKNOWN_TOPIC_ID, name=None,
                                      topic_id=item.topic_id, partitions=[]))
                    continue
            else:
                topic = topics.get(name)
            if topic is None:
                problem = topic_name_problem(name)
                if problem is not None:
                    out.append(_Topic(error_code=ErrorCode.INVALID_TOPIC_EXCEPTION, name=name,
                                      partitions=[]))
                    continue
                if not auto:
                    out.append(_Topic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                      name=name, partitions=[]))
                    continue
                if name not in created:
                    created[name] = uuid.uuid4()
                    records.append(topic_record(name, created[name],
                                                broker.config.default_partitions, {}))
                # Kafka (KRaft) answers the request that creates a topic as if the topic
                # were unknown, with no topic id; clients ask again and find it.
                out.append(_Topic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name,
                                  topic_id=_NO_TOPIC_ID, partitions=[]))
                continue
            out.append(_describe_topic(broker, topic, ops))
    response = MetadataResponse(
        throttle_time_ms=0, brokers=_brokers(broker, ctx), cluster_id=broker.config.cluster_id,
        controller_id=controller_id(broker), topics=out,
        cluster_authorized_operations=(
            CLUSTER_OPERATIONS if request.include_cluster_authorized_operations else INT32_MIN),
    )
    return broker.change(records, response)


_NO_TOPIC_ID = uuid.UUID(int=0)


@serves(10)
def find_coordinator(broker: Any, ctx: Any, request: Any) -> Any:
    # Kafka's success message is the error's name at v1-3 and empty per key at v4+.
    if ctx.api_version < 4:
        node, host, port = coordinator_node(broker, ctx.listener, request.key,
                                            request.key_type)
        return FindCoordinatorResponse(throttle_time_ms=0, error_code=0, error_message="NONE",
                                       node_id=node, host=host, port=port)
    coordinators = []
    for key in request.coordinator_keys:
        node, host, port = coordinator_node(broker, ctx.listener, key, request.key_type)
        coordinators.append(FindCoordinatorResponse.Coordinator(
            key=key, node_id=node, host=host, port=port, error_code=0, error_message=""))
    return FindCoordinatorResponse(throttle_time_ms=0, coordinators=coordinators)


@serves(60)
def describe_cluster(broker: Any, ctx: Any, request: Any) -> Any:
    brokers = [
        DescribeClusterResponse.DescribeClusterBroker(
            broker_id=node, host=host, port=port, rack=None, is_fenced=False)
        for node, host, port in broker_nodes(broker, ctx.listener)]
    return DescribeClusterResponse(
        throttle_time_ms=0, error_code=0, error_message=None, endpoint_type=1,
        cluster_id=broker.config.cluster_id, controller_id=controller_id(broker),
        brokers=brokers,
        cluster_authorized_operations=(
            CLUSTER_OPERATIONS if request.include_cluster_authorized_operations else INT32_MIN),
    )
