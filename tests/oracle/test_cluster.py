"""Three brokers: kcsim playing three nodes (`brokers=3`) against a real three-node Kafka 4.4
cluster (tests/oracle/cluster.py), answer by answer: Metadata, FindCoordinator, and the
NOT_COORDINATOR and NOT_LEADER_OR_FOLLOWER answers of a node that is not the one asked for.

Kafka's controller places replicas with a random start, so which node leads which
partition differs between the two and between runs. Each answer is therefore compared in
terms of the broker's own placement, as its Metadata shows it: "the partition's leader",
"the group's coordinator", "another node". Everything else is compared as it is: error
codes, replica and ISR sets, leader epochs, the KIP-951 current-leader fields and node
endpoints, the brokers listed and their addresses.

The cluster is a second Kafka (three JVMs) beside the oracle tier's single broker, more
than `make test` runs in one session: these tests run when KCSIM_ORACLE_CLUSTER=1 is set
(`make test-cluster`), and skip, saying so, otherwise.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from kcsim.protocol.codecs import request_class
from kcsim.server.embedded import EmbeddedServer
from tests.server.durability.wire import Wire
from tests.server.fuzz.batches import batch

from .cluster import NODES, KafkaCluster
from .kafka import GROUP_SETTINGS, KafkaUnavailable

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = [
    pytest.mark.java,
    pytest.mark.timeout(600),
    pytest.mark.skipif(os.environ.get("KCSIM_ORACLE_CLUSTER") != "1",
                       reason="the three-node Kafka cluster runs with KCSIM_ORACLE_CLUSTER=1 "
                              "(make test-cluster), NOT RUN"),
]

PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH = 0, 1, 2, 3, 8, 9
FIND_COORDINATOR, JOIN_GROUP, HEARTBEAT, DESCRIBE_GROUPS, INIT_PRODUCER_ID = 10, 11, 12, 15, 22
CONSUMER_GROUP_HEARTBEAT, CREATE_TOPICS = 68, 19
NOT_LEADER_OR_FOLLOWER, NOT_COORDINATOR = 6, 16
OFFSETS_TOPIC, TXN_TOPIC = "__consumer_offsets", "__transaction_state"
GROUPS = [f"cluster-group-{i}" for i in range(9)]
TXN_IDS = [f"cluster-txn-{i}" for i in range(6)]
SPREAD, LEAD = "cluster-spread", "cluster-lead"


class Broker:
    """One of the two three-node brokers: its nodes' addresses, and a connection to each."""

    def __init__(self, name: str, bootstrap: str) -> None:
        self.name = name
        host, port = bootstrap.rsplit(":", 1)
        with Wire(host, int(port)) as wire:
            meta = metadata(wire, [])
        self.addresses = {b.node_id: (b.host, b.port) for b in meta.brokers}
        assert sorted(self.addresses) == list(range(1, NODES + 1)), (name, self.addresses)

    def on(self, node: int) -> Wire:
        host, port = self.addresses[node]
        return Wire(host, port, timeout=30.0)

    def call(self, node: int, api_key: int, version: int, request: Any) -> Any:
        with self.on(node) as wire:
            return wire.call(api_key, version, request)

    def topic(self, name: str) -> Any:
        """Metadata of one topic, asked of node 1."""
        with self.on(1) as wire:
            (found,) = metadata(wire, [name]).topics
        assert found.error_code == 0, (self.name, name, found.error_code)
        return found

    def leaders(self, name: str) -> dict[int, Any]:
        """partition -> its Metadata entry."""
        return {p.partition_index: p for p in self.topic(name).partitions}


def metadata(wire: Wire, topics: list[str]) -> Any:
    cls = request_class(METADATA)
    return wire.call(METADATA, 12, cls(
        topics=[cls.MetadataRequestTopic(name=t, topic_id=uuid.UUID(int=0)) for t in topics],
        allow_auto_topic_creation=False, include_topic_authorized_operations=False))


