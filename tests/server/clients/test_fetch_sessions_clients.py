"""Real consumers against fetch sessions (KIP-227): they read everything, the Java
consumer through incremental fetches in a session kcsim opened.

The request log shows what each Fetch named: a session id and a positive epoch is an
incremental fetch, served in a session the broker handed out; epoch -1 a fetch without
one (librdkafka 2.x still fetches so: it has no KIP-227 client side).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from . import javaclient

pytestmark = pytest.mark.timeout(180)

PARTITIONS = 3
MESSAGES = 600


def served_fetches(kcsim: Any) -> tuple[list[Any], list[Any]]:
    """(incremental fetches answered without a session error, every Fetch answered)."""
    fetches = kcsim.requests("Fetch")
    incremental = [r for r in fetches if r.session_id and r.session_epoch > 0
                   and not {"FETCH_SESSION_ID_NOT_FOUND", "INVALID_FETCH_SESSION_EPOCH",
                            "FETCH_SESSION_TOPIC_ID_ERROR"} & set(r.errors)]
    return incremental, fetches


def test_confluent_kafka_reads_everything(kcsim: Any, unique_name: Any) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = unique_name("ck")
    admin = AdminClient({"bootstrap.servers": kcsim.bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(10)
    producer = Producer({"bootstrap.servers": kcsim.bootstrap})
    consumer = Consumer({"bootstrap.servers": kcsim.bootstrap, "group.id": unique_name("g"),
                         "enable.auto.commit": False, "fetch.wait.max.ms": 50})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen: set[bytes] = set()
    try:
        for round_ in range(3):  # new data while the consumer is caught up, three times
            for i in range(MESSAGES // 3):
                producer.produce(topic, value=b"%d-%d" % (round_, i), partition=i % PARTITIONS)
            assert producer.flush(10) == 0
            deadline = time.monotonic() + 20
            while len(seen) < (round_ + 1) * MESSAGES // 3 and time.monotonic() < deadline:
                message = consumer.poll(0.2)
                if message is not None and message.error() is None:
                    seen.add(message.value())
    finally:
        consumer.close()
    assert len(seen) == MESSAGES
    _, fetches = served_fetches(kcsim)
    assert fetches and not any(r.errors for r in fetches)


@pytest.mark.java
def test_java_consumer_fetches_incrementally_and_reads_everything(
        kcsim: Any, unique_name: Any, java_version: str) -> None:
    javaclient.skip_without_java()
    topic = unique_name("java")
    proc = javaclient.run("BrokerSmoke", kcsim.bootstrap, topic, str(MESSAGES), str(PARTITIONS),
                          "none", "false", timeout=120, version=java_version)
    steps = {s["step"]: s for s in map(json.loads, (
        line for line in proc.stdout.splitlines() if line.startswith("{")))}
    failed = [s for s in steps.values() if "error" in s]
    assert not failed and proc.returncode == 0, f"{proc.stdout}\n{proc.stderr[-4000:]}"
    consumed = steps["consume"]
    assert (consumed["records"], consumed["duplicates"]) == (MESSAGES, 0)
    assert consumed["partitions_with_offset_gaps"] == 0
    incremental, fetches = served_fetches(kcsim)
    assert incremental, [(r.session_id, r.session_epoch, r.errors) for r in fetches]
    opened = {r.session_id for r in incremental}
    assert all(r.version >= 7 for r in incremental) and 0 not in opened
