"""A real confluent-kafka workload against `kcsim serve`, and what it did, for the readers.

Produced: PER_CODEC records to each partition with every compression codec
(with headers and keys). A classic consumer group: one member consumes and
commits, a second joins (a rebalance), the first leaves (another), the second
commits the rest and leaves; then an admin tool resets one partition to an
earlier offset while the group is empty (a rewind and an admin reset).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

TOPIC = "orders"
GROUP = "billing"
PARTITIONS = 3
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
PER_CODEC = 4  # records per partition per codec
QUIET = {"log_level": 0}


@dataclass
class Workload:
    produced: dict[tuple[int, int], tuple[bytes, bytes, list[tuple[str, bytes]]]] = field(
        default_factory=dict)  # (partition, offset) -> key, value, headers
    commits: list[tuple[int, int]] = field(default_factory=list)  # (partition, offset), in order
    member_ids: list[str] = field(default_factory=list)
    reset: tuple[int, int] = (0, 0)  # (partition, offset) the admin tool set
    committed: dict[int, int] = field(default_factory=dict)  # final, as OffsetFetch answers

    def log_end(self, partition: int) -> int:
        return 1 + max(o for p, o in self.produced if p == partition)


def run(bootstrap: str) -> Workload:
    work = Workload()
    admin = AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    for f in admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)]).values():
        f.result(30)
    _produce(bootstrap, work)
    first = _consumer(bootstrap, "first")
    first.subscribe([TOPIC])
    _wait_assigned([first], PARTITIONS)
    work.member_ids.append(first.memberid())
    _commit(first, work, dict.fromkeys(range(PARTITIONS), 2))
    _commit(first, work, dict.fromkeys(range(PARTITIONS), 5))
    second = _consumer(bootstrap, "second")
    second.subscribe([TOPIC])
    _wait_assigned([first, second], PARTITIONS)
    work.member_ids.append(second.memberid())
    for consumer in (first, second):
        _commit(consumer, work, {tp.partition: 9 for tp in consumer.assignment()})
    first.close()
    _wait_assigned([second], PARTITIONS)
    _commit(second, work, {p: work.log_end(p) for p in range(PARTITIONS)})
    second.close()
    work.reset = (1, 3)
    _reset(admin, work)
    reader = _consumer(bootstrap, "reader")
    found = reader.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=30)
    work.committed = {tp.partition: tp.offset for tp in found}
    reader.close()
    return work


def _produce(bootstrap: str, work: Workload) -> None:
    for codec in CODECS:
        producer = Producer({"bootstrap.servers": bootstrap, "compression.type": codec,
                             "linger.ms": 20, "batch.num.messages": 100, **QUIET})
        delivered: list[Any] = []
        sent: dict[tuple[bytes, bytes], list[tuple[str, bytes]]] = {}

        def done(err: Any, msg: Any, delivered: list[Any] = delivered) -> None:
            delivered.append((err, msg))

        for p in range(PARTITIONS):
            for i in range(PER_CODEC):
                key, value = f"k{p}-{i}".encode(), f"{codec}:{p}:{i}".encode() * 8
                headers = sent[(key, value)] = [("codec", codec.encode()), ("n", str(i).encode())]
                producer.produce(TOPIC, key=key, value=value, partition=p, headers=headers,
                                 on_delivery=done)
        producer.flush(30)
        for err, msg in delivered:  # delivery reports carry no headers: those we sent
            assert err is None, err
            key, value = msg.key(), msg.value()
            work.produced[(msg.partition(), msg.offset())] = (key, value, sent[(key, value)])


def _consumer(bootstrap: str, name: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "client.id": name,
                     "enable.auto.commit": False, "auto.offset.reset": "earliest",
                     "session.timeout.ms": 6000, "heartbeat.interval.ms": 200, **QUIET})


def _wait_assigned(consumers: list[Consumer], partitions: int, timeout_s: float = 60) -> None:
    """Poll every member until the group's assignment covers all partitions, each once."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for c in consumers:
            c.poll(0.05)
        owned = [tp.partition for c in consumers for tp in c.assignment()]
        if sorted(owned) == list(range(partitions)) and all(c.assignment() for c in consumers):
            for c in consumers:  # settle: let the last SyncGroup answers land
                c.poll(0.2)
            return
    raise AssertionError(f"group did not settle: {[c.assignment() for c in consumers]}")


def _commit(consumer: Consumer, work: Workload, offsets: dict[int, int]) -> None:
    tps = [TopicPartition(TOPIC, p, o) for p, o in sorted(offsets.items())]
    consumer.commit(offsets=tps, asynchronous=False)
    work.commits += sorted(offsets.items())


def _reset(admin: AdminClient, work: Workload) -> None:
    from confluent_kafka import ConsumerGroupTopicPartitions

    partition, offset = work.reset
    request = ConsumerGroupTopicPartitions(GROUP, [TopicPartition(TOPIC, partition, offset)])
    deadline = time.monotonic() + 30
    while True:  # the group may still be settling its last member's leave
        try:
            for f in admin.alter_consumer_group_offsets([request]).values():
                f.result(30)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    work.commits.append(work.reset)