def create_topic(broker: Broker, name: str, partitions: int) -> None:
    cls = request_class(CREATE_TOPICS)
    answer = broker.call(1, CREATE_TOPICS, 7, cls(timeout_ms=30000, validate_only=False, topics=[
        cls.CreatableTopic(name=name, num_partitions=partitions, replication_factor=3,
                           assignments=[], configs=[])]))
    assert answer.topics[0].error_code in (0, 36), (broker.name, answer.topics[0])


def java_hash(text: str) -> int:
    """Java's String.hashCode, as Kafka's partitionFor takes it."""
    h = 0
    for unit in memoryview(text.encode("utf-16-be")).cast("H"):  # UTF-16 code units
        h = (31 * h + ((unit >> 8) | ((unit & 0xFF) << 8))) & 0xFFFFFFFF  # to big-endian
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(key: str, partitions: int) -> int:
    return (java_hash(key) & 0x7FFFFFFF) % partitions


def builtins(answer: Any) -> Any:
    return msgspec.to_builtins(answer)


def error_codes(answer: Any) -> set[int]:
    """Every `error_code` in an answer (as `builtins` gives it), at any depth."""
    if isinstance(answer, dict):
        found = {answer["error_code"]} if "error_code" in answer else set()
        return found.union(*(error_codes(v) for v in answer.values()))
    if isinstance(answer, list):
        return set().union(*(error_codes(v) for v in answer))
    return set()


@pytest.fixture(scope="module")
def kafka3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    try:
        cluster = KafkaCluster(tmp_path_factory.mktemp("kafka3")).start()
    except KafkaUnavailable as exc:
        pytest.skip(f"a three-node Kafka could not be started, NOT RUN: {exc}")
    try:
        yield Broker(f"kafka {cluster.version} x3", cluster.bootstrap)
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def kcsim3() -> Iterator[Broker]:
    settings: dict[str, Any] = {name: value for name, _, value in GROUP_SETTINGS}
    settings["offsets_topic_num_partitions"] = 3
    server = EmbeddedServer(host="127.0.0.1", node_id=1, brokers=NODES, auto_create_topics=True,
                            **settings).start()
    try:
        yield Broker("kcsim x3", server.bootstrap)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def both(kcsim3: Broker, kafka3: Broker) -> tuple[Broker, Broker]:
    for broker in (kcsim3, kafka3):
        create_topic(broker, SPREAD, 6)
        create_topic(broker, LEAD, 3)
        find_coordinators(broker, 1, GROUPS, 0)  # the internal topics made
        find_coordinators(broker, 1, TXN_IDS, 1)
    return kcsim3, kafka3


def find_coordinators(broker: Broker, node: int, keys: list[str], key_type: int) -> Any:
    return broker.call(node, FIND_COORDINATOR, 4, request_class(FIND_COORDINATOR)(
        key_type=key_type, coordinator_keys=keys))


def each(both: tuple[Broker, Broker], shape: Any) -> None:
    """`shape(broker)` is the same on kcsim as on Kafka."""
    ours, theirs = (shape(b) for b in both)
    assert ours == theirs, f"kcsim:\n{ours}\nKafka:\n{theirs}"


# -- Metadata --------------------------------------------------------------------


def test_metadata_lists_the_three_nodes_and_the_controller(both: tuple[Broker, Broker]) -> None:
    def shape(broker: Broker) -> Any:
        answers = []
        for node in range(1, NODES + 1):
            with broker.on(node) as wire:
                meta = metadata(wire, [])
            answers.append({
                "brokers": sorted((b.node_id, b.host, b.port == broker.addresses[b.node_id][1],
                                   b.rack) for b in meta.brokers),
                "controller is a node": meta.controller_id in broker.addresses,
                "cluster id set": bool(meta.cluster_id),
            })
        return answers
    each(both, shape)


