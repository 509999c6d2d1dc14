"""Real-client helpers for the admin tests: topics with known records, groups with known
offsets (confluent-kafka consumers), and running `kcsim consumer-groups` as a subprocess."""

from __future__ import annotations

import functools
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient as KafkaAdmin
from confluent_kafka.admin import NewTopic

from kcsim.admin import AdminClient, PauseApiKeys

from ..conftest import REPO

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

QUIET = {"log_level": 0}
CONSUMER_GROUP_HEARTBEAT = 68
WAIT_S = 20.0


def create_topic(bootstrap: str, name: str, partitions: int = 3) -> None:
    admin = KafkaAdmin({"bootstrap.servers": bootstrap, **QUIET})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(WAIT_S)


def produce(
    bootstrap: str, topic: str, per_partition: int, partitions: int = 3,
    timestamp: Callable[[int, int], int] | None = None,
) -> None:
    """`per_partition` records in each partition; `timestamp(partition, i)` in ms if given."""
    producer = Producer({"bootstrap.servers": bootstrap, **QUIET})
    for p in range(partitions):
        for i in range(per_partition):
            extra = {"timestamp": timestamp(p, i)} if timestamp else {}
            producer.produce(topic, f"{p}-{i}".encode(), partition=p, **extra)
    assert producer.flush(WAIT_S) == 0


def consumer(bootstrap: str, group: str, **settings: Any) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                     "enable.auto.commit": False, "auto.offset.reset": "earliest",
                     **QUIET, **settings})


def _wait_for_assignment(c: Consumer, topic: str, received: list[Any] | None = None) -> list[Any]:
    """Subscribe and poll until partitions are assigned; records polled meanwhile go to
    `received` (a poll may return one right after the assignment)."""
    assigned: list[Any] = []
    c.subscribe([topic], on_assign=lambda _c, parts: assigned.extend(parts))
    deadline = time.monotonic() + WAIT_S
    while not assigned:
        assert time.monotonic() < deadline, "the consumer was never assigned partitions"
        msg = c.poll(0.05)
        if msg is not None and not msg.error() and received is not None:
            received.append(msg)
    return assigned


def commit_as_member(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Join `group` with a subscribing consumer, commit these offsets, leave: an Empty group."""
    c = consumer(bootstrap, group)
    try:
        _wait_for_assignment(c, topic)
        c.commit(offsets=[KafkaTopicPartition(topic, p, o) for p, o in offsets.items()],
                 asynchronous=False)
    finally:
        c.close()


def committed(bootstrap: str, group: str, topic: str, partitions: int = 3) -> dict[int, int | None]:
    """What a real consumer of `group` sees as committed (None: nothing committed)."""
    c = consumer(bootstrap, group)
    try:
        found = c.committed([KafkaTopicPartition(topic, p) for p in range(partitions)],
                            timeout=WAIT_S)
    finally:
        c.close()
    return {tp.partition: tp.offset if tp.offset >= 0 else None for tp in found}


def first_offsets_consumed(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    """The offset a real consumer of `group` starts at, per partition that has records left."""
    c = consumer(bootstrap, group)
    seen: dict[int, int] = {}
    try:
        early: list[Any] = []
        assigned = _wait_for_assignment(c, topic, early)
        for msg in early:
            seen.setdefault(msg.partition(), msg.offset())
        deadline = time.monotonic() + WAIT_S
        while len(seen) < len(assigned) and time.monotonic() < deadline:
            msg = c.poll(0.1)
            if msg is not None and not msg.error():
                seen.setdefault(msg.partition(), msg.offset())
    finally:
        c.close()
    return seen


class RunningGroup:
    """A consumer that stays in its group (Stable) while the test runs."""

    def __init__(self, bootstrap: str, group: str, topic: str, protocol: str = "classic") -> None:
        self.consumer = consumer(bootstrap, group, **{"client.id": "cli-test",
                                                      "group.protocol": protocol})
        self.topic = topic
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def start(self, offsets: dict[int, int]) -> RunningGroup:
        _wait_for_assignment(self.consumer, self.topic)
        self.consumer.commit(offsets=[KafkaTopicPartition(self.topic, p, o)
                                      for p, o in offsets.items()], asynchronous=False)
        self.thread.start()
        return self

    def _poll(self) -> None:
        while not self.stop.is_set():
            self.consumer.poll(0.05)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.consumer.close()


@contextmanager
def running_group(bootstrap: str, group: str, topic: str, offsets: dict[int, int],
                  protocol: str = "classic") -> Iterator[RunningGroup]:
    """A Stable group of one consumer that committed `offsets` and keeps polling."""
    running = RunningGroup(bootstrap, group, topic, protocol).start(offsets)
    try:
        yield running
    finally:
        running.close()


def run_cli(bootstrap: str, *args: str, timeout_ms: int = 10000) -> subprocess.CompletedProcess[str]:
    """`kcsim consumer-groups --bootstrap-server B ARGS`, as an operator runs it."""
    cmd = [sys.executable, "-m", "kcsim", "consumer-groups", "--bootstrap-server", bootstrap,
           "--timeout", str(timeout_ms), *args]
    return subprocess.run(cmd, check=False, cwd=REPO, capture_output=True, text=True,
                          timeout=60)


@functools.cache
def kcsim_api_versions() -> dict[int, tuple[int, int]]:
    """What a kcsim of this tree advertises in ApiVersions (asked of a throwaway server)."""
    from kcsim.server.embedded import EmbeddedServer

    with EmbeddedServer(port=0) as server, AdminClient(server.bootstrap, timeout=10) as admin:
        return admin.api_versions()


def kcsim_serves_pause() -> bool:
    """Whether kcsim advertises KIP-1249's three RPCs (under their default keys)."""
    return all(key in kcsim_api_versions() for key in PauseApiKeys().all())


def kcsim_serves_consumer_groups() -> bool:
    """Whether kcsim serves KIP-848 (ConsumerGroupHeartbeat), which KIP-1249 pauses build on."""
    return CONSUMER_GROUP_HEARTBEAT in kcsim_api_versions()


needs_pause_api = pytest.mark.skipif(
    not kcsim_serves_pause(),
    reason="kcsim does not advertise PausePartitions/ResumePartitions/ListPausedPartitions "
    "(KIP-1249, keys 1000-1002) in ApiVersions yet",
)
