"""Real clients across a kcsim restart: committed offsets, groups and produced data survive.

A confluent-kafka consumer group reads part of a produced topic and commits;
kcsim restarts on the same data dir; a new consumer of the group resumes
exactly at the committed offsets, the AdminClient lists and describes the group
as before (Empty, same offsets), and the topic keeps every produced message.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 3
PER_PARTITION = 40
CONSUME_FIRST = {0: 10, 1: 25, 2: 0}  # records the first consumer takes per partition
QUIET = {"log_level": 0}
WAIT_S = 20.0


def consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                     "enable.auto.commit": False, "auto.offset.reset": "earliest",
                     "session.timeout.ms": 6000, **QUIET})


def poll_until(c: Consumer, done: Callable[[list[Any]], bool], what: str) -> list[Any]:
    """Messages polled (errors fail the test) until `done(messages)`."""
    got: list[Any] = []
    deadline = time.monotonic() + WAIT_S
    while not done(got):
        assert time.monotonic() < deadline, f"timed out waiting for {what}; got {len(got)}"
        msg = c.poll(0.1)
        if msg is None:
            continue
        assert not msg.error(), msg.error()
        got.append(msg)
    return got


def group_view(admin: AdminClient, group: str, topic: str) -> dict[str, Any]:
    """What the AdminClient shows of the group: listing, description, committed offsets."""
    listed = admin.list_consumer_groups(request_timeout=WAIT_S).result(WAIT_S)
    states = {g.group_id: g.state for g in listed.valid}
    [described] = admin.describe_consumer_groups([group],
                                                 request_timeout=WAIT_S).values()
    described = described.result(WAIT_S)
    [offsets] = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group)], request_timeout=WAIT_S).values()
    return {
        "listed": states.get(group),
        "state": described.state,
        "members": len(described.members),
        "offsets": {(tp.topic, tp.partition): tp.offset
                    for tp in offsets.result(WAIT_S).topic_partitions},
    }


def log_end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    c = consumer(bootstrap, "kcsim-watermarks")
    try:
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=WAIT_S)[1]
                for p in range(PARTITIONS)}
    finally:
        c.close()


def test_group_resumes_at_committed_offsets_after_restart(
    kcsim_server: Any, unique_name: Callable[[str], str]
) -> None:
    topic, group = unique_name("orders"), unique_name("billing")
    bootstrap = kcsim_server.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(WAIT_S)
    producer = Producer({"bootstrap.servers": bootstrap, **QUIET})
    for p in range(PARTITIONS):
        for i in range(PER_PARTITION):
            producer.produce(topic, f"{p}-{i}".encode(), partition=p)
    assert producer.flush(WAIT_S) == 0

    first = consumer(bootstrap, group)
    try:
        first.subscribe([topic])
        wanted = sum(CONSUME_FIRST.values())
        poll_until(first, lambda got: len(got) >= wanted and
                   all(sum(m.partition() == p for m in got) >= n
                       for p, n in CONSUME_FIRST.items()), "the first consumer's records")
        commits = [TopicPartition(topic, p, n) for p, n in CONSUME_FIRST.items() if n]
        first.commit(offsets=commits, asynchronous=False)
    finally:
        first.close()
    before = group_view(admin, group, topic)
    assert before["listed"] == before["state"] == ConsumerGroupState.EMPTY
    assert before["members"] == 0
    assert before["offsets"] == {(topic, 0): 10, (topic, 1): 25}
    ends_before = log_end_offsets(bootstrap, topic)
    assert ends_before == dict.fromkeys(range(PARTITIONS), PER_PARTITION)

    kcsim_server.restart()

    # A fresh client: librdkafka (2.x) can leave an admin request of a client that saw
    # every broker go away waiting for its coordinator until the request times out.
    admin = AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    assert group_view(admin, group, topic) == before
    assert log_end_offsets(bootstrap, topic) == ends_before
    second = consumer(bootstrap, group)
    try:
        second.subscribe([topic])
        remaining = PARTITIONS * PER_PARTITION - sum(CONSUME_FIRST.values())
        got = poll_until(second, lambda got: len(got) >= remaining,
                         "the records after the committed offsets")
    finally:
        second.close()
    first_seen: dict[int, int] = {}
    for m in got:
        first_seen.setdefault(m.partition(), m.offset())
    assert first_seen == CONSUME_FIRST
    assert sorted((m.partition(), m.value()) for m in got) == sorted(
        (p, f"{p}-{i}".encode()) for p in range(PARTITIONS)
        for i in range(CONSUME_FIRST[p], PER_PARTITION))