@pytest.mark.parametrize(("topic", "partitions"), [(SPREAD, 6), (OFFSETS_TOPIC, 3)])
def test_partitions_have_three_replicas_leader_first_and_leaders_on_every_node(
        both: tuple[Broker, Broker], topic: str, partitions: int) -> None:
    def shape(broker: Broker) -> Any:
        found = broker.topic(topic)
        rows = []
        for p in sorted(found.partitions, key=lambda p: p.partition_index):
            rows.append({
                "partition": p.partition_index, "error": p.error_code,
                "leader first": p.replica_nodes[0] == p.leader_id,
                "replicas": sorted(p.replica_nodes), "isr": sorted(p.isr_nodes),
                "offline": p.offline_replicas, "leader epoch": p.leader_epoch,
            })
        per_node = Counter(p.leader_id for p in found.partitions)
        return {"internal": found.is_internal, "partitions": rows,
                "leaders per node": sorted(per_node.values()),
                "nodes leading": sorted(per_node)}
    each(both, shape)
    assert len(both[1].topic(topic).partitions) == partitions


# -- FindCoordinator -------------------------------------------------------------


def test_every_node_names_the_leader_of_the_group_s_partition_as_coordinator(
        both: tuple[Broker, Broker]) -> None:
    key_type, keys, topic, partitions = 0, GROUPS, OFFSETS_TOPIC, 3

    def shape(broker: Broker) -> Any:
        leaders = broker.leaders(topic)
        rows = []
        for node in range(1, NODES + 1):
            answer = find_coordinators(broker, node, keys, key_type)
            for c in answer.coordinators:
                leader = leaders[partition_for(c.key, partitions)].leader_id
                rows.append({
                    "asked": "any node", "key": c.key, "error": c.error_code,
                    "message": c.error_message,
                    "is the partition's leader": c.node_id == leader,
                    "address is the node's": (c.host, c.port) == broker.addresses[c.node_id],
                })
        return rows
    each(both, shape)


def test_every_node_names_the_same_transaction_coordinator(both: tuple[Broker, Broker]) -> None:
    """kcsim has no `__transaction_state` topic (its transactions live in its own log), so
    Metadata cannot show that topic's leaders; every node names the same coordinator, at
    that node's address. On Kafka that node leads the id's partition of the 50."""
    def shape(broker: Broker) -> Any:
        named: dict[str, set[tuple[int, str | None, int]]] = {}
        for node in range(1, NODES + 1):
            for c in find_coordinators(broker, node, TXN_IDS, 1).coordinators:
                named.setdefault(c.key, set()).add((c.error_code, c.error_message, c.node_id))
                assert (c.host, c.port) == broker.addresses[c.node_id], (broker.name, c)
        return {key: [(e, m) for e, m, _ in found] for key, found in sorted(named.items())}
    each(both, shape)
    leaders = both[1].leaders(TXN_TOPIC)
    for c in find_coordinators(both[1], 1, TXN_IDS, 1).coordinators:
        assert c.node_id == leaders[partition_for(c.key, 50)].leader_id


def test_find_coordinator_v3_answers_one_key_as_v4_does(both: tuple[Broker, Broker]) -> None:
    def shape(broker: Broker) -> Any:
        rows = []
        for key in GROUPS[:3]:
            answer = broker.call(2, FIND_COORDINATOR, 3, request_class(FIND_COORDINATOR)(
                key=key, key_type=0))
            (batched,) = find_coordinators(broker, 3, [key], 0).coordinators
            rows.append((answer.error_code, answer.node_id == batched.node_id,
                         (answer.host, answer.port) == (batched.host, batched.port)))
        return rows
    each(both, shape)


# -- NOT_COORDINATOR ---------------------------------------------------------------


def coordinator_of(broker: Broker, key: str, key_type: int = 0) -> int:
    (found,) = find_coordinators(broker, 1, [key], key_type).coordinators
    assert found.error_code == 0, (broker.name, found)
    return int(found.node_id)


