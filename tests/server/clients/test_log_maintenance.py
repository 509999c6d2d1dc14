"""Retention and the log cleaner through real clients over real sockets: consumers read a
compacted topic after cleaning and see one record per key, the newest (confluent-kafka
and the Java client, as a Kafka Streams state store restores its changelog); a clock
moved past retention.ms leaves a committed offset below the log start, and the
consumer resets as its auto.offset.reset says."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kcsim.server.control.waits import wait_blocking

from .javaclient import run, skip_without_java
from .test_log_admin import commit, earliest, fill, first_value

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim.server.embedded import EmbeddedServer

pytestmark = pytest.mark.timeout(180)
KEYS = 5
ROUNDS = 4
# What a consumer reads after cleaning: each key's newest value; k0's is a tombstone,
# kept for delete.retention.ms (a day).
NEWEST = {f"k{k}": (None if k == 0 else f"v{k}.{ROUNDS - 1}") for k in range(KEYS)}


def make_topic(bootstrap: str, topic: str, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(10)


def fill_changelog(bootstrap: str, topic: str) -> None:
    """ROUNDS values of each key, a batch per record, the last of k0 a tombstone."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for r in range(ROUNDS):
        for k in range(KEYS):
            value = None if (k == 0 and r == ROUNDS - 1) else f"v{k}.{r}".encode()
            producer.produce(topic, value, key=f"k{k}".encode(), partition=0)
            producer.flush(10)
    assert producer.flush(10) == 0


def read_all(bootstrap: str, topic: str) -> list[tuple[int, str, str | None]]:
    """Every record of partition 0 from its beginning to its end (confluent-kafka)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader",
                         "enable.auto.commit": False, "enable.partition.eof": True})
    out: list[tuple[int, str, str | None]] = []
    try:
        consumer.assign([TopicPartition(topic, 0, -2)])  # OFFSET_BEGINNING
        while True:
            message = consumer.poll(10)
            assert message is not None, f"no end of partition after {out}"
            if message.error() is not None:
                assert message.error().code() == -191, message.error()  # _PARTITION_EOF
                return out
            value = message.value()
            out.append((message.offset(), message.key().decode(),
                        None if value is None else value.decode()))
    finally:
        consumer.close()


def test_a_consumer_reads_one_record_per_key_after_cleaning(
        kcsim: EmbeddedServer, unique_name: Callable[[str], str]) -> None:
    topic = unique_name("changelog")
    make_topic(kcsim.bootstrap, topic, **{"cleanup.policy": "compact"})
    fill_changelog(kcsim.bootstrap, topic)
    assert len(read_all(kcsim.bootstrap, topic)) == KEYS * ROUNDS
    report = kcsim.run_log_maintenance(roll=True)
    assert {"topic": topic, "partition": 0, "records_before": KEYS * ROUNDS,
            "records_after": KEYS} in report.cleaned
    records = read_all(kcsim.bootstrap, topic)
    assert {key: value for _offset, key, value in records} == NEWEST
    assert len(records) == KEYS
    assert [offset for offset, _k, _v in records] == list(range(KEYS * (ROUNDS - 1),
                                                                KEYS * ROUNDS))


def test_the_cleaner_runs_on_its_own_as_the_dirty_ratio_says(
        kcsim_persistent: EmbeddedServer, unique_name: Callable[[str], str]) -> None:
    """No forced run: segment.ms rolls the active segment, the check interval comes round
    by the broker's clock, and the dirty ratio is over min.cleanable.dirty.ratio. The
    cleaned log survives a restart."""
    topic = unique_name("changelog")
    make_topic(kcsim_persistent.bootstrap, topic,
               **{"cleanup.policy": "compact", "segment.ms": "60000"})
    fill_changelog(kcsim_persistent.bootstrap, topic)
    srv = kcsim_persistent
    passes = srv.run_sync(lambda: srv.server.maintenance.passes)
    srv.clock.advance(300_000)  # log.retention.check.interval.ms: the check comes round
    wait_blocking(srv.run_sync, lambda: srv.server,
                  lambda server: (server.maintenance.passes > passes, None,
                                  f"{server.maintenance.passes} passes"),
                  "a pass of log maintenance", 20)
    records = read_all(kcsim_persistent.bootstrap, topic)
    assert {key: value for _offset, key, value in records} == NEWEST
    assert len(records) == KEYS
    kcsim_persistent.restart()
    assert read_all(kcsim_persistent.bootstrap, topic) == records


@pytest.mark.parametrize(("reset", "expected"), [("earliest", (10, "v10")), ("latest", None)])
def test_a_committed_offset_retention_deleted_resets_as_configured(
        kcsim: EmbeddedServer, unique_name: Callable[[str], str], reset: str,
        expected: tuple[int, str] | None) -> None:
    """The group committed 2; the clock moves past retention.ms and retention deletes every
    segment (the active one too, as Kafka rolls it first): the log starts at 10, and the
    consumer resets to it (earliest: the first record produced after) or to the end."""
    topic, group = unique_name("t"), unique_name("g")
    make_topic(kcsim.bootstrap, topic, **{"retention.ms": "3600000"})
    fill(kcsim.bootstrap, topic)
    commit(kcsim.bootstrap, group, topic, 2)
    kcsim.clock.advance(3_600_001)  # past the check interval too: a pass may run already
    kcsim.run_log_maintenance()  # returns once that pass, then its own, are done
    assert earliest(kcsim.bootstrap, topic) == 10
    producer = Producer({"bootstrap.servers": kcsim.bootstrap})
    producer.produce(topic, b"v10", partition=0)
    assert producer.flush(10) == 0
    assert first_value(kcsim.bootstrap, topic, group, reset, timeout_s=5) == expected


@pytest.fixture
def _java() -> None:
    skip_without_java()


@pytest.mark.java
@pytest.mark.usefixtures("_java")
def test_a_java_consumer_restores_a_cleaned_changelog(
        kcsim: EmbeddedServer, unique_name: Callable[[str], str], java_version: str) -> None:
    topic = unique_name("changelog")
    make_topic(kcsim.bootstrap, topic, **{"cleanup.policy": "compact"})
    fill_changelog(kcsim.bootstrap, topic)
    kcsim.run_log_maintenance(roll=True)
    done = run("LogReader", kcsim.bootstrap, topic, version=java_version)
    assert done.returncode == 0, done.stderr[-4000:]
    *lines, end = done.stdout.splitlines()
    assert end == f"end {KEYS * ROUNDS}"
    seen = {key: (None if value == "null" else value)
            for _offset, key, value in (line.split(" ", 2) for line in lines)}
    assert seen == NEWEST
    assert len(lines) == KEYS
