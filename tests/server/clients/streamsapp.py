"""A real Kafka Streams 4.4 application steered from a test, and what the tests see of it.

`StreamsApp` runs java_streams/WordCountApp.java (kafka-streams from Maven, compiled on
demand like the other Java sources) in its own JVM: it follows the JSON lines the app
prints (its state, the tasks it owns) so a test can wait on them, and closes or kills it.
`WordFeed` writes lines of words to chosen input partitions and keeps the exact counts
they must produce; `OutputCounts` reads the output topic with a plain consumer.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from kcsim.protocol.codecs import request_class
from tests.oracle.kafka import KafkaUnavailable, kafka_streams_jars

from ..durability.wire import Wire
from . import javaclient

if TYPE_CHECKING:
    from collections.abc import Callable

STREAMS_VERSION = os.environ.get("KCSIM_KAFKA_STREAMS_VERSION", "4.4.0")
SOURCES = Path(__file__).resolve().parent / "java_streams"
WAIT_S = 60.0
DESCRIBE = 89

# Settings that keep a test short: commits every 100 ms, no record cache (every update
# reaches the output at once), one stream thread.
FAST = {"commit.interval.ms": "100", "statestore.cache.max.bytes": "0",
        "num.stream.threads": "1"}


def streams_classpath() -> str:
    javaclient.skip_without_java()
    try:
        libs = kafka_streams_jars(STREAMS_VERSION)
    except KafkaUnavailable as exc:
        pytest.skip(f"kafka-streams {STREAMS_VERSION} unavailable: {exc}")
    return javaclient.classpath(source_dir=SOURCES, libs=libs)


class StreamsApp:
    """One instance of the word count; `active`/`standby` are the task ids ("0_1") it owns."""

    def __init__(self, bootstrap: str, app_id: str, topics: tuple[str, str], state_dir: Path,
                 log_path: Path, changed: threading.Condition | None = None,
                 **props: Any) -> None:
        """`changed` is notified on every event; instances that share one can be waited on
        together."""
        self.log_path = log_path
        self.state = "CREATED"
        self.active: set[str] = set()
        self.standby: set[str] = set()
        self.errors: list[str] = []
        self.closed: bool | None = None
        self.ended = False  # stdout closed: the JVM is gone
        self.states: list[str] = []  # every state it went through, in order
        self.owned: list[tuple[frozenset[str], frozenset[str]]] = []  # (active, standby) too
        self._changed = changed or threading.Condition()
        settings = {**FAST, **{k.replace("_", "."): str(v) for k, v in props.items()}}
        cmd = ["java", "-Xshare:auto", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-cp", streams_classpath(), "WordCountApp", bootstrap, app_id, *topics,
               str(state_dir), *(f"{k}={v}" for k, v in settings.items())]
        with open(log_path, "a") as log:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=log, text=True, bufsize=1)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if not line.startswith("{"):  # log4j's console (errors only): to the log
                with open(self.log_path, "a") as log:
                    log.write(line)
                continue
            event = json.loads(line)
            with self._changed:
                if "state" in event:
                    self.state = event["state"]
                    self.states.append(self.state)
                if "active" in event:
                    self.active, self.standby = set(event["active"]), set(event["standby"])
                    self.owned.append((frozenset(self.active), frozenset(self.standby)))
                if "error" in event:
                    self.errors.append(event["error"])
                if "closed" in event:
                    self.closed = event["closed"]
                self._changed.notify_all()
        with self._changed:
            self.ended = True
            self._changed.notify_all()

    def stderr(self) -> str:
        try:
            return self.log_path.read_text()[-8000:]
        except OSError:
            return ""

    def wait(self, what: str, ready: Callable[[], bool], timeout: float = WAIT_S) -> None:
        """Until `ready()` holds (checked on every event the app prints)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not ready():
                left = deadline - time.monotonic()
                if left <= 0 or self.ended:
                    raise AssertionError(
                        f"{what}: not so after {timeout:.0f}s (state {self.state}, active "
                        f"{sorted(self.active)}, errors {self.errors}); stderr:\n{self.stderr()}")
                self._changed.wait(min(left, 0.5))

    def wait_running(self, tasks: int | None = None) -> None:
        """RUNNING, and with `tasks` active tasks when given."""
        self.wait(f"RUNNING with {tasks} tasks", lambda: self.state == "RUNNING" and (
            tasks is None or len(self.active) == tasks))

    def close(self) -> None:
        """Close the application (it leaves its group) and wait for the JVM to exit."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("close\n")
        self.proc.stdin.flush()
        self.wait("closed", lambda: self.closed is not None, timeout=40)
        assert self.closed, f"close timed out; stderr:\n{self.stderr()}"
        assert self.proc.wait(20) == 0

    def kill(self) -> None:
        """SIGKILL: no leave, no commit, no flush."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.kill()


