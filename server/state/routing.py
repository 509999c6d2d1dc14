"""Which broker answers for what, at which address: the one place multi-broker routing will live.

Addresses are those of the listener a request came through, as it advertises them:
a client that reached the broker from another container is sent to that
container network's address, a client on the host to the host's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Config
    from ..shell.listeners import Listener


def broker_nodes(config: Config, listener: Listener) -> list[tuple[int, str, int]]:
    """(node id, host, port) of every broker of the cluster, for Metadata and DescribeCluster."""
    return [(config.node_id, listener.host, listener.port)]


def coordinator_node(config: Config, listener: Listener, key: str,
                     key_type: int = 0) -> tuple[int, str, int]:
    """(node id, host, port) of the coordinator for a group (or transactional) key."""
    return config.node_id, listener.host, listener.port
