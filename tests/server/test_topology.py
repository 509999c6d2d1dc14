"""The topology of a several-broker kcsim: placement, failover, moves, coordinators."""

from __future__ import annotations

import random

import pytest

from kcsim.coordinator.kafka_format import partition_for
from kcsim.server.state.topology import (
    OFFSETS_TOPIC,
    TRANSACTION_KEY,
    TRANSACTION_TOPIC,
    Topology,
    TopologyError,
)


def three() -> Topology:
    return Topology([1, 2, 3], offsets_partitions=50)


def start_of(topic: str, n: int = 3) -> int:
    return partition_for(topic, n)


@pytest.mark.parametrize(("nodes", "partitions", "replication"), [
    ([1], 4, 1), ([1, 2], 4, 2), ([1, 2, 3], 6, 3), ([1, 2, 3, 4, 5], 10, 3)])
def test_placement_is_round_robin_from_the_topic_start(nodes, partitions, replication):
    topo = Topology(nodes, offsets_partitions=50)
    start = partition_for("orders", len(nodes))
    for p in range(partitions):
        expected = [nodes[(start + p + i) % len(nodes)] for i in range(replication)]
        assert topo.replicas("orders", p) == expected
        assert topo.leader("orders", p) == expected[0]
        assert topo.isr("orders", p) == expected
    assert {topo.leader("orders", p) for p in range(partitions)} == set(nodes)


def leaders(topo: Topology, topic: str, n: int) -> list[int]:
    return [topo.leader(topic, p) for p in range(n)]


# Each case: moves applied to a fresh three-node topology, then what one partition
# ("t", partition 0, preferred replicas r0 r1 r2) looks like.
CASES = {
    "stop the leader: the next replica leads, the stopped one is out of the ISR":
        (["stop r0"], "r1", ["r1", "r2"], ["r0"]),
    "stop two: the last replica leads":
        (["stop r0", "stop r1"], "r2", ["r2"], ["r0", "r1"]),
    "stop and start: the preferred leader is back":
        (["stop r0", "start r0"], "r0", ["r0", "r1", "r2"], []),
    "move: the moved leader comes first": (["move r2"], "r2", ["r2", "r0", "r1"], []),
    "a move to a node that then stops is forgotten":
        (["move r2", "stop r2", "start r2"], "r0", ["r0", "r1", "r2"], []),
    "stopping another node keeps a move": (["move r2", "stop r1"], "r2", ["r2", "r0"], ["r1"]),
}


@pytest.mark.parametrize("case", CASES)
def test_moves(case):
    moves, leader, isr, offline = CASES[case]
    topo = three()
    r = dict(zip(("r0", "r1", "r2"), topo.replicas("t", 0), strict=True))
    for move in moves:
        verb, node = move.split()
        if verb == "stop":
            topo.stop(r[node])
        elif verb == "start":
            topo.start(r[node])
        else:
            topo.move_leader("t", 0, r[node])
    assert topo.leader("t", 0) == r[leader]
    assert topo.isr("t", 0) == [r[x] for x in isr]
    assert topo.offline("t", 0) == [r[x] for x in offline]
    assert topo.replicas("t", 0)[0] == r[leader]


def test_stop_moves_every_leadership_of_the_node_to_live_nodes():
    topo = three()
    led = [p for p in range(6) if topo.leader("t", p) == 2]
    topo.stop(2)
    assert all(topo.leader("t", p) != 2 for p in range(6))
    assert all(topo.leader(*tp) != 2 for tp in topo.coordinator_partitions())
    assert led and topo.live_nodes() == [1, 3]


def test_a_group_is_coordinated_by_its_offsets_partition_leader():
    topo = three()
    p = partition_for("g", 50)
    assert topo.coordinator_partition("g") == (OFFSETS_TOPIC, p)
    assert topo.coordinator("g") == topo.leader(OFFSETS_TOPIC, p)
    assert topo.coordinator_partition("tx", TRANSACTION_KEY) == (
        TRANSACTION_TOPIC, partition_for("tx", 50))
    assert Topology([1, 2], offsets_partitions=10, transaction_partitions=7).coordinator_partition(
        "tx", TRANSACTION_KEY) == (TRANSACTION_TOPIC, partition_for("tx", 7))


def test_a_moved_coordinator_loads_until_its_deadline():
    topo = three()
    target = next(n for n in topo.node_ids if n != topo.coordinator("g"))
    version = topo.version
    topo.move_coordinator("g", target, now_ms=1000, load_ms=500)
    assert topo.coordinator("g") == target
    assert topo.version > version
    assert topo.loading("g", 0, 1499)
    assert not topo.loading("g", 0, 1500)
    other = next(g for g in (f"o{i}" for i in range(200))
                 if topo.coordinator_partition(g) != topo.coordinator_partition("g"))
    assert not topo.loading(other, 0, 1000)


def test_a_stopped_nodes_coordinators_load_on_their_new_nodes():
    topo = three()
    group = next(g for g in (f"g{i}" for i in range(200)) if topo.coordinator(g) == 3)
    topo.stop(3, now_ms=10, load_ms=100)
    assert topo.coordinator(group) != 3
    assert topo.loading(group, 0, 50)
    moved_elsewhere = [g for g in (f"g{i}" for i in range(200)) if topo.coordinator(g) != 3]
    assert any(not topo.loading(g, 0, 50) for g in moved_elsewhere)


def test_shuffle_draws_leaders_from_live_nodes():
    topo = three()
    topo.stop(1)
    topo.shuffle([("t", p) for p in range(30)], random.Random(7))
    assert {topo.leader("t", p) for p in range(30)} == {2, 3}


@pytest.mark.parametrize(("act", "message"), [
    (lambda t: t.stop(9), "no node 9"),
    (lambda t: (t.stop(1), t.stop(2), t.stop(3)), "last live node"),
    (lambda t: (t.stop(2), t.move_leader("t", 0, 2)), "node 2 is stopped"),
])
def test_refused_moves(act, message):
    with pytest.raises(TopologyError, match=message):
        act(three())
