"""The nodes of a several-broker kcsim (`--brokers N`), as tests steer them: stop and start
a node, move a partition's leader or a group's coordinator, shuffle every leader.

Each is a move of the topology (`state/topology.py`) at the broker's time; stopping and
starting a node also close and bind its listeners (the shell's `stop_node`,
`start_node`). Clients see what they would see of Kafka: Metadata with new leaders,
NOT_LEADER_OR_FOLLOWER, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, disconnects.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from ..state.topology import GROUP_KEY, TRANSACTION_KEY, Topology

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..shell.server import Server
    from .handles import Runner


class NodeControl:
    """The nodes of one kcsim (`kcsim.nodes`); every call refuses a kcsim of one broker."""

    def __init__(self, run: Runner, server: Callable[[], Server]) -> None:
        self._call = run
        self._server = server

    def _topology(self) -> Topology:
        topology = self._server().state.topology
        if topology is None:
            raise ValueError("this kcsim plays one broker: start it with brokers=N (--brokers)")
        return topology

    def _moved(self, move: Callable[[Topology, int], None]) -> None:
        """Run a move at the broker's time; watchers hear of it."""
        def run() -> None:
            server = self._server()
            move(self._topology(), server.clock.now_ms())
            server.broker.changes.notify()
        self._call(run)

    def list(self) -> list[dict[str, Any]]:
        """Each node: its id, whether it is live, and its listeners' advertised addresses."""
        def read() -> list[dict[str, Any]]:
            topology = self._topology()
            return [{"node": node, "live": topology.is_live(node),
                     "listeners": {name: f"{a.host}:{a.port}"
                                   for (n, name), a in topology.endpoints.items() if n == node}}
                    for node in topology.node_ids]
        return self._call(read)

    def stop(self, node: int) -> None:
        """Stop the node: its listeners close, its connections drop, its leaderships and
        coordinators move to live nodes."""
        self._call(lambda: self._server().stop_node(node))

    def start(self, node: int) -> None:
        """Start the node again on the same ports; its preferred leaderships come back."""
        self._call(lambda: self._server().start_node(node))

    def leader(self, topic: str, partition: int) -> int:
        """The node that leads the partition now."""
        return self._call(lambda: self._topology().leader(topic, partition))

    def coordinator(self, key: str, *, transactional: bool = False) -> int:
        """The node that coordinates a group (or a transactional id) now."""
        key_type = TRANSACTION_KEY if transactional else GROUP_KEY
        return self._call(lambda: self._topology().coordinator(key, key_type))

    def move_leader(self, topic: str, partition: int, node: int) -> None:
        """Make a live node the partition's leader."""
        self._moved(lambda t, now: t.move_leader(topic, partition, node, now))

    def move_coordinator(self, key: str, node: int, *, load_ms: int = 0,
                         transactional: bool = False) -> None:
        """Move a group's (or transactional id's) coordinator to a live node, with every
        key of its internal partition; the new coordinator answers
        COORDINATOR_LOAD_IN_PROGRESS for `load_ms` of the broker's time while it loads."""
        if load_ms < 0:
            raise ValueError(f"load_ms: expected 0 or more, got {load_ms}")
        key_type = TRANSACTION_KEY if transactional else GROUP_KEY
        self._moved(lambda t, now: t.move_coordinator(key, node, key_type, now, load_ms))

    def shuffle(self, seed: int | None = None) -> None:
        """A new leader, drawn from the live nodes, for every partition of every topic and
        of the coordinators' internal topics."""
        def shuffle(topology: Topology, now: int) -> None:
            topics = self._server().state.topics.by_name.values()
            partitions = {(t.name, p.index) for t in topics for p in t.partitions}
            partitions.update(topology.coordinator_partitions())
            topology.shuffle(sorted(partitions), random.Random(seed), now)
        self._moved(shuffle)
