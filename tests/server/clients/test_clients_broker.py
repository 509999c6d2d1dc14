"""Real Kafka clients against `kcsim serve`: topic admin, cluster, produce, fetch, offsets.

Each client runs the same flow: create a 3-partition topic, see it listed with 3
partitions, describe the cluster, produce 1,000 keyed messages, fetch them all
back through assign() of the three partitions (no group), read earliest/latest
offsets, delete the topic and see it gone.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from . import javaclient

if TYPE_CHECKING:
    from collections.abc import Iterable

pytestmark = pytest.mark.timeout(120)

MESSAGES = 1000
PARTITIONS = 3
CLUSTER_ID = "kcsim-cluster-000000000"
NODE_ID = 1


def payload(i: int) -> tuple[bytes, bytes]:
    return f"key-{i}".encode(), f"value-{i}".encode()


def check_delivery(records: Iterable[tuple[int, int, bytes | None, bytes | None]]) -> dict[int, int]:
    """Every message exactly once with its value, offsets 0..n-1 per partition; returns counts."""
    records = list(records)
    keys = Counter(key for _, _, key, _ in records)
    duplicated = [key for key, n in keys.items() if n > 1]
    assert not duplicated, f"{len(duplicated)} keys delivered more than once, e.g. {duplicated[:3]}"
    assert len(records) == MESSAGES, f"fetched {len(records)} of {MESSAGES} messages"
    expected = dict(payload(i) for i in range(MESSAGES))
    wrong = [(k, v) for _, _, k, v in records if k is None or expected.get(k) != v]
    assert not wrong, f"{len(wrong)} messages with a wrong key or value, e.g. {wrong[:3]}"
    offsets: dict[int, list[int]] = {}
    for partition, offset, _, _ in records:
        offsets.setdefault(partition, []).append(offset)
    assert set(offsets) <= set(range(PARTITIONS)), f"records from partitions {sorted(offsets)}"
    for partition, seen in offsets.items():
        assert sorted(seen) == list(range(len(seen))), f"partition {partition} offsets are not 0..n-1"
    assert len(offsets) >= 2, f"all messages went to one partition: {sorted(offsets)}"
    return {p: len(seen) for p, seen in offsets.items()}


def check_offsets(earliest: dict[int, int], latest: dict[int, int], counts: dict[int, int]) -> None:
    assert earliest == dict.fromkeys(range(PARTITIONS), 0)
    assert latest == {p: counts.get(p, 0) for p in range(PARTITIONS)}
    assert sum(latest.values()) == MESSAGES


class LogRecords(logging.Handler):
    """Keeps the records of one client's own logger (not propagated to the root)."""

    _ids = itertools.count()

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.logger = logging.getLogger(f"kcsim-tests.librdkafka.{next(self._ids)}")
        self.logger.propagate = False
        self.logger.setLevel(logging.DEBUG)
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def problems(self) -> list[str]:
        return [f"{r.levelname}: {r.getMessage()}" for r in self.records
                if r.levelno >= logging.WARNING]


