"""kafka-python against `__consumer_offsets`: internal, not writable, and tailed live.

kafka-python keeps internal topics out of what its producer may write to, so a produce is
refused before it leaves the client (the broker's own refusal is in
tests/server/test_offsets_topic.py). A consumer tailing the topic with a long fetch wait
receives a commit while its fetch waits: the commit wakes the waiting fetch.
"""

from __future__ import annotations

from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from kcsim.coordinator.kafka_format import OFFSETS_TOPIC, partition_for

from .ck_members import wait_for

LONG_WAIT_MS = 60_000  # longer than the poll below: only a woken fetch answers in time


def parked_fetches(kcsim: Any) -> int:
    """Fetches the broker holds until data arrives (long polls)."""
    return int(kcsim.run_sync(
        lambda: kcsim.server.broker.data_arrived.statistics().tasks_waiting))


def test_it_is_internal_and_kafka_python_will_not_produce_to_it(kcsim: Any) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kcsim.bootstrap)
    try:
        [described] = admin.describe_topics([OFFSETS_TOPIC])
    finally:
        admin.close()
    assert described["is_internal"] is True
    assert len(described["partitions"]) == 50
    producer = KafkaProducer(bootstrap_servers=kcsim.bootstrap)
    consumer = KafkaConsumer(bootstrap_servers=kcsim.bootstrap)
    try:
        with pytest.raises(ValueError, match=OFFSETS_TOPIC):
            producer.send(OFFSETS_TOPIC, b"not a coordinator record", partition=0)
        # A consumer lists it only as internal: left out of topics(), yet readable.
        assert len(consumer.partitions_for_topic(OFFSETS_TOPIC)) == 50
        assert OFFSETS_TOPIC not in consumer.topics()
        tp = TopicPartition(OFFSETS_TOPIC, 0)
        assert consumer.end_offsets([tp]) == {tp: 0}
    finally:
        producer.close()
        consumer.close()


def test_a_tailing_consumer_gets_a_commit_while_its_fetch_waits(
        kcsim: Any, unique_name: Any) -> None:
    group, topic = unique_name("tailed"), unique_name("t")
    tailed = TopicPartition(OFFSETS_TOPIC, partition_for(group, 50))
    tail = KafkaConsumer(bootstrap_servers=kcsim.bootstrap, fetch_max_wait_ms=LONG_WAIT_MS,
                         request_timeout_ms=LONG_WAIT_MS + 10_000, enable_auto_commit=False)
    committer = KafkaConsumer(bootstrap_servers=kcsim.bootstrap, group_id=group,
                              enable_auto_commit=False)
    try:
        producer = KafkaProducer(bootstrap_servers=kcsim.bootstrap)
        producer.send(topic, b"x").get(timeout=10)
        producer.close()
        tail.assign([tailed])
        tail.seek_to_end(tailed)
        assert tail.poll(timeout_ms=500) == {}  # its fetch now waits at the end
        wait_for(lambda: parked_fetches(kcsim) >= 1, "the tail's fetch to wait for data")
        committer.assign([TopicPartition(topic, 0)])
        committer.commit({TopicPartition(topic, 0): OffsetAndMetadata(1, "", -1)})
        got = tail.poll(timeout_ms=LONG_WAIT_MS // 3)
        records = got.get(tailed, [])
        assert len(records) == 1
        assert records[0].key[:2] == b"\x00\x01"  # an OffsetCommit record
        assert group.encode() in records[0].key
    finally:
        tail.close()
        committer.close()
