"""The world a group sees, kcsim against Kafka: ApiVersions, Metadata, CreateTopics and
ListOffsets at every version both serve."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import request_class

from . import ops
from .harness import API_VERSIONS
from .ops import CREATE_TOPICS, LIST_OFFSETS, METADATA

if TYPE_CHECKING:
    from .harness import Run

Across = Any
EXTENSION_KEYS = (1000, 1001, 1002)


def api_versions(run: Run, version: int) -> None:
    """The version ranges of the APIs kcsim declares (Kafka serves many more)."""
    cls = request_class(API_VERSIONS)
    answer = run.call(API_VERSIONS, version, cls(client_software_name="kcsim-oracle",
                                                 client_software_version="1"), compare=False)
    answer.api_keys = [k for k in answer.api_keys
                       if k.api_key in APIS or k.api_key in EXTENSION_KEYS]
    run.record(API_VERSIONS, version, answer)


def test_api_versions(across: Across) -> None:
    assert across(API_VERSIONS, api_versions)


def api_versions_target(run: Run) -> None:
    """KIP-1242 (v5): the client names the cluster and node it expects: this one, another
    cluster, another node, or only one of the two."""
    cls = request_class(API_VERSIONS)
    found = ops.metadata(run, [], compare=False)
    here, node = found.cluster_id, found.brokers[0].node_id
    for cluster_id, node_id in ((here, node), ("another-cluster", node), (here, node + 1),
                                (here, -1), (None, node)):
        answer = run.call(API_VERSIONS, 5, cls(
            client_software_name="kcsim-oracle", client_software_version="1",
            cluster_id=cluster_id, node_id=node_id), compare=False)
        answer.api_keys = [k for k in answer.api_keys
                           if k.api_key in APIS or k.api_key in EXTENSION_KEYS]
        run.record(API_VERSIONS, 5, answer)


def test_api_versions_target(differential: Any) -> None:
    differential(api_versions_target)


def metadata_cases(run: Run, version: int) -> None:
    """A topic with two partitions, unknown topics with and without auto-creation."""
    topic = run.topic()
    ops.create_topic(run, topic, 2, compare=False)
    ops.metadata(run, [topic], version=version)
    ops.metadata(run, [topic, run.topic("unknown")], version=version, auto_create=False)
    if version >= 4:
        auto = run.topic("auto")
        ops.metadata(run, [auto], version=version, auto_create=True)
        ops.wait_for_topic(run, auto, 1)
        ops.metadata(run, [auto], version=version, auto_create=True)
    ops.metadata(run, ["bad name!"], version=version, auto_create=True)


def test_metadata(across: Across) -> None:
    assert across(METADATA, metadata_cases)


def create_topics_cases(run: Run, version: int) -> None:
    """New, existing, invalid partition count, invalid name, replication factor too large,
    validate-only."""
    cls = request_class(CREATE_TOPICS)

    def create(name: str, partitions: int = 1, replication: int = 1,
               validate_only: bool = False) -> Any:
        return run.call(CREATE_TOPICS, version, cls(timeout_ms=30000, validate_only=validate_only,
                                                    topics=[cls.CreatableTopic(
                                                        name=name, num_partitions=partitions,
                                                        replication_factor=replication,
                                                        assignments=[], configs=[])]))

    topic = run.topic()
    create(topic, 3)
    ops.wait_for_topic(run, topic, 3)
    create(topic, 3)
    create(run.topic("zero"), 0)
    create("bad name!")
    create(run.topic("rf"), 1, 3)
    if version >= 1:
        create(run.topic("dry"), 2, validate_only=True)
        ops.metadata(run, [run.topic("dry")])


def test_create_topics(across: Across) -> None:
    assert across(CREATE_TOPICS, create_topics_cases)


def list_offsets_cases(run: Run, version: int) -> None:
    """Earliest and latest of an empty topic, a timestamp, a partition that does not exist."""
    topic = run.topic()
    ops.create_topic(run, topic, 2, compare=False)
    ops.list_offsets(run, topic, [0, 1], -2, version=version)
    ops.list_offsets(run, topic, [0], -1, version=version)
    ops.list_offsets(run, topic, [0], 0, version=version)
    ops.list_offsets(run, topic, [5], -1, version=version)
    ops.list_offsets(run, run.topic("unknown"), [0], -1, version=version)
    if version >= 7:
        ops.list_offsets(run, topic, [0], -3, version=version)


def test_list_offsets(across: Across) -> None:
    assert across(LIST_OFFSETS, list_offsets_cases)
