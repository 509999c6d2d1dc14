"""confluent-kafka group members on their own threads, and a steady producer, for group tests.

A `Member` polls in a thread (a librdkafka consumer belongs to one thread) and
records what a test wants to see from outside: its assignment, every record
(partition, offset, arrival time) and errors. A `SteadyProducer` keeps writing
to every partition of a topic so that a paused partition visibly stops.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, KafkaError, Producer

if TYPE_CHECKING:
    from collections.abc import Callable

QUIET = {"log_level": 0}


@dataclass(frozen=True)
class Seen:
    partition: int
    offset: int
    at: float
    value: bytes | None


class Member:
    def __init__(self, bootstrap: str, group: str, topic: str, protocol: str,
                 name: str, commit_every_s: float | None = None, **settings: Any) -> None:
        self.name = name
        self.topic = topic
        self.commit_every_s = commit_every_s
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "group.protocol": protocol,
            "client.id": name, "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 50, **QUIET, **settings})
        self.assignment: frozenset[int] = frozenset()
        self.records: list[Seen] = []
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.commit_now = threading.Event()
        self.committed = threading.Event()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> Member:
        self.consumer.subscribe([self.topic])
        self.thread.start()
        return self

    def _run(self) -> None:
        last_commit = time.monotonic()
        try:
            while not self.stop.is_set():
                msg = self.consumer.poll(0.05)
                if msg is not None:
                    if msg.error() is None:
                        with self.lock:
                            self.records.append(Seen(msg.partition(), msg.offset(),
                                                     time.monotonic(), msg.value()))
                    elif msg.error().code() != KafkaError._PARTITION_EOF:
                        self.errors.append(str(msg.error()))
                self.assignment = frozenset(tp.partition for tp in self.consumer.assignment())
                due = (self.commit_every_s is not None
                       and time.monotonic() - last_commit >= self.commit_every_s)
                if self.commit_now.is_set() or due:
                    self._commit()
                    last_commit = time.monotonic()
        finally:
            self.consumer.close()

    def _commit(self) -> None:
        try:
            if self.consumer.assignment():
                self.consumer.commit(asynchronous=False)
        except Exception as exc:
            if "NO_OFFSET" not in str(exc):
                self.errors.append(f"commit: {exc}")
        if self.commit_now.is_set():
            self.commit_now.clear()
            self.committed.set()

    def commit(self, timeout: float = 15.0) -> None:
        self.committed.clear()
        self.commit_now.set()
        assert self.committed.wait(timeout), f"{self.name} did not commit"

    def seen(self) -> list[Seen]:
        with self.lock:
            return list(self.records)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(30)


class SteadyProducer:
    """One record per partition every `interval_s`, values numbered per partition."""

    def __init__(self, bootstrap: str, topic: str, partitions: int,
                 interval_s: float = 0.05) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                                  "message.timeout.ms": 60_000, **QUIET})
        self.topic = topic
        self.partitions = partitions
        self.interval_s = interval_s
        self.sent = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="producer", daemon=True)

    def start(self) -> SteadyProducer:
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self.stop.is_set():
            for p in range(self.partitions):
                self.producer.produce(self.topic, f"{p}-{self.sent}".encode(), partition=p)
            self.sent += 1
            self.producer.poll(0)
            time.sleep(self.interval_s)
        self.producer.flush(30)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(60)


def wait_for(check: Callable[[], Any], what: str, timeout: float = 30.0,
              interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


_CHILD = """
import sys
from confluent_kafka import Consumer
bootstrap, group, topic, protocol, name = sys.argv[1:]
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": protocol,
                     "client.id": name, "enable.auto.commit": False, "log_level": 0})
consumer.subscribe([topic])
while True:
    consumer.poll(0.1)
"""


class ChildMember:
    """A confluent-kafka member in a child process, so that a test can kill it: it stops
    without leaving the group, as a crashed consumer does."""

    def __init__(self, bootstrap: str, group: str, topic: str, protocol: str, name: str) -> None:
        self.name = name
        self.proc = subprocess.Popen([sys.executable, "-c", _CHILD, bootstrap, group, topic,
                                      protocol, name], stdin=subprocess.DEVNULL)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