def group_requests(group: str) -> list[tuple[str, int, int, Any]]:
    """(name, api key, version, request) of the group calls a client makes."""
    commit, fetch = request_class(OFFSET_COMMIT), request_class(OFFSET_FETCH)
    join, describe = request_class(JOIN_GROUP), request_class(DESCRIBE_GROUPS)
    return [
        ("OffsetCommit", OFFSET_COMMIT, 9, commit(
            group_id=group, generation_id_or_member_epoch=-1, member_id="",
            group_instance_id=None, retention_time_ms=-1, topics=[
                commit.OffsetCommitRequestTopic(name=LEAD, partitions=[
                    commit.OffsetCommitRequestPartition(
                        partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                        committed_metadata="")])])),
        ("OffsetFetch", OFFSET_FETCH, 9, fetch(require_stable=False, groups=[
            fetch.OffsetFetchRequestGroup(group_id=group, member_id=None, member_epoch=-1,
                                          topics=None)])),
        ("JoinGroup", JOIN_GROUP, 9, join(
            group_id=group, session_timeout_ms=30000, rebalance_timeout_ms=30000, member_id="",
            group_instance_id=None, protocol_type="consumer", protocols=[
                join.JoinGroupRequestProtocol(name="range", metadata=b"")], reason=None)),
        ("Heartbeat", HEARTBEAT, 4, request_class(HEARTBEAT)(
            group_id=group, generation_id=1, member_id="m", group_instance_id=None)),
        ("DescribeGroups", DESCRIBE_GROUPS, 5, describe(
            groups=[group], include_authorized_operations=False)),
        ("ConsumerGroupHeartbeat", CONSUMER_GROUP_HEARTBEAT, 1,
         request_class(CONSUMER_GROUP_HEARTBEAT)(
             group_id=group, member_id="cluster-member-0000000001", member_epoch=0,
             rebalance_timeout_ms=30000, subscribed_topic_names=[LEAD], topic_partitions=[])),
    ]


@pytest.mark.parametrize("call", [name for name, *_ in group_requests("g")])
def test_group_requests_to_another_node_are_answered_not_coordinator(
        both: tuple[Broker, Broker], call: str) -> None:
    def shape(broker: Broker) -> Any:
        answers = []
        for group in GROUPS[:3]:
            coordinator = coordinator_of(broker, group)
            _, api_key, version, request = next(r for r in group_requests(group)
                                                if r[0] == call)
            for node in sorted(set(broker.addresses) - {coordinator}):
                answers.append(builtins(broker.call(node, api_key, version, request)))
        return answers
    each(both, shape)
    assert all(NOT_COORDINATOR in error_codes(a) for a in shape(both[0])), shape(both[0])


def test_init_producer_id_of_a_transactional_id_elsewhere_is_not_coordinator(
        both: tuple[Broker, Broker]) -> None:
    def shape(broker: Broker) -> Any:
        answers = []
        for txn in TXN_IDS[:3]:
            coordinator = coordinator_of(broker, txn, 1)
            for node in sorted(set(broker.addresses) - {coordinator}):
                answers.append(builtins(broker.call(node, INIT_PRODUCER_ID, 5,
                                                    request_class(INIT_PRODUCER_ID)(
                    transactional_id=txn, transaction_timeout_ms=60000, producer_id=-1,
                    producer_epoch=-1))))
        return answers
    each(both, shape)
    assert all(a["error_code"] == NOT_COORDINATOR for a in shape(both[0]))


# -- NOT_LEADER_OR_FOLLOWER ----------------------------------------------------------


def followers(broker: Broker) -> Iterator[tuple[int, Any, int]]:
    """(partition, its Metadata entry, a node that follows it) for each partition of LEAD."""
    leaders = broker.leaders(LEAD)
    for partition in range(3):
        entry = leaders[partition]
        for node in sorted(set(broker.addresses) - {entry.leader_id}):
            yield partition, entry, node


def leader_fields(broker: Broker, entry: Any, current: Any, endpoints: Any) -> Any:
    """KIP-951's fields in the broker's own terms."""
    return {
        "current leader is the leader": current.leader_id == entry.leader_id,
        "current epoch is the leader epoch": current.leader_epoch == entry.leader_epoch,
        "endpoints": sorted((e.node_id == entry.leader_id,
                             (e.host, e.port) == broker.addresses[e.node_id], e.rack)
                            for e in (endpoints or [])),
    }


