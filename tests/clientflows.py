"""One short flow per real Python client: where the broker said it is, and a group round trip.

Each flow asks the cluster for its brokers (the addresses a client is told to
connect to), produces a few messages to a fresh topic, then reads them back
through a consumer group (FindCoordinator, JoinGroup, SyncGroup, a commit): a
client handed an address it cannot reach fails here. Each returns a `Seen`.

The module imports nothing but the standard library and the client under use,
so the container tests can run it inside a container too.
"""

from __future__ import annotations

import asyncio
import time
from typing import NamedTuple

MESSAGES = 5
TIMEOUT_S = 30.0


class Seen(NamedTuple):
    brokers: list[tuple[str, int]]  # as the cluster described itself to the client
    values: list[bytes]  # read back through the group, in order
    committed: int  # the group's committed offset afterwards

    def as_json(self) -> dict[str, object]:
        return {"brokers": [list(b) for b in self.brokers],
                "values": [v.decode() for v in self.values], "committed": self.committed}


def payloads(topic: str) -> list[bytes]:
    return [f"{topic}-{i}".encode() for i in range(MESSAGES)]


def confluent_flow(bootstrap: str, topic: str, group: str,
                   settings: dict[str, str] | None = None) -> Seen:
    """`settings`: more client settings (a secured listener's)."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient

    common = {"bootstrap.servers": bootstrap, **(settings or {})}
    metadata = AdminClient(common).list_topics(timeout=TIMEOUT_S)
    brokers = [(b.host, b.port) for b in metadata.brokers.values()]
    producer = Producer({**common, "linger.ms": 0})
    for value in payloads(topic):
        producer.produce(topic, value)
    assert producer.flush(TIMEOUT_S) == 0, "messages left unsent"
    consumer = Consumer({**common, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        values: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(values) < MESSAGES and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value())
        consumer.commit(asynchronous=False)
        [committed] = consumer.committed([TopicPartition(topic, 0)], timeout=TIMEOUT_S)
    finally:
        consumer.close()
    return Seen(brokers, values, committed.offset)


def kafka_python_flow(bootstrap: str, topic: str, group: str) -> Seen:
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

    common = {"bootstrap_servers": bootstrap, "request_timeout_ms": 10000}
    admin = KafkaAdminClient(**common)
    try:
        brokers = [(b["host"], b["port"]) for b in admin.describe_cluster()["brokers"]]
    finally:
        admin.close()
    producer = KafkaProducer(**common, max_block_ms=int(TIMEOUT_S * 1000))
    try:
        for value in payloads(topic):
            producer.send(topic, value)
        producer.flush(TIMEOUT_S)
    finally:
        producer.close()
    consumer = KafkaConsumer(topic, **common, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False)
    try:
        values: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(values) < MESSAGES and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                values += [r.value for r in records]
        consumer.commit()
        committed = consumer.committed(TopicPartition(topic, 0))
    finally:
        consumer.close()
    return Seen(brokers, values, committed if committed is not None else -1)


def aiokafka_flow(bootstrap: str, topic: str, group: str) -> Seen:
    return asyncio.run(asyncio.wait_for(_aiokafka_flow(bootstrap, topic, group), TIMEOUT_S * 2))


async def _aiokafka_flow(bootstrap: str, topic: str, group: str) -> Seen:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        cluster = await admin.describe_cluster()
        brokers = [(b["host"], b["port"]) for b in cluster["brokers"]]
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for value in payloads(topic):
            await producer.send_and_wait(topic, value)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    try:
        values: list[bytes] = []
        while len(values) < MESSAGES:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                values += [r.value for r in records]
        await consumer.commit()
        committed = await consumer.committed(TopicPartition(topic, 0))
    finally:
        await consumer.stop()
    return Seen(brokers, values, committed if committed is not None else -1)


FLOWS = {"confluent-kafka": confluent_flow, "kafka-python": kafka_python_flow,
         "aiokafka": aiokafka_flow}
