"""Which broker answers for what, at which address: the one place multi-broker routing lives.

Addresses are those of the listener a request came through, as it advertises them:
a client that reached the broker from another container is sent to that
container network's address, a client on the host to the host's. When this kcsim plays
several brokers (`--brokers N`), each node has its own address on each listener, and
the state's topology (`topology.py`) says which node leads a partition or coordinates
a key; with one broker, every answer names it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..listeners import Listener
    from .broker_state import BrokerState
    from .topology import Topology

Node = tuple[int, str, int]  # node id, host, port


def broker_nodes(state: BrokerState, listener: Listener) -> list[Node]:
    """(node id, host, port) of every live broker, for Metadata and DescribeCluster."""
    topology = state.topology
    if topology is None:
        return [(state.config.node_id, listener.host, listener.port)]
    return [node_address(topology, node, listener) for node in topology.live_nodes()]


def coordinator_node(state: BrokerState, listener: Listener, key: str,
                     key_type: int = 0) -> Node:
    """(node id, host, port) of the coordinator for a group (or transactional) key."""
    topology = state.topology
    if topology is None:
        return state.config.node_id, listener.host, listener.port
    return node_address(topology, topology.coordinator(key, key_type), listener)


def controller_id(state: BrokerState) -> int:
    """The node Metadata and DescribeCluster name as the controller: the first live one."""
    topology = state.topology
    return state.config.node_id if topology is None else topology.live_nodes()[0]


def node_address(topology: Topology, node: int, listener: Listener) -> Node:
    """A node's address on the listener the client came through."""
    address = topology.endpoints.get((node, listener.name), listener)
    return node, address.host, address.port
