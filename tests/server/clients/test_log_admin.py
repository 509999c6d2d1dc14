"""A partition's log through real admin clients over real sockets: DeleteRecords moves the
log start offset (durably: it survives a restart), consumers whose position falls below it
reset as `auto.offset.reset` says, DescribeLogDirs weighs the partitions, and
`Admin.abortTransaction` (WriteTxnMarkers) ends a transaction its producer left open."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from .javaclient import run, skip_without_java
from .txnkit import latest_offsets

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim.server.embedded import EmbeddedServer

pytestmark = pytest.mark.timeout(120)
COUNT = 10


def make_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)


def fill(bootstrap: str, topic: str, count: int = COUNT) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(count):
        producer.produce(topic, f"v{i}".encode(), partition=0)
        producer.flush(10)  # one batch a record: log starts can fall between batches
    assert producer.flush(10) == 0


def delete_before(bootstrap: str, topic: str, offset: int) -> int:
    """confluent-kafka's delete_records: the low watermark it answers."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0, offset)
    result = admin.delete_records([tp], request_timeout=10)[tp].result(10)
    return int(result.low_watermark)


def earliest(bootstrap: str, topic: str) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0)
    return int(admin.list_offsets({tp: OffsetSpec.earliest()})[tp].result(10).offset)


def first_value(bootstrap: str, topic: str, group: str, reset: str,
                timeout_s: float = 20) -> tuple[int, str] | None:
    """(offset, value) of the first record a subscribed consumer of `group` gets, or None
    when it gets nothing in `timeout_s`."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "auto.offset.reset": reset, "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            return message.offset(), message.value().decode()
        return None
    finally:
        consumer.close()


def commit(bootstrap: str, group: str, topic: str, offset: int) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    finally:
        consumer.close()


def test_delete_records_moves_the_start_and_reads_begin_there(
        kcsim: EmbeddedServer, unique_name: Callable[[str], str]) -> None:
    topic = unique_name("t")
    make_topic(kcsim.bootstrap, topic)
    fill(kcsim.bootstrap, topic)
    assert delete_before(kcsim.bootstrap, topic, 4) == 4
    assert earliest(kcsim.bootstrap, topic) == 4
    assert delete_before(kcsim.bootstrap, topic, 2) == 4  # never backwards
    assert first_value(kcsim.bootstrap, topic, unique_name("g"), "earliest") == (4, "v4")
    assert delete_before(kcsim.bootstrap, topic, -1) == COUNT  # -1: the high watermark
    assert earliest(kcsim.bootstrap, topic) == COUNT
    assert latest_offsets(kcsim.bootstrap, topic) == (COUNT, COUNT)


@pytest.mark.parametrize(("offset", "error"), [(COUNT + 1, "OFFSET_OUT_OF_RANGE"),
                                               (-2, "OFFSET_OUT_OF_RANGE")])
def test_delete_records_refuses_offsets_kafka_refuses(
        kcsim: EmbeddedServer, unique_name: Callable[[str], str], offset: int, error: str) -> None:
    topic = unique_name("t")
    make_topic(kcsim.bootstrap, topic)
    fill(kcsim.bootstrap, topic)
    with pytest.raises(KafkaException, match=error):
        delete_before(kcsim.bootstrap, topic, offset)
    assert earliest(kcsim.bootstrap, topic) == 0


@pytest.mark.parametrize(("reset", "expected"), [("earliest", (6, "v6")), ("latest", None)])
def test_a_committed_offset_below_the_start_resets_as_configured(
        kcsim: EmbeddedServer, unique_name: Callable[[str], str], reset: str,
        expected: tuple[int, str] | None) -> None:
    """The group's committed offset 2 is below the new start 6: fetching from it is out of
    range, and the consumer resets to the start (earliest) or the end (latest: nothing)."""
    topic, group = unique_name("t"), unique_name("g")
    make_topic(kcsim.bootstrap, topic)
    fill(kcsim.bootstrap, topic)
    commit(kcsim.bootstrap, group, topic, 2)
    assert delete_before(kcsim.bootstrap, topic, 6) == 6
    assert first_value(kcsim.bootstrap, topic, group, reset, timeout_s=5) == expected


def test_the_log_start_offset_survives_a_restart(
        kcsim_persistent: EmbeddedServer, unique_name: Callable[[str], str]) -> None:
    topic = unique_name("t")
    make_topic(kcsim_persistent.bootstrap, topic)
    fill(kcsim_persistent.bootstrap, topic)
    assert delete_before(kcsim_persistent.bootstrap, topic, 7) == 7
    kcsim_persistent.restart()
    assert earliest(kcsim_persistent.bootstrap, topic) == 7
    assert latest_offsets(kcsim_persistent.bootstrap, topic) == (COUNT, COUNT)
    assert first_value(kcsim_persistent.bootstrap, topic, unique_name("g"), "earliest") == (7, "v7")


def test_describe_log_dirs_weighs_each_partition(
        kcsim_persistent: EmbeddedServer, unique_name: Callable[[str], str]) -> None:
    """kafka-python's describe_log_dirs: the data directory, the topic's partitions, the
    one written to weighing more than nothing, the other nothing."""
    from kafka import KafkaAdminClient

    topic = unique_name("t")
    make_topic(kcsim_persistent.bootstrap, topic, partitions=2)
    fill(kcsim_persistent.bootstrap, topic)
    admin = KafkaAdminClient(bootstrap_servers=kcsim_persistent.bootstrap)
    try:
        (broker,) = admin.describe_log_dirs([topic])
    finally:
        admin.close()
    (log_dir,) = broker["log_dirs"]
    assert log_dir["error_code"] == 0
    assert log_dir["log_dir"].endswith("kcsim-data")
    sizes = {p["partition_index"]: p["partition_size"]
             for t in log_dir["topics"] if t["name"] == topic for p in t["partitions"]}
    assert set(sizes) == {0, 1}
    assert sizes[0] > COUNT * 20 and sizes[1] == 0


@pytest.fixture
def _java() -> None:
    skip_without_java()


@pytest.mark.java
@pytest.mark.usefixtures("_java")
def test_java_admin_aborts_a_hanging_transaction_and_describes_log_dirs(
        kcsim: EmbeddedServer, unique_name: Callable[[str], str], java_version: str) -> None:
    """A transactional producer writes and then goes quiet; `Admin.abortTransaction` (what
    kafka-transactions abort does) ends it: the last stable offset moves past the marker
    and read_committed readers see none of its records. Then the Java Admin deletes records
    and describes the log dir."""
    topic = unique_name("t")
    make_topic(kcsim.bootstrap, topic)
    producer = Producer({"bootstrap.servers": kcsim.bootstrap,
                         "transactional.id": unique_name("tx"), "transaction.timeout.ms": 600000})
    producer.init_transactions(10)
    producer.begin_transaction()
    producer.produce(topic, b"hanging", partition=0)
    assert producer.flush(10) == 0
    assert latest_offsets(kcsim.bootstrap, topic) == (0, 1)
    aborted = run("LogAdmin", "abort", kcsim.bootstrap, topic, version=java_version)
    assert aborted.returncode == 0, aborted.stderr[-4000:]
    assert aborted.stdout.split()[0] == "aborted"
    assert latest_offsets(kcsim.bootstrap, topic) == (2, 2)  # the record and its abort marker
    deleted = run("LogAdmin", "delete", kcsim.bootstrap, topic, "1", version=java_version)
    assert deleted.stdout.splitlines() == ["low 1"], deleted.stderr[-4000:]
    refused = run("LogAdmin", "delete", kcsim.bootstrap, topic, "9", version=java_version)
    assert refused.stdout.splitlines() == ["failed OffsetOutOfRangeException"]
    dirs = run("LogAdmin", "logdirs", kcsim.bootstrap, topic, version=java_version)
    assert dirs.returncode == 0, dirs.stderr[-4000:]
    ((log_dir, partition, size, lag),) = [line.split() for line in dirs.stdout.splitlines()]
    assert (log_dir, partition, lag) == ("/kcsim/in-memory", "0", "0")
    assert int(size) > 0
