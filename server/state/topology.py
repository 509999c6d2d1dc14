"""Which node leads each partition and coordinates each key, when one kcsim plays several
brokers (`--brokers N`): pure bookkeeping over one shared log.

There is no replication: every node serves the same partitions from the same log, so
"leadership" decides only who answers. The placement is a rule, not a record:

- A partition's replicas are Kafka's rack-unaware placement without its random start:
  for partition p of a topic, `nodes[(start + p + i) % n]` for i < min(n, 3), where
  `start` is the topic name's Java hash (Kafka's `Utils.abs`) modulo n, so the same topic
  is placed the same way at every start. Its preferred leader is the first replica.
- The leader is the node a move named (`move_leader`, `shuffle`) while that node is live,
  else the first live replica, else the first live node after the preferred one.
- Stopping a node moves each of its leaderships to the next live replica and forgets the
  moves that named it; starting it again gives its preferred leaderships back at once
  (Kafka's automatic preferred leader election, without its five-minute wait).
- A group's coordinator is the leader of its `__consumer_offsets` partition, a
  transactional id's the leader of its `__transaction_state` partition, each partition
  picked as Kafka picks it. A coordinator partition whose leader changed answers
  COORDINATOR_LOAD_IN_PROGRESS until its `loading` deadline (the broker's clock).

Nothing of this is durable: a restart places every partition by the rule again, all
nodes live. Leader epochs stay 0 (the one log never diverges, so no client needs to
fence a former leader); clients follow the leaders through Metadata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.coordinator.kafka_format import partition_for

if TYPE_CHECKING:
    import random
    from collections.abc import Iterable, Sequence

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_TOPIC = "__transaction_state"
DEFAULT_TRANSACTION_PARTITIONS = 50  # transaction.state.log.num.partitions
MAX_REPLICATION = 3  # replication factor min(N, 3), as Kafka's internal topics default
GROUP_KEY, TRANSACTION_KEY = 0, 1  # FindCoordinator key types

TopicPartition = tuple[str, int]


class TopologyError(ValueError):
    """A move the topology cannot make (an unknown node, the last live node stopped)."""


class Topology:
    """The nodes of one kcsim, which are live, and who leads what (see the module doc).

    `version` grows with every change, so answers cached by state (Metadata) and tests
    waiting on a change see it. `endpoints` is what the shell binds: each node's
    advertised address by listener name, for the answers that name a node."""

    def __init__(self, node_ids: Sequence[int], *, offsets_partitions: int,
                 transaction_partitions: int = DEFAULT_TRANSACTION_PARTITIONS) -> None:
        if not node_ids:
            raise TopologyError("a cluster needs a node")
        self.node_ids = tuple(sorted(node_ids))
        self.live: dict[int, bool] = dict.fromkeys(self.node_ids, True)
        self.offsets_partitions = offsets_partitions
        self.transaction_partitions = transaction_partitions
        self.replication = min(len(self.node_ids), MAX_REPLICATION)
        self.version = 0
        self.endpoints: dict[tuple[int, str], Any] = {}  # (node, listener name) -> Listener
        self._moved: dict[TopicPartition, int] = {}
        self._loading: dict[TopicPartition, int] = {}  # coordinator partition -> until ms

    # -- reading --------------------------------------------------------------

    def live_nodes(self) -> list[int]:
        return [node for node in self.node_ids if self.live[node]]

    def is_live(self, node: int) -> bool:
        return self.live.get(node, False)

    def replicas(self, topic: str, partition: int) -> list[int]:
        """The partition's replicas, its leader first (a moved leader before the others)."""
        preferred = self._preferred(topic, partition)
        leader = self.leader(topic, partition)
        if leader == preferred[0]:
            return preferred
        return [leader, *[n for n in preferred if n != leader]][:self.replication]

    def isr(self, topic: str, partition: int) -> list[int]:
        """The live replicas, leader first: a stopped node drops out as Kafka fences it."""
        return [n for n in self.replicas(topic, partition) if self.live[n]]

    def offline(self, topic: str, partition: int) -> list[int]:
        return [n for n in self.replicas(topic, partition) if not self.live[n]]

    def leader(self, topic: str, partition: int) -> int:
        moved = self._moved.get((topic, partition))
        if moved is not None:
            return moved
        preferred = self._preferred(topic, partition)
        for node in preferred:
            if self.live[node]:
                return node
        ids = self.node_ids
        first = ids.index(preferred[0])
        return next(ids[(first + i) % len(ids)] for i in range(len(ids))
                    if self.live[ids[(first + i) % len(ids)]])

    def coordinator_partition(self, key: str, key_type: int = GROUP_KEY) -> TopicPartition:
        """The internal partition whose leader coordinates a group or transactional id."""
        if key_type == TRANSACTION_KEY:
            return TRANSACTION_TOPIC, partition_for(key, self.transaction_partitions)
        return OFFSETS_TOPIC, partition_for(key, self.offsets_partitions)

    def coordinator(self, key: str, key_type: int = GROUP_KEY) -> int:
        return self.leader(*self.coordinator_partition(key, key_type))

    def loading(self, key: str, key_type: int, now_ms: int) -> bool:
        """Whether the key's coordinator is still loading its partition at `now_ms`."""
        if not self._loading:
            return False
        until = self._loading.get(self.coordinator_partition(key, key_type))
        return until is not None and now_ms < until

    def coordinator_partitions(self) -> list[TopicPartition]:
        return ([(OFFSETS_TOPIC, p) for p in range(self.offsets_partitions)]
                + [(TRANSACTION_TOPIC, p) for p in range(self.transaction_partitions)])

    # -- moves ------------------------------------------------------------------

    def stop(self, node: int, now_ms: int = 0, load_ms: int = 0) -> None:
        """The node goes down: its leaderships move to live nodes (coordinators load)."""
        self._known(node)
        if not self.live[node]:
            return
        if sum(self.live.values()) == 1:
            raise TopologyError(f"node {node} is the last live node")
        before = self._coordinator_leaders()
        self.live[node] = False
        self._moved = {tp: n for tp, n in self._moved.items() if n != node}
        self._changed(before, now_ms, load_ms)

    def start(self, node: int, now_ms: int = 0, load_ms: int = 0) -> None:
        """The node is back: its preferred leaderships return to it."""
        self._known(node)
        if self.live[node]:
            return
        before = self._coordinator_leaders()
        self.live[node] = True
        self._changed(before, now_ms, load_ms)

    def move_leader(self, topic: str, partition: int, node: int, now_ms: int = 0,
                    load_ms: int = 0) -> None:
        """Make a live node the partition's leader (for a coordinator partition, the new
        coordinator loads it for `load_ms`)."""
        self._known(node)
        if not self.live[node]:
            raise TopologyError(f"node {node} is stopped")
        if self.leader(topic, partition) == node:
            return
        before = self._coordinator_leaders()
        self._moved[(topic, partition)] = node
        self._changed(before, now_ms, load_ms)

    def move_coordinator(self, key: str, node: int, key_type: int = GROUP_KEY,
                         now_ms: int = 0, load_ms: int = 0) -> None:
        """Move the leadership of the key's coordinator partition (every key on it moves)."""
        self.move_leader(*self.coordinator_partition(key, key_type), node, now_ms, load_ms)

    def shuffle(self, partitions: Iterable[TopicPartition], rng: random.Random,
                now_ms: int = 0, load_ms: int = 0) -> None:
        """A new leader for each partition, drawn from the live nodes."""
        before = self._coordinator_leaders()
        live = self.live_nodes()
        for tp in partitions:
            self._moved[tp] = rng.choice(live)
        self._changed(before, now_ms, load_ms)

    # -- inside ---------------------------------------------------------------------

    def _preferred(self, topic: str, partition: int) -> list[int]:
        ids = self.node_ids
        n = len(ids)
        start = partition_for(topic, n)  # Utils.abs(hashCode) % n, as for a group
        return [ids[(start + partition + i) % n] for i in range(self.replication)]

    def _known(self, node: int) -> None:
        if node not in self.live:
            raise TopologyError(f"no node {node} (nodes: {', '.join(map(str, self.node_ids))})")

    def _coordinator_leaders(self) -> list[int]:
        return [self.leader(*tp) for tp in self.coordinator_partitions()]

    def _changed(self, before: list[int], now_ms: int, load_ms: int) -> None:
        """Count the change; coordinator partitions with a new leader load until then."""
        self.version += 1
        self._loading = {tp: until for tp, until in self._loading.items() if until > now_ms}
        if load_ms <= 0:
            return
        for tp, old in zip(self.coordinator_partitions(), before, strict=True):
            if self.leader(*tp) != old:
                self._loading[tp] = now_ms + load_ms
