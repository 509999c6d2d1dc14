"""A scenario that leaves every kind of record in `__consumer_offsets`, and Kafka's own
reader of that topic (`OffsetsTopicReader.java` on kafka-group-coordinator)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as CkPartition
from confluent_kafka.admin import AdminClient as KafkaAdmin
from confluent_kafka.admin import NewTopic

from kcsim.admin import AdminClient, TopicPartition
from kcsim.coordinator.kafka_format import PAUSED_RECORD_TYPE
from tests.oracle.kafka import CACHE, KafkaUnavailable, maven_jars

from . import javaclient
from .ck_members import QUIET, wait_for

SOURCES = Path(__file__).resolve().parent / "java_coordinator"
COORDINATOR_VERSION = "4.4.0"
WEEK_MS = 7 * 24 * 3600 * 1000


@dataclass
class Scenario:
    topic: str
    classic: str  # a classic group: joined, committed, left; one offset deleted
    consumer: str  # a KIP-848 group: joined, committed, left; two partitions paused
    deleted: str  # offsets committed, then the group deleted
    expired: str  # offsets committed, then expired by retention
    partitions: int = 3


def coordinator_class_path() -> str:
    """The reader compiled against kafka-group-coordinator and what it needs (skips if Maven
    cannot fetch it)."""
    try:
        libs = maven_jars(CACHE / "kafka-group-coordinator" / COORDINATOR_VERSION,
                          [("org.apache.kafka", "kafka-group-coordinator", COORDINATOR_VERSION)])
    except KafkaUnavailable as exc:
        pytest.skip(f"kafka-group-coordinator {COORDINATOR_VERSION} unavailable: {exc}")
    return javaclient.classpath(source_dir=SOURCES, libs=libs)


def read_with_kafka_serde(bootstrap: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every record of `__consumer_offsets` as Kafka's serde decodes it, and the summary."""
    proc = javaclient.run("OffsetsTopicReader", bootstrap, str(PAUSED_RECORD_TYPE),
                          class_path=coordinator_class_path(), timeout=120)
    assert proc.returncode == 0, f"reader exited with {proc.returncode}:\n{proc.stderr[-4000:]}"
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return lines[:-1], lines[-1]


def _join_commit_leave(bootstrap: str, group: str, topic: str, protocol: str,
                       offsets: dict[int, int]) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "group.protocol": protocol, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", **QUIET})
    try:
        consumer.subscribe([topic])

        def assigned() -> bool:
            consumer.poll(0.2)
            return len(consumer.assignment()) == len(offsets)

        wait_for(assigned, f"{group} to be assigned {topic}")
        consumer.commit(offsets=[CkPartition(topic, p, o) for p, o in offsets.items()],
                        asynchronous=False)
    finally:
        consumer.close()


def run(kcsim: Any, names: Any) -> Scenario:
    s = Scenario(topic=names("t"), classic=names("classic"), consumer=names("consumer"),
                 deleted=names("deleted"), expired=names("expired"))
    bootstrap = kcsim.bootstrap
    admin_k = KafkaAdmin({"bootstrap.servers": bootstrap, **QUIET})
    admin_k.create_topics([NewTopic(s.topic, s.partitions, 1)])[s.topic].result(15)
    tps = [TopicPartition(s.topic, p) for p in range(s.partitions)]
    with AdminClient(bootstrap, timeout=15) as admin:
        admin.alter_group_offsets(s.expired, dict.fromkeys(tps, 7)).all()
        kcsim.clock.advance(WEEK_MS + 3600 * 1000)  # past offsets.retention.minutes
        wait_for(lambda: not admin.list_group_offsets(s.expired).all()[s.expired],
                 "offsets to expire")
        _join_commit_leave(bootstrap, s.classic, s.topic, "classic", {0: 10, 1: 11, 2: 12})
        _join_commit_leave(bootstrap, s.consumer, s.topic, "consumer", {0: 20, 1: 21, 2: 22})
        admin.delete_group_offsets(s.classic, [tps[2]]).all()
        admin.pause_partitions(s.consumer, tps[:2]).all()
        admin.alter_group_offsets(s.deleted, {tps[0]: 30}).all()
        admin.delete_groups(s.deleted).all()
    return s
