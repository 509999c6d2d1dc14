"""Requests every workload needs (ApiVersions, topic creation, Metadata) and the
fixed responses the floor answers them with.

Floor responses are built with the same codec and shaped like kcsim's answers
(same fields, similar sizes), so the floor pays the same bytes on the wire.
"""

from __future__ import annotations

import uuid
from typing import Any

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec
from kcsim.protocol.headers import response_header_version

from .client import BenchError, Frame, LoadClient, message_class, request

API_VERSIONS, METADATA, CREATE_TOPICS = 18, 3, 19
API_VERSIONS_V = 3
METADATA_V = 12
CREATE_TOPICS_MAX_V = 7
_TOPIC_ALREADY_EXISTS = 36


def api_versions_frame() -> Frame:
    return request(API_VERSIONS, API_VERSIONS_V, client_software_name="kcsim-bench",
                   client_software_version="0.1")


def metadata_frame(topic: str, auto_create: bool = False) -> Frame:
    cls = message_class(METADATA, "request")
    return request(METADATA, METADATA_V, allow_auto_topic_creation=auto_create,
                   topics=[cls.MetadataRequestTopic(topic_id=uuid.UUID(int=0), name=topic)])


def served_versions(client: LoadClient) -> dict[int, tuple[int, int]]:
    """The server's ApiVersions table, checked for a zero error code."""
    resp = client.call(api_versions_frame())
    if resp.error_code != 0:
        raise BenchError(f"ApiVersions v{API_VERSIONS_V} answered error {resp.error_code}")
    return {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}


def ensure_topic(client: LoadClient, name: str, partitions: int) -> Any:
    """Create `name` (CreateTopics when served, else Metadata auto-creation, for which
    kcsim must run with --default-partitions) and return its Metadata v12 topic entry."""
    served = served_versions(client)
    if CREATE_TOPICS in served:
        lo, hi = served[CREATE_TOPICS]
        version = min(hi, CREATE_TOPICS_MAX_V)
        if version < lo:
            raise BenchError(f"CreateTopics versions {lo}-{hi} exclude every version the bench "
                             f"speaks (up to {CREATE_TOPICS_MAX_V})")
        cls = message_class(CREATE_TOPICS, "request")
        resp = client.call(request(CREATE_TOPICS, version, timeout_ms=30000, topics=[
            cls.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)]))
        err = resp.topics[0].error_code if resp.topics else None
        if err not in (0, _TOPIC_ALREADY_EXISTS):
            raise BenchError(f"CreateTopics v{version} for {name!r} answered error {err}")
        auto = False
    elif METADATA in served:
        auto = True
    else:
        raise BenchError("server serves neither CreateTopics nor Metadata")
    resp = client.call(metadata_frame(name, auto_create=auto))
    topics = [t for t in resp.topics if t.name == name]
    if len(topics) != 1 or topics[0].error_code != 0:
        got = [(t.name, t.error_code) for t in resp.topics]
        raise BenchError(f"Metadata v{METADATA_V} for {name!r} answered topics {got}")
    if len(topics[0].partitions) != partitions:
        raise BenchError(f"topic {name!r} has {len(topics[0].partitions)} partitions, "
                         f"wanted {partitions}")
    return topics[0]


# -- the floor's fixed responses -----------------------------------------------


def fixed_response(api_key: int, version: int, **fields: Any) -> bytes:
    """Everything of a response after its correlation id: header tags, then the body."""
    cls = message_class(api_key, "response")
    body = codec(api_key, "response").encode(cls(**fields), version)
    tags = b"\x00" if response_header_version(APIS[api_key], version) >= 1 else b""
    return tags + body


def floor_api_versions() -> bytes:
    """Every declared API at its full version range: at least kcsim's table in size."""
    cls = message_class(API_VERSIONS, "response")
    keys = [cls.ApiVersion(api_key=a.key, min_version=a.min_version, max_version=a.max_version)
            for a in sorted(APIS.values(), key=lambda a: a.key)]
    return fixed_response(API_VERSIONS, API_VERSIONS_V, error_code=0, api_keys=keys,
                          throttle_time_ms=0)


def floor_create_topics(name: str, partitions: int) -> bytes:
    cls = message_class(CREATE_TOPICS, "response")
    return fixed_response(CREATE_TOPICS, CREATE_TOPICS_MAX_V, throttle_time_ms=0, topics=[
        cls.CreatableTopicResult(name=name, topic_id=uuid.uuid4(), error_code=0,
                                 error_message=None, num_partitions=partitions,
                                 replication_factor=1, configs=[])])


def floor_metadata(name: str, partitions: int) -> bytes:
    cls = message_class(METADATA, "response")
    parts = [cls.MetadataResponsePartition(error_code=0, partition_index=i, leader_id=1,
                                           leader_epoch=0, replica_nodes=[1], isr_nodes=[1],
                                           offline_replicas=[])
             for i in range(partitions)]
    return fixed_response(
        METADATA, METADATA_V, throttle_time_ms=0,
        brokers=[cls.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=9092)],
        cluster_id="kcsim-cluster-000000000", controller_id=1,
        topics=[cls.MetadataResponseTopic(error_code=0, name=name, topic_id=uuid.uuid4(),
                                          partitions=parts)])


def floor_admin_table(topic: str, partitions: int) -> dict[int, bytes]:
    """What the floor needs to get through `ensure_topic`."""
    return {API_VERSIONS: floor_api_versions(),
            CREATE_TOPICS: floor_create_topics(topic, partitions),
            METADATA: floor_metadata(topic, partitions)}
