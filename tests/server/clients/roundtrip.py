"""Produce, consume in a group and commit with confluent-kafka: what every secured-listener
test of a client does, with the settings of its security protocol."""

from __future__ import annotations

from confluent_kafka import Consumer, Producer, TopicPartition

MESSAGES = 20


def confluent_round_trip(settings: dict[str, str], topic: str, group: str) -> int:
    """Produce MESSAGES, consume them in `group`, commit; the committed offset."""
    producer = Producer(settings)
    for i in range(MESSAGES):
        producer.produce(topic, f"v{i}".encode())
    assert producer.flush(30) == 0
    consumer = Consumer({**settings, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        seen = 0
        for _ in range(200):
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                seen += 1
                if seen == MESSAGES:
                    break
        assert seen == MESSAGES
        consumer.commit(asynchronous=False)
        (committed,) = consumer.committed([TopicPartition(topic, 0)], timeout=10)
        return int(committed.offset)
    finally:
        consumer.close()