class WordFeed:
    """Lines of words into the input topic, each to the partition named, and the counts
    they add up to. Words carry their partition ("p0-a") so a test can tell them apart."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.topic, self.partitions = topic, partitions
        self.expected: Counter[str] = Counter()
        self.lines = [0] * partitions  # lines sent to each partition
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})

    def poison(self, partition: int) -> None:
        """The line that makes the application's processing throw."""
        self.producer.produce(self.topic, value=b"poison", key=b"k", partition=partition)
        assert self.producer.flush(20) == 0

    @staticmethod
    def line(partition: int, words: str = "a b a c") -> str:
        return " ".join(f"p{partition}-{w}" for w in words.split())

    def send(self, rounds: int, partitions: list[int] | None = None,
             words: str = "a b a c") -> Counter[str]:
        """`rounds` lines per partition; returns what they add to the counts."""
        added: Counter[str] = Counter()
        for _ in range(rounds):
            for p in partitions if partitions is not None else range(self.partitions):
                line = self.line(p, words)
                self.producer.produce(self.topic, value=line.encode(), key=b"k", partition=p)
                added.update(line.split())
                self.lines[p] += 1
        assert self.producer.flush(20) == 0, "the input was not all written"
        self.expected.update(added)
        return added


class OutputCounts:
    """The output topic read from its start by a plain consumer: every value per word in
    order, so a test sees the latest count and whether any count came out twice."""

    def __init__(self, bootstrap: str, topic: str, partitions: int,
                 read_committed: bool = False) -> None:
        self.values: dict[str, list[int]] = {}
        self.partition: dict[str, int] = {}  # the output partition of each word
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": f"counts-{time.monotonic_ns()}",
            "enable.auto.commit": False, "enable.partition.eof": False,
            "isolation.level": "read_committed" if read_committed else "read_uncommitted"})
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])

    def latest(self) -> dict[str, int]:
        return {word: values[-1] for word, values in self.values.items()}

    def poll(self, timeout: float = 0.2) -> None:
        for message in self.consumer.consume(500, timeout):
            error = message.error()
            if error is not None:
                if error.code() in (KafkaError._PARTITION_EOF, KafkaError._TRANSPORT):
                    continue
                raise AssertionError(f"consumer error: {error}")
            count = int.from_bytes(message.value(), "big", signed=True)
            word = message.key().decode()
            self.values.setdefault(word, []).append(count)
            self.partition[word] = message.partition()

    def wait_for(self, expected: Counter[str] | dict[str, int], timeout: float = WAIT_S) -> None:
        """Until the latest count of every word is the expected one (and no other word)."""
        deadline = time.monotonic() + timeout
        while self.latest() != dict(expected):
            if time.monotonic() > deadline:
                wrong = {w: (self.latest().get(w), n) for w, n in expected.items()
                         if self.latest().get(w) != n}
                raise AssertionError(f"counts (seen, expected) differ: {wrong}; "
                                     f"extra {set(self.latest()) - set(expected)}")
            self.poll()

    def close(self) -> None:
        self.consumer.close()


def describe(server: Any, group: str) -> Any:
    """The group as StreamsGroupDescribe v0 answers it."""
    with Wire.to(server) as wire:
        answer = wire.call(DESCRIBE, 0, request_class(DESCRIBE)(group_ids=[group]))
    described = answer.groups[0]
    assert described.error_code == 0, described
    return described


def owners(described: Any) -> dict[str, list[str]]:
    """Task id ("0_1") -> the members that own it active, as the broker describes them."""
    out: dict[str, list[str]] = {}
    for member in described.members:
        for task in task_names(member.assignment.active_tasks):
            out.setdefault(task, []).append(member.member_id)
    return out


def task_names(ids: Any) -> set[str]:
    """Task ids ("0_1") of a describe answer's task lists."""
    return {f"{t.subtopology_id}_{p}" for t in ids for p in t.partitions}
