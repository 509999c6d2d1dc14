"""What the transaction tests read with a Python client: a topic as a read_committed
consumer sees it, and a partition's offsets as ListOffsets answers them."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, IsolationLevel, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec


def read_values(bootstrap: str, topic: str, *, committed_only: bool = True,
                timeout_s: float = 30) -> list[str]:
    """Every value of partition 0, from the start up to its end (the last stable offset
    for read_committed)."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"reader-{time.monotonic_ns()}",
        "isolation.level": "read_committed" if committed_only else "read_uncommitted",
        "enable.partition.eof": True, "enable.auto.commit": False,
    })
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        values: list[str] = []
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    return values
                raise AssertionError(f"consumer error: {error}")
            values.append(message.value().decode())
        raise AssertionError(f"{topic} was not read to its end in {timeout_s} s: {values}")
    finally:
        consumer.close()


def latest_offsets(bootstrap: str, topic: str) -> tuple[int, int]:
    """(read_committed latest, read_uncommitted latest) of partition 0: the last stable
    offset and the log end offset."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0)
    out = []
    for isolation in (IsolationLevel.READ_COMMITTED, IsolationLevel.READ_UNCOMMITTED):
        futures = admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=isolation,
                                     request_timeout=10)
        out.append(futures[tp].result(10).offset)
    return out[0], out[1]
