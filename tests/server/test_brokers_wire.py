"""Several brokers in one kcsim, on the wire: what each node answers a request that
belongs to another (NOT_LEADER_OR_FOLLOWER with KIP-951's leader fields, NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS), FindCoordinator's batched keys, and a node that stops."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.coordinator.kafka_format import partition_for
from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode

from .rawkafka import decode_response, request_frame

if TYPE_CHECKING:
    from kcsim import EmbeddedServer

pytestmark = pytest.mark.kcsim(brokers=3, default_partitions=6)

FETCH, METADATA, OFFSET_FETCH, FIND_COORDINATOR, HEARTBEAT = 1, 3, 9, 10, 12
DESCRIBE_GROUPS, INIT_PRODUCER_ID, DELETE_GROUPS, DESCRIBE_TRANSACTIONS = 15, 22, 42, 65


def call(port: int, api_key: int, version: int, **fields: Any) -> Any:
    """One request to the node on `port`; its decoded answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request_frame(api_key, version, 7, request_class(api_key)(**fields)))
        size = int.from_bytes(_exactly(sock, 4), "big")
        return decode_response(api_key, version, _exactly(sock, size))[1]


def _exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def ports(kcsim: EmbeddedServer) -> dict[int, int]:
    return {n["node"]: int(n["listeners"]["PLAINTEXT"].rsplit(":", 1)[1])
            for n in kcsim.nodes.list()}


def metadata(port: int, topic: str) -> Any:
    M = request_class(METADATA)
    return call(port, METADATA, 12, topics=[M.MetadataRequestTopic(name=topic)])


def test_nodes_listen_on_consecutive_ids_and_metadata_names_them(kcsim: EmbeddedServer) -> None:
    by_node = ports(kcsim)
    assert sorted(by_node) == [1, 2, 3]
    metadata(by_node[1], "spread")  # creates it
    for port in by_node.values():
        answer = metadata(port, "spread")
        assert {(b.node_id, b.port) for b in answer.brokers} == set(by_node.items())
        (topic,) = answer.topics
        assert {p.partition_index: p.leader_id for p in topic.partitions} == {
            p: kcsim.nodes.leader("spread", p) for p in range(6)}
        assert all(p.replica_nodes[0] == p.leader_id and sorted(p.isr_nodes) == [1, 2, 3]
                   for p in topic.partitions)


def test_a_consumer_s_fetch_at_a_follower_is_served_there_from_v11(kcsim: EmbeddedServer) -> None:
    """KIP-392: a Fetch that carries the client's rack (v11+) is served by any replica, as
    Kafka's followers serve it; every node of three is a replica of every partition."""
    by_node = ports(kcsim)
    metadata(by_node[1], "led")  # creates it
    topic_id = metadata(by_node[1], "led").topics[0].topic_id
    F = request_class(FETCH)
    answer = call(by_node[1], FETCH, 16, max_wait_ms=0, min_bytes=1, topics=[F.FetchTopic(
        topic_id=topic_id, partitions=[F.FetchPartition(partition=p, partition_max_bytes=1024)
                                       for p in range(6)])])
    assert {p.partition_index: p.error_code for t in answer.responses
            for p in t.partitions} == dict.fromkeys(range(6), 0)
    assert {kcsim.nodes.leader("led", p) for p in range(6)} != {1}  # some led elsewhere


def test_an_older_fetch_at_a_follower_is_not_leader(kcsim: EmbeddedServer) -> None:
    by_node = ports(kcsim)
    metadata(by_node[1], "led")  # creates it
    here = [p for p in range(6) if kcsim.nodes.leader("led", p) == 1]
    away = [p for p in range(6) if kcsim.nodes.leader("led", p) != 1]
    F = request_class(FETCH)
    answer = call(by_node[1], FETCH, 10, max_wait_ms=5000, min_bytes=1, topics=[F.FetchTopic(
        topic="led", partitions=[F.FetchPartition(partition=p, partition_max_bytes=1024)
                                 for p in range(6)])])
    errors = {p.partition_index: p.error_code for t in answer.responses for p in t.partitions}
    assert errors == {**dict.fromkeys(here, 0),
                      **dict.fromkeys(away, ErrorCode.NOT_LEADER_OR_FOLLOWER)}


def group_of(kcsim: EmbeddedServer, node: int) -> str:
    return next(g for g in (f"g{i}" for i in range(500)) if kcsim.nodes.coordinator(g) == node)


def test_find_coordinator_answers_each_key_by_its_node(kcsim: EmbeddedServer) -> None:
    by_node = ports(kcsim)
    groups = [group_of(kcsim, n) for n in (1, 2, 3)]
    answer = call(by_node[2], FIND_COORDINATOR, 4, key_type=0, coordinator_keys=groups)
    assert [(c.key, c.node_id, c.port) for c in answer.coordinators] == [
        (g, n, by_node[n]) for g, n in zip(groups, (1, 2, 3), strict=True)]
    metadata_leaders = {p.partition_index: p.leader_id
                        for p in metadata(by_node[1], "__consumer_offsets").topics[0].partitions}
    assert [metadata_leaders[partition_for(g, 50)] for g in groups] == [1, 2, 3]


