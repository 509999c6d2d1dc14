"""A real three-node Apache Kafka cluster for the multi-broker oracle: three KRaft nodes,
each a broker and a voter of one controller quorum (a static one: every node is told the
three voters), on loopback, sharing one cluster id.

The nodes are launched together (no node is ready before a quorum is up), then each is
waited on until its Metadata lists all three brokers and it finds a group coordinator
(which needs `__consumer_offsets` replicated three times). `__consumer_offsets` gets
three partitions and `__transaction_state` kcsim's 50, each with three replicas, so the
groups and transactional ids of a test spread over the nodes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .kafka import START_TIMEOUT_S, KafkaBroker, cluster_id, free_port

if TYPE_CHECKING:
    from collections.abc import Mapping

NODES = 3
# Internal topics as a small production cluster has them (kcsim: min(N, 3) replicas).
CLUSTER_SETTINGS: dict[str, str] = {
    "offsets.topic.num.partitions": "3",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.num.partitions": "50",  # as kcsim (fixed there)
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "default.replication.factor": "3",
}


class KafkaNode(KafkaBroker):
    """One node of a KafkaCluster: node id `node_id`, voter of `voters`."""

    expected_brokers = NODES

    def __init__(self, base: Path, node_id: int, voters: Mapping[int, int], cluster: str,
                 settings: Mapping[str, str]) -> None:
        super().__init__(base, settings=settings)
        self.node_id = node_id
        self.voters = dict(voters)  # node id -> controller port
        self.controller_port = self.voters[node_id]
        self.cluster = cluster

    def _format_args(self) -> tuple[str, ...]:
        return ()  # the static quorum is in the properties

    def _properties(self) -> str:
        quorum = ",".join(f"{n}@{self.host}:{port}" for n, port in sorted(self.voters.items()))
        lines = [line for line in super()._properties().splitlines()
                 if not line.startswith(("node.id=", "controller.quorum.bootstrap.servers="))]
        return "".join(f"{line}\n" for line in [
            f"node.id={self.node_id}", f"controller.quorum.voters={quorum}", *lines])


class KafkaCluster:
    """Three KafkaNodes under `base`; `bootstrap` is node 1's address."""

    def __init__(self, base: Path, settings: Mapping[str, str] | None = None) -> None:
        voters = {n: free_port() for n in range(1, NODES + 1)}
        cluster = cluster_id()
        merged = {**CLUSTER_SETTINGS, **(settings or {})}
        self.nodes = [KafkaNode(Path(base) / f"node{n}", n, voters, cluster, merged)
                      for n in range(1, NODES + 1)]

    @property
    def bootstrap(self) -> str:
        return self.nodes[0].bootstrap

    @property
    def version(self) -> str:
        return self.nodes[0].version

    def start(self) -> KafkaCluster:
        try:
            for node in self.nodes:
                node.launch()
            deadline = time.monotonic() + 2 * START_TIMEOUT_S
            for node in self.nodes:
                node._wait_ready(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