def wait_until(predicate: Any, timeout: float = 5.0, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


# -- kafka-python ------------------------------------------------------------------


KAFKA_PYTHON_PRODUCERS = {
    "plain": {"enable_idempotence": False},
    "gzip": {"enable_idempotence": False, "compression_type": "gzip"},
    "idempotent": {"enable_idempotence": True},
}


@pytest.mark.parametrize("producer_conf", KAFKA_PYTHON_PRODUCERS.values(),
                         ids=KAFKA_PYTHON_PRODUCERS.keys())
def test_kafka_python(kcsim_server: Any, unique_name: Any, producer_conf: dict[str, Any]) -> None:
    """kafka-python: KafkaAdminClient, KafkaProducer, KafkaConsumer.assign()."""
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

    topic = unique_name("kp")
    common = {"bootstrap_servers": kcsim_server.bootstrap, "request_timeout_ms": 5000,
              "reconnect_backoff_max_ms": 1000}
    admin = KafkaAdminClient(**common, bootstrap_timeout_ms=5000)
    try:
        admin.create_topics({topic: {"num_partitions": PARTITIONS, "replication_factor": 1}},
                            timeout_ms=5000)
        assert topic in admin.list_topics()
        [described] = admin.describe_topics([topic])
        assert described["name"] == topic
        assert described["error_code"] == 0
        assert sorted(p["partition_index"] for p in described["partitions"]) == [0, 1, 2]
        assert {p["leader_id"] for p in described["partitions"]} == {NODE_ID}

        cluster = admin.describe_cluster()
        assert cluster["cluster_id"] == CLUSTER_ID
        assert [(b["broker_id"], b["host"], b["port"]) for b in cluster["brokers"]] == [
            (NODE_ID, "127.0.0.1", kcsim_server.port)]

        producer = KafkaProducer(**common, acks="all", linger_ms=5, max_block_ms=10000,
                                 **producer_conf)
        try:
            futures = [producer.send(topic, key=k, value=v)
                       for k, v in (payload(i) for i in range(MESSAGES))]
            producer.flush(timeout=15)
            acked = Counter(f.get(timeout=5).partition for f in futures)
        finally:
            producer.close(timeout=5)
        assert sum(acked.values()) == MESSAGES

        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer = KafkaConsumer(**common, group_id=None, enable_auto_commit=False,
                                 auto_offset_reset="earliest", fetch_max_wait_ms=100)
        try:
            consumer.assign(tps)
            consumer.seek_to_beginning(*tps)
            records: list[tuple[int, int, bytes | None, bytes | None]] = []
            deadline = time.monotonic() + 20
            while len(records) < MESSAGES and time.monotonic() < deadline:
                for batch in consumer.poll(timeout_ms=200).values():
                    records += [(r.partition, r.offset, r.key, r.value) for r in batch]
            for batch in consumer.poll(timeout_ms=300).values():
                records += [(r.partition, r.offset, r.key, r.value) for r in batch]
            counts = check_delivery(records)
            assert counts == dict(acked)

            earliest = consumer.beginning_offsets(tps)
            latest = consumer.end_offsets(tps)
        finally:
            consumer.close()
        check_offsets({tp.partition: o for tp, o in earliest.items()},
                      {tp.partition: o for tp, o in latest.items()}, counts)

        admin.delete_topics([topic], timeout_ms=5000)
        assert wait_until(lambda: topic not in admin.list_topics()), "deleted topic still listed"
    finally:
        admin.close()


# -- confluent-kafka ---------------------------------------------------------------


CONFLUENT_PRODUCERS = {
    "plain": {"enable.idempotence": False},
    "gzip": {"enable.idempotence": False, "compression.type": "gzip"},
    "snappy": {"enable.idempotence": False, "compression.type": "snappy"},
    "lz4": {"enable.idempotence": False, "compression.type": "lz4"},
    "zstd": {"enable.idempotence": False, "compression.type": "zstd"},
    "idempotent": {"enable.idempotence": True},
}


@pytest.mark.parametrize("producer_conf", CONFLUENT_PRODUCERS.values(),
                         ids=CONFLUENT_PRODUCERS.keys())
def test_confluent_kafka(kcsim_server: Any, unique_name: Any, producer_conf: dict[str, Any]) -> None:
    """confluent-kafka (librdkafka): AdminClient, Producer, Consumer.assign()."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

    topic = unique_name("ck")
    logs = LogRecords()
    common = {"bootstrap.servers": kcsim_server.bootstrap, "socket.timeout.ms": 5000,
              "reconnect.backoff.max.ms": 1000, "logger": logs.logger}
    admin = AdminClient(common)

    admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)],
                        request_timeout=5, operation_timeout=5)[topic].result(timeout=10)
    metadata = admin.list_topics(timeout=5)
    assert topic in metadata.topics
    assert metadata.topics[topic].error is None
    assert sorted(metadata.topics[topic].partitions) == [0, 1, 2]
    assert {p.leader for p in metadata.topics[topic].partitions.values()} == {NODE_ID}
    assert metadata.cluster_id == CLUSTER_ID
    assert [(b.id, b.host, b.port) for b in metadata.brokers.values()] == [
        (NODE_ID, "127.0.0.1", kcsim_server.port)]

    cluster = admin.describe_cluster(request_timeout=5).result(timeout=10)
    assert cluster.cluster_id == CLUSTER_ID
    assert [(n.id, n.host, n.port) for n in cluster.nodes] == [
        (NODE_ID, "127.0.0.1", kcsim_server.port)]

    errors: list[Any] = []
    acked: Counter[int] = Counter()

    def delivered(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(err)
        else:
            acked[msg.partition()] += 1

    producer = Producer({**common, "acks": "all", "linger.ms": 5, "message.timeout.ms": 15000,
                         **producer_conf})
    for i in range(MESSAGES):
        key, value = payload(i)
        producer.produce(topic, key=key, value=value, on_delivery=delivered)
        producer.poll(0)
    remaining = producer.flush(timeout=20)
    assert remaining == 0, f"{remaining} messages still queued"
    assert not errors, f"{len(errors)} delivery errors, e.g. {errors[:3]}"
    assert sum(acked.values()) == MESSAGES
    producer.poll(0.2)
    producer.close()

    consumer = Consumer({**common, "group.id": unique_name("unused-group"),
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "fetch.wait.max.ms": 100})
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        records: list[tuple[int, int, bytes | None, bytes | None]] = []
        consume_errors: list[Any] = []
        deadline = time.monotonic() + 20
        quiet_until = float("inf")
        while time.monotonic() < min(deadline, quiet_until):
            for msg in consumer.consume(num_messages=500, timeout=0.2):
                if msg.error() is None:
                    records.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
                elif msg.error().code() != KafkaError._PARTITION_EOF:
                    consume_errors.append(msg.error())
            if len(records) >= MESSAGES and quiet_until == float("inf"):
                quiet_until = time.monotonic() + 0.3
        assert not consume_errors, f"consumer errors: {consume_errors[:3]}"
        counts = check_delivery(records)
        assert counts == dict(acked)

        watermarks = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=5,
                                                        cached=False)
                      for p in range(PARTITIONS)}
    finally:
        consumer.close()
    check_offsets({p: lo for p, (lo, _) in watermarks.items()},
                  {p: hi for p, (_, hi) in watermarks.items()}, counts)

    def list_offsets(spec: Any) -> dict[int, int]:
        futures = admin.list_offsets({TopicPartition(topic, p): spec for p in range(PARTITIONS)},
                                     request_timeout=5)
        return {tp.partition: f.result(timeout=10).offset for tp, f in futures.items()}

    check_offsets(list_offsets(OffsetSpec.earliest()), list_offsets(OffsetSpec.latest()), counts)

    admin.delete_topics([topic], request_timeout=5, operation_timeout=5)[topic].result(timeout=10)
    assert wait_until(lambda: topic not in admin.list_topics(timeout=5).topics), \
        "deleted topic still listed"
    admin.poll(0.2)
    problems = logs.problems()
    assert not problems, "librdkafka warned against a healthy broker:\n" + "\n".join(problems[:6])


# -- aiokafka ----------------------------------------------------------------------


async def _aiokafka_flow(bootstrap: str, port: int, topic: str,
                         producer_conf: dict[str, Any]) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    common = {"bootstrap_servers": bootstrap, "request_timeout_ms": 5000}
    admin = AIOKafkaAdminClient(**common)
    await asyncio.wait_for(admin.start(), 10)
    try:
        await asyncio.wait_for(admin.create_topics(
            [NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)], timeout_ms=5000), 10)
        assert topic in await asyncio.wait_for(admin.list_topics(), 10)
        [described] = await asyncio.wait_for(admin.describe_topics([topic]), 10)
        assert described["topic"] == topic
        assert described["error_code"] == 0
        assert sorted(p["partition"] for p in described["partitions"]) == [0, 1, 2]
        assert {p["leader"] for p in described["partitions"]} == {NODE_ID}

        cluster = await asyncio.wait_for(admin.describe_cluster(), 10)
        assert cluster["cluster_id"] == CLUSTER_ID
        assert [(b["node_id"], b["host"], b["port"]) for b in cluster["brokers"]] == [
            (NODE_ID, "127.0.0.1", port)]

        producer = AIOKafkaProducer(**common, acks="all", linger_ms=5, **producer_conf)
        await asyncio.wait_for(producer.start(), 10)
        try:
            futures = [await producer.send(topic, key=k, value=v)
                       for k, v in (payload(i) for i in range(MESSAGES))]
            results = await asyncio.wait_for(asyncio.gather(*futures), 20)
        finally:
            await producer.stop()
        acked = Counter(md.partition for md in results)
        assert sum(acked.values()) == MESSAGES

        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer = AIOKafkaConsumer(**common, group_id=None, enable_auto_commit=False,
                                    auto_offset_reset="earliest", fetch_max_wait_ms=100)
        await asyncio.wait_for(consumer.start(), 10)
        try:
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            records: list[tuple[int, int, bytes | None, bytes | None]] = []
            deadline = time.monotonic() + 20
            while len(records) < MESSAGES and time.monotonic() < deadline:
                for batch in (await consumer.getmany(timeout_ms=200)).values():
                    records += [(r.partition, r.offset, r.key, r.value) for r in batch]
            for batch in (await consumer.getmany(timeout_ms=300)).values():
                records += [(r.partition, r.offset, r.key, r.value) for r in batch]
            counts = check_delivery(records)
            assert counts == dict(acked)

            earliest = await asyncio.wait_for(consumer.beginning_offsets(tps), 10)
            latest = await asyncio.wait_for(consumer.end_offsets(tps), 10)
        finally:
            await consumer.stop()
        check_offsets({tp.partition: o for tp, o in earliest.items()},
                      {tp.partition: o for tp, o in latest.items()}, counts)

        await asyncio.wait_for(admin.delete_topics([topic], timeout_ms=5000), 10)
        deadline = time.monotonic() + 5
        while topic in await asyncio.wait_for(admin.list_topics(), 10):
            assert time.monotonic() < deadline, "deleted topic still listed"
            await asyncio.sleep(0.1)
    finally:
        await admin.close()


AIOKAFKA_PRODUCERS = {
    "plain": {"enable_idempotence": False},
    "gzip": {"enable_idempotence": False, "compression_type": "gzip"},
    "idempotent": {"enable_idempotence": True},
}


@pytest.mark.parametrize("producer_conf", AIOKAFKA_PRODUCERS.values(),
                         ids=AIOKAFKA_PRODUCERS.keys())
def test_aiokafka(kcsim_server: Any, unique_name: Any, producer_conf: dict[str, Any]) -> None:
    """aiokafka: AIOKafkaAdminClient, AIOKafkaProducer, AIOKafkaConsumer.assign()."""
    asyncio.run(_aiokafka_flow(kcsim_server.bootstrap, kcsim_server.port, unique_name("aio"),
                               producer_conf))


# -- Java --------------------------------------------------------------------------


JAVA_PRODUCERS = {
    "plain": ("none", "false"),
    "gzip": ("gzip", "false"),
    "snappy": ("snappy", "false"),
    "lz4": ("lz4", "false"),
    "zstd": ("zstd", "false"),
    "client-defaults": ("none", "default"),
}


@pytest.mark.java
@pytest.mark.parametrize(("compression", "idempotence"), JAVA_PRODUCERS.values(),
                         ids=JAVA_PRODUCERS.keys())
def test_java_client(kcsim_server: Any, unique_name: Any, compression: str,
                     idempotence: str, java_version: str) -> None:
    """The Java client (kafka-clients 3.9 and 4.x): Admin, KafkaProducer, KafkaConsumer.assign()."""
    javaclient.skip_without_java()
    topic = unique_name("java")
    proc = javaclient.run("BrokerSmoke", kcsim_server.bootstrap, topic, str(MESSAGES),
                          str(PARTITIONS), compression, idempotence, timeout=90,
                          version=java_version)
    steps: dict[str, dict[str, Any]] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            step = json.loads(line)
            steps[step["step"]] = step
    failed = [s for s in steps.values() if "error" in s]
    context = f"\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-4000:]}"
    assert not failed, f"Java step {failed[0]['step']} failed: {failed[0]['error']}{context}"
    assert proc.returncode == 0, f"java exited with {proc.returncode}{context}"

    assert steps["create"]["created"] is True
    assert steps["list"]["present"] is True
    assert steps["list"]["partitions"] == PARTITIONS
    assert steps["list"]["leaders"] == [NODE_ID] * PARTITIONS
    assert steps["cluster"]["cluster_id"] == CLUSTER_ID
    assert steps["cluster"]["nodes"] == [{"id": NODE_ID, "host": "127.0.0.1", "port": kcsim_server.port}]

    produced = steps["produce"]
    assert produced["errors"] == 0, produced["first_error"]
    assert produced["acked"] == MESSAGES
    consumed = steps["consume"]
    assert consumed["duplicates"] == 0
    assert consumed["records"] == MESSAGES
    assert consumed["distinct_keys"] == MESSAGES
    assert consumed["bad_values"] == 0
    assert consumed["partitions_with_offset_gaps"] == 0
    assert consumed["per_partition"] == produced["per_partition"]
    assert len(consumed["per_partition"]) >= 2

    counts = {int(p): n for p, n in produced["per_partition"].items()}
    for name in ("offsets", "admin_offsets"):
        check_offsets({int(p): o for p, o in steps[name]["earliest"].items()},
                      {int(p): o for p, o in steps[name]["latest"].items()}, counts)
    assert steps["delete"]["still_listed"] is False
