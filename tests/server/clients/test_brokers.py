"""Real clients against a kcsim playing three brokers: leaders spread over the nodes, a
coordinator apart from the leaders, a leader's node stopping, a coordinator moving.

Every wait is on state (what the clients consumed, the group as the coordinator holds
it, the committed offsets), never a sleep.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kcsim.coordinator.kafka_format import partition_for

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from kcsim import EmbeddedServer

pytestmark = [pytest.mark.timeout(120), pytest.mark.kcsim(brokers=3)]

NODES = {1, 2, 3}
QUIET = {"log_level": 3}  # librdkafka says only errors: disconnects are what we stage


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result(timeout=10)


def leaders_seen(bootstrap: str, topic: str) -> dict[int, int]:
    """Each partition's leader, as confluent-kafka's Metadata shows it."""
    meta = AdminClient({"bootstrap.servers": bootstrap, **QUIET}).list_topics(topic, timeout=10)
    return {p: m.leader for p, m in meta.topics[topic].partitions.items()}


def wait_until(check: Callable[[], bool], what: str, timeout: float = 30.0,
               explain: Callable[[], Any] = lambda: None) -> None:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}: {explain()}")
        time.sleep(0.02)


def produce(bootstrap: str, topic: str, values: range, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, **QUIET})
    for i in values:
        producer.produce(topic, value=str(i).encode(), partition=i % partitions)
        producer.poll(0)
    assert producer.flush(30) == 0


class Members:
    """Consumers of one group, each polling in its own thread until closed."""

    def __init__(self, bootstrap: str, group: str, topic: str, count: int) -> None:
        self.seen: list[int] = []
        self.by_member: dict[int, set[int]] = {}  # partitions each member consumed from
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i, bootstrap, group, topic),
                                          daemon=True) for i in range(count)]
        for thread in self._threads:
            thread.start()

    def _run(self, member: int, bootstrap: str, group: str, topic: str) -> None:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                             "auto.offset.reset": "earliest", "auto.commit.interval.ms": 100,
                             "session.timeout.ms": 10000, **QUIET})
        consumer.subscribe([topic])
        try:
            while not self._stop.is_set():
                message = consumer.poll(0.1)
                if message is not None and message.error() is None:
                    with self._lock:
                        self.seen.append(int(message.value()))
                        self.by_member.setdefault(member, set()).add(message.partition())
        finally:
            # What was consumed, committed by name: librdkafka may resend an older commit
            # after a newer one when it re-finds a coordinator, and at close it skips the
            # offsets it believes committed.
            positions = [tp for tp in consumer.position(consumer.assignment()) if tp.offset >= 0]
            if positions:
                consumer.commit(offsets=positions, asynchronous=False)
            consumer.close()

    def consuming(self) -> int:
        """How many members consumed a message since `settle` was called."""
        with self._lock:
            return len(self.by_member)

    def settle(self) -> None:
        with self._lock:
            self.by_member.clear()

    def distinct(self) -> set[int]:
        with self._lock:
            return set(self.seen)

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)


@pytest.fixture
def members() -> Iterator[Callable[..., Members]]:
    opened: list[Members] = []

    def start(*args: Any) -> Members:
        opened.append(Members(*args))
        return opened[-1]

    yield start
    for group in opened:
        group.close()


def test_a_topic_has_leaders_on_every_node(kcsim: EmbeddedServer) -> None:
    from kafka import KafkaAdminClient, KafkaConsumer

    create_topic(kcsim.bootstrap, "spread", 6)
    seen = leaders_seen(kcsim.bootstrap, "spread")
    assert set(seen.values()) == NODES
    assert seen == {p: kcsim.nodes.leader("spread", p) for p in range(6)}
    consumer = KafkaConsumer(bootstrap_servers=kcsim.bootstrap)
    try:
        assert {b.node_id for b in consumer._client.cluster.brokers()} == NODES
        consumer.topics()  # a full Metadata request
        cluster = consumer._client.cluster
        assert {p: cluster.leader_for_partition(TopicPartitionKP("spread", p))
                for p in range(6)} == seen
    finally:
        consumer.close()
    admin = KafkaAdminClient(bootstrap_servers=kcsim.bootstrap)
    try:
        described = admin.describe_cluster()
        assert {b["broker_id"] for b in described["brokers"]} == NODES, described
    finally:
        admin.close()


def TopicPartitionKP(topic: str, partition: int) -> Any:
    from kafka.structs import TopicPartition as KP
    return KP(topic, partition)


def group_coordinated_by(kcsim: EmbeddedServer, node: int) -> str:
    return next(g for g in (f"group-{i}" for i in range(1000))
                if kcsim.nodes.coordinator(g) == node)


def test_a_group_commits_through_a_coordinator_leading_none_of_its_partitions(
        kcsim: EmbeddedServer, members: Callable[..., Members]) -> None:
    create_topic(kcsim.bootstrap, "apart", 2)
    leaders = set(leaders_seen(kcsim.bootstrap, "apart").values())
    (apart,) = NODES - leaders
    group = group_coordinated_by(kcsim, apart)
    produce(kcsim.bootstrap, "apart", range(100), 2)
    consumers = members(kcsim.bootstrap, group, "apart", 1)
    wait_until(lambda: len(consumers.distinct()) == 100, "every message consumed")
    consumers.close()
    assert kcsim.committed(group) == {("apart", 0): 50, ("apart", 1): 50}
    commits = kcsim.requests("OffsetCommit", group=group)
    assert commits and not any(r.errors for r in commits)
    assert kcsim.nodes.coordinator(group) == apart


def test_kafka_python_commits_through_a_coordinator_apart(kcsim: EmbeddedServer) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    create_topic(kcsim.bootstrap, "apart-kp", 2)
    (apart,) = NODES - set(leaders_seen(kcsim.bootstrap, "apart-kp").values())
    group = group_coordinated_by(kcsim, apart)
    producer = KafkaProducer(bootstrap_servers=kcsim.bootstrap)
    for i in range(40):
        producer.send("apart-kp", str(i).encode(), partition=i % 2)
    producer.flush(10)
    producer.close()
    consumer = KafkaConsumer("apart-kp", bootstrap_servers=kcsim.bootstrap, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        seen: set[int] = set()
        end = time.monotonic() + 30
        while len(seen) < 40 and time.monotonic() < end:
            for records in consumer.poll(200).values():
                seen.update(int(r.value) for r in records)
        assert seen == set(range(40))
        consumer.commit()
        assert str(consumer._coordinator.coordinator_id).endswith(str(apart))
    finally:
        consumer.close()
    assert kcsim.committed(group) == {("apart-kp", 0): 20, ("apart-kp", 1): 20}


def test_clients_follow_the_leaders_of_a_stopped_node(
        kcsim: EmbeddedServer, members: Callable[..., Members]) -> None:
    create_topic(kcsim.bootstrap, "failover", 6)
    leaders = leaders_seen(kcsim.bootstrap, "failover")
    victim = 2
    assert sorted(p for p, n in leaders.items() if n == victim) and victim in leaders.values()
    group = group_coordinated_by(kcsim, 1)
    produce(kcsim.bootstrap_servers, "failover", range(300), 6)
    consumers = members(kcsim.bootstrap_servers, group, "failover", 2)
    wait_until(lambda: len(consumers.distinct()) == 300, "the first messages consumed")
    kcsim.nodes.stop(victim)
    after = leaders_seen(kcsim.bootstrap, "failover")
    assert victim not in after.values()
    assert {p: n for p, n in after.items() if leaders[p] != victim} == {
        p: n for p, n in leaders.items() if n != victim}
    produce(kcsim.bootstrap_servers, "failover", range(300, 600), 6)
    wait_until(lambda: consumers.distinct() == set(range(600)), "every message consumed")
    consumers.close()
    assert kcsim.committed(group) == {("failover", p): 100 for p in range(6)}


def test_kafka_python_producer_follows_a_stopped_leader(kcsim: EmbeddedServer) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    create_topic(kcsim.bootstrap, "failover-kp", 6)
    producer = KafkaProducer(bootstrap_servers=kcsim.bootstrap_servers, retries=10,
                             retry_backoff_ms=50)
    for i in range(60):
        producer.send("failover-kp", str(i).encode(), partition=i % 6)
    producer.flush(10)
    kcsim.nodes.stop(3)
    futures = [producer.send("failover-kp", str(i).encode(), partition=i % 6)
               for i in range(60, 120)]
    producer.flush(30)
    assert all(f.get(timeout=10).partition == i % 6 for i, f in enumerate(futures, 60))
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=kcsim.bootstrap_servers,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        consumer.assign([TopicPartitionKP("failover-kp", p) for p in range(6)])
        seen: set[int] = set()
        end = time.monotonic() + 30
        while len(seen) < 120 and time.monotonic() < end:
            for records in consumer.poll(200).values():
                seen.update(int(r.value) for r in records)
        assert seen == set(range(120))
    finally:
        consumer.close()


def test_members_refind_a_moved_coordinator(
        kcsim: EmbeddedServer, members: Callable[..., Members]) -> None:
    create_topic(kcsim.bootstrap, "moving", 6)
    group = group_coordinated_by(kcsim, 1)
    produce(kcsim.bootstrap, "moving", range(300), 6)
    consumers = members(kcsim.bootstrap, group, "moving", 3)
    kcsim.wait_for_group(group, "Stable", members=3, timeout=30)
    wait_until(lambda: len(consumers.distinct()) == 300, "the first messages consumed")
    # Every member consumes its partitions: the assignment is settled before the move.
    consumers.settle()
    produce(kcsim.bootstrap, "moving", range(300, 360), 6)
    wait_until(lambda: consumers.consuming() == 3, "each member consuming")
    before = kcsim.group(group)
    assert before is not None
    since = kcsim.last_request_seq()
    kcsim.nodes.move_coordinator(group, 3, load_ms=300)
    assert kcsim.nodes.coordinator(group) == 3
    offsets_partition = partition_for(group, 50)
    assert leaders_seen(kcsim.bootstrap, "__consumer_offsets")[offsets_partition] == 3
    produce(kcsim.bootstrap, "moving", range(360, 600), 6)
    kcsim.wait_for_request(group=group, error="NOT_COORDINATOR", since=since,
                           timeout=30)
    wait_until(lambda: consumers.distinct() == set(range(600)), "every message consumed",
               explain=lambda: (kcsim.group(group), sorted(set(range(600)) - consumers.distinct()),
                                [(r.api, r.errors) for r in kcsim.requests(since=since)
                                 if r.api not in ("Fetch", "ApiVersions")]))
    after = kcsim.wait_for_group(group, "Stable", members=3, timeout=30)
    assert after is not None and after.generation >= before.generation
    consumers.close()
    assert kcsim.committed(group) == {("moving", p): 100 for p in range(6)}
    # Nothing consumed twice but what had not been committed yet: every message once
    # at least, and at most the few between the last commit and the move again.
    assert set(consumers.seen) == set(range(600))