def test_produce_to_a_follower_is_not_leader_with_the_current_leader(
        both: tuple[Broker, Broker]) -> None:
    cls = request_class(PRODUCE)

    def shape(broker: Broker) -> Any:
        rows = []
        for partition, entry, node in followers(broker):
            answer = broker.call(node, PRODUCE, 12, cls(
                transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[
                    cls.TopicProduceData(name=LEAD, partition_data=[
                        cls.PartitionProduceData(index=partition,
                                                 records=batch([b"x"]))])]))
            (part,) = answer.responses[0].partition_responses
            rows.append({"error": part.error_code, "base offset": part.base_offset,
                         "message": part.error_message,
                         **leader_fields(broker, entry, part.current_leader,
                                         answer.node_endpoints)})
        return rows
    each(both, shape)
    assert all(r["error"] == NOT_LEADER_OR_FOLLOWER for r in shape(both[0]))


@pytest.mark.parametrize("version", [10, 16])
def test_fetch_from_a_follower_is_refused_before_v11_and_served_from_it(
        both: tuple[Broker, Broker], version: int) -> None:
    """KIP-392: a consumer's Fetch that carries its rack (v11+) is served by a follower;
    an older one is answered NOT_LEADER_OR_FOLLOWER."""
    cls = request_class(FETCH)

    def shape(broker: Broker) -> Any:
        topic_id = broker.topic(LEAD).topic_id
        rows = []
        for partition, _, node in followers(broker):
            topic = (cls.FetchTopic(topic=LEAD, partitions=[]) if version < 13
                     else cls.FetchTopic(topic_id=topic_id, partitions=[]))
            topic.partitions = [cls.FetchPartition(
                partition=partition, current_leader_epoch=-1, fetch_offset=0,
                last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=1 << 20)]
            answer = broker.call(node, FETCH, version, cls(
                replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                isolation_level=0, session_id=0, session_epoch=-1, topics=[topic],
                forgotten_topics_data=[], rack_id=""))
            (part,) = answer.responses[0].partitions
            rows.append({"top error": answer.error_code, "error": part.error_code,
                         "high watermark": part.high_watermark,
                         "log start": part.log_start_offset,
                         "preferred read replica": part.preferred_read_replica})
        return rows
    each(both, shape)
    expected = NOT_LEADER_OR_FOLLOWER if version < 11 else 0
    assert all(r["error"] == expected for r in shape(both[0]))


def test_list_offsets_from_a_follower_is_not_leader(both: tuple[Broker, Broker]) -> None:
    cls = request_class(LIST_OFFSETS)

    def shape(broker: Broker) -> Any:
        rows = []
        for partition, _, node in followers(broker):
            answer = broker.call(node, LIST_OFFSETS, 9, cls(
                replica_id=-1, isolation_level=0, topics=[cls.ListOffsetsTopic(
                    name=LEAD, partitions=[cls.ListOffsetsPartition(
                        partition_index=partition, current_leader_epoch=-1,
                        timestamp=-1)])]))
            rows.append(builtins(answer.topics[0].partitions[0]))
        return rows
    each(both, shape)
    assert all(r["error_code"] == NOT_LEADER_OR_FOLLOWER for r in shape(both[0]))


def test_the_leader_takes_what_its_followers_refuse(both: tuple[Broker, Broker]) -> None:
    """The same Produce sent to the partition's leader is appended (the refusals above
    were about the node, not the request)."""
    cls = request_class(PRODUCE)

    def shape(broker: Broker) -> Any:
        entry = broker.leaders(LEAD)[0]
        answer = broker.call(entry.leader_id, PRODUCE, 12, cls(
            transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[
                cls.TopicProduceData(name=LEAD, partition_data=[
                    cls.PartitionProduceData(index=0, records=batch([b"x"]))])]))
        (part,) = answer.responses[0].partition_responses
        return {"error": part.error_code, "appended": part.base_offset >= 0}
    each(both, shape)