def test_group_requests_at_another_node_are_not_coordinator(kcsim: EmbeddedServer) -> None:
    by_node = ports(kcsim)
    group = group_of(kcsim, 2)

    def heartbeat(node: int) -> int:
        return int(call(by_node[node], HEARTBEAT, 4, group_id=group, generation_id=1,
                        member_id="m").error_code)

    assert heartbeat(1) == ErrorCode.NOT_COORDINATOR
    assert heartbeat(2) == ErrorCode.UNKNOWN_MEMBER_ID
    kcsim.clock.freeze()
    kcsim.nodes.move_coordinator(group, 3, load_ms=1000)
    assert heartbeat(2) == ErrorCode.NOT_COORDINATOR
    assert heartbeat(3) == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    kcsim.clock.advance(1000)
    assert heartbeat(3) == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_request_naming_several_groups_is_answered_per_group(kcsim: EmbeddedServer) -> None:
    by_node = ports(kcsim)
    here, away, loading = group_of(kcsim, 1), group_of(kcsim, 2), group_of(kcsim, 3)
    kcsim.clock.freeze()
    kcsim.nodes.move_coordinator(loading, 1, load_ms=1000)
    named = [away, here, loading]
    described = call(by_node[1], DESCRIBE_GROUPS, 5, groups=named)
    assert [(g.group_id, g.error_code, g.group_state) for g in described.groups] == [
        (away, ErrorCode.NOT_COORDINATOR, ""), (here, 0, "Dead"),
        (loading, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "")]
    OF = request_class(OFFSET_FETCH)
    fetched = call(by_node[1], OFFSET_FETCH, 8, groups=[
        OF.OffsetFetchRequestGroup(group_id=g, topics=None) for g in named])
    assert [(g.group_id, g.error_code) for g in fetched.groups] == [
        (away, ErrorCode.NOT_COORDINATOR), (here, 0),
        (loading, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)]
    deleted = call(by_node[2], DELETE_GROUPS, 2, groups_names=[here, away])
    assert [(g.group_id, g.error_code) for g in deleted.results] == [
        (here, ErrorCode.NOT_COORDINATOR), (away, ErrorCode.GROUP_ID_NOT_FOUND)]


def test_describe_transactions_is_answered_per_transactional_id(kcsim: EmbeddedServer) -> None:
    by_node = ports(kcsim)
    here, away = (next(t for t in (f"dt{i}" for i in range(500))
                       if kcsim.nodes.coordinator(t, transactional=True) == n) for n in (1, 2))
    answer = call(by_node[1], DESCRIBE_TRANSACTIONS, 0, transactional_ids=[away, here])
    assert [(t.transactional_id, t.error_code) for t in answer.transaction_states] == [
        (away, ErrorCode.NOT_COORDINATOR), (here, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)]


def test_transactional_requests_at_another_node_are_not_coordinator(
        kcsim: EmbeddedServer) -> None:
    by_node = ports(kcsim)
    tid = next(t for t in (f"tx{i}" for i in range(500))
               if kcsim.nodes.coordinator(t, transactional=True) == 3)
    wrong = call(by_node[1], INIT_PRODUCER_ID, 4, transactional_id=tid,
                 transaction_timeout_ms=10000)
    assert wrong.error_code == ErrorCode.NOT_COORDINATOR
    right = call(by_node[3], INIT_PRODUCER_ID, 4, transactional_id=tid,
                 transaction_timeout_ms=10000)
    assert right.error_code == 0 and right.producer_id >= 0


def test_a_stopped_node_refuses_connections_until_started(kcsim: EmbeddedServer) -> None:
    by_node = ports(kcsim)
    with socket.create_connection(("127.0.0.1", by_node[2]), timeout=10) as open_before:
        open_before.sendall(request_frame(METADATA, 12, 1, request_class(METADATA)()))
        assert open_before.recv(4)  # served: the connection is open
        kcsim.nodes.stop(2)
        while open_before.recv(65536):  # the rest of the answer
            pass
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", by_node[2]), timeout=10).close()
    answer = metadata(by_node[1], "after")
    assert {b.node_id for b in answer.brokers} == {1, 3}
    assert all(p.leader_id != 2 and 2 not in p.isr_nodes and 2 in p.offline_replicas
               for p in answer.topics[0].partitions if 2 in p.replica_nodes)
    kcsim.nodes.start(2)
    assert {b.node_id for b in metadata(by_node[2], "after").brokers} == {1, 2, 3}


def test_one_broker_refuses_node_controls(kcsim_embedded_factory: Any) -> None:
    one = kcsim_embedded_factory()
    with pytest.raises(ValueError, match="one broker"):
        one.nodes.stop(1)
