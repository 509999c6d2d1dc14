"""Reproduce kafka-python's stall after a metadata-triggered rejoin, against any broker.

    python -m tests.oracle.kafka_python_stall 127.0.0.1:9092 12 [debug.log]

Each of N consumers (started 0.3 s apart, each in its own group) creates a topic with
CreateTopics, subscribes to it and polls (50 ms timeouts) until it has an assignment,
for at most 45 s. kafka-python joins before its first metadata for the subscription,
rejoins when the metadata arrives, and now and then loses the result of that rejoin:
the leader gets its SyncGroup answer and then sends no heartbeat and no OffsetFetch.
It happens against Apache Kafka as against kcsim (docs/kafka-differences.md).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import uuid

WAIT_S = 45.0


def time_to_assignment(bootstrap: str, name: str) -> float | None:
    from kafka import KafkaConsumer
    from kafka.admin import KafkaAdminClient, NewTopic

    topic, group = f"stall-{uuid.uuid4().hex[:8]}", f"stall-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id=f"{name}-admin")
    admin.create_topics([NewTopic(topic, 3, 1)])
    admin.close()
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, client_id=name,
        auto_offset_reset="earliest", enable_auto_commit=False, session_timeout_ms=6000,
        heartbeat_interval_ms=200, max_poll_interval_ms=30000, fetch_max_wait_ms=100,
        reconnect_backoff_max_ms=1000)
    consumer.subscribe([topic])
    start = time.monotonic()
    try:
        while time.monotonic() - start < WAIT_S:
            consumer.poll(timeout_ms=50)
            if consumer.assignment():
                return time.monotonic() - start
        logging.getLogger("stall").warning("%s stalled: group %s topic %s", name, group, topic)
        return None
    finally:
        consumer.close(timeout_ms=2000)


def main(argv: list[str]) -> None:
    bootstrap, count = argv[0], int(argv[1])
    if len(argv) > 2:
        logging.basicConfig(filename=argv[2], level=logging.DEBUG,
                            format="%(relativeCreated)8d %(threadName)s %(name)s %(message)s")
    results: dict[int, float | None] = {}

    def one(i: int) -> None:
        results[i] = time_to_assignment(bootstrap, f"stall-{i}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
        time.sleep(0.3)
    for thread in threads:
        thread.join()
    times = [results.get(i) for i in range(count)]
    print("seconds to assignment:", [None if t is None else round(t, 2) for t in times])
    print(f"stalled (no assignment within {WAIT_S:.0f} s): "
          f"{sum(t is None for t in times)} of {count}")


if __name__ == "__main__":
    main(sys.argv[1:])
