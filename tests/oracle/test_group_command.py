"""Kafka's kafka-consumer-groups tool gives the same output against kcsim as against Kafka,
and `kcsim consumer-groups` gives Kafka's tool's output for the same commands.

One scenario is built on both brokers with the same names: a 3-partition topic with
10 records per partition (timestamps two hours old, one second apart), an Empty group that
committed 3, 5 and 10, and a Stable group with one running consumer. Every command
then runs against both; the normalised outputs (tests/oracle/groupcommand.py) must be
equal, except where tests/oracle/differences.py lists the difference.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from .differences import allowed_output
from .groupcommand import Ran, kafka_command, kcsim_command, tool_jars
from .kafka import KafkaUnavailable

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from .harness import Endpoint

pytestmark = [pytest.mark.java, pytest.mark.timeout(900)]

PARTITIONS = 3
PER_PARTITION = 10
# Two hours ago, to the second: inside Kafka's retention (older records would be deleted at
# once, moving the log start), and before the `--by-duration PT1H` point.
BASE_MS = (int(time.time()) - 7200) * 1000
EMPTY_COMMITS = {0: 3, 1: 5, 2: 10}
QUIET = {"log_level": 0, "logger": lambda *_: None}


class Scenario:
    """The topic and groups on one broker, and its running consumer."""

    def __init__(self, bootstrap: str, suffix: str) -> None:
        self.bootstrap = bootstrap
        self.topic, self.empty, self.stable = (f"cg-{n}-{suffix}" for n in ("orders", "billing", "shipping"))
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._consume, daemon=True)

    def build(self) -> Scenario:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        admin.create_topics([NewTopic(self.topic, PARTITIONS, 1)])[self.topic].result(30)
        producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 0})
        for p in range(PARTITIONS):
            for i in range(PER_PARTITION):
                producer.produce(self.topic, f"v{i}".encode(), partition=p, timestamp=BASE_MS + i * 1000)
        assert producer.flush(30) == 0
        committer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.empty,
                              "enable.auto.commit": False})
        committer.commit(offsets=[TopicPartition(self.topic, p, o) for p, o in EMPTY_COMMITS.items()],
                         asynchronous=False)
        committer.close()
        self.thread.start()
        assert self.ready.wait(60), f"the consumer of {self.stable} got no assignment"
        return self

    def _consume(self) -> None:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.stable,
                             "client.id": "cg-live", "enable.auto.commit": False,
                             "auto.offset.reset": "earliest", "session.timeout.ms": 30000})
        consumer.subscribe([self.topic])
        try:
            while not self.stop.is_set():
                consumer.poll(0.2)
                if len(consumer.assignment()) == PARTITIONS and not self.ready.is_set():
                    consumer.commit(offsets=[TopicPartition(self.topic, p, 8 + p)
                                             for p in range(PARTITIONS)], asynchronous=False)
                    self.ready.set()
        finally:
            consumer.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(30)


@pytest.fixture(scope="module")
def tools() -> None:
    try:
        tool_jars()
    except KafkaUnavailable as exc:
        pytest.skip(f"kafka-tools unavailable, NOT RUN: {exc}")


@pytest.fixture
def scenarios(twin: Endpoint, kafka: Endpoint, tools: None) -> Iterator[tuple[Scenario, Scenario]]:
    suffix = uuid.uuid4().hex[:8]
    built = [Scenario(f"{e.host}:{e.port}", suffix) for e in (twin, kafka)]
    try:
        for s in built:
            s.build()
        yield built[0], built[1]
    finally:
        for s in built:
            s.close()


def _commands(s: Scenario, tmp: Path) -> list[tuple[str, list[str]]]:
    """(name, arguments) in order; later ones see what earlier ones changed."""
    (tmp / "plan.csv").write_text(f"{s.topic},0,2\n{s.topic},2,7\n")
    g, t = ["--group", s.empty], ["--topic", s.topic]
    reset = ["--reset-offsets", *g, *t]
    when = datetime.fromtimestamp((BASE_MS + 4000) / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.000")
    return [
        ("list", ["--list"]),
        ("list-state", ["--list", "--state"]),
        ("list-state-empty", ["--list", "--state", "Empty"]),
        ("list-type", ["--list", "--type"]),
        ("describe", ["--describe", *g]),
        ("describe-offsets-stable", ["--describe", "--offsets", "--group", s.stable]),
        ("describe-members-empty", ["--describe", "--members", *g]),
        ("describe-members-stable", ["--describe", "--members", "--group", s.stable]),
        ("describe-members-verbose", ["--describe", "--members", "--verbose", "--group", s.stable]),
        ("describe-state", ["--describe", "--state", *g]),
        ("describe-state-stable", ["--describe", "--state", "--group", s.stable]),
        ("describe-state-verbose", ["--describe", "--state", "--verbose", "--group", s.stable]),
        ("describe-unknown", ["--describe", "--group", s.empty + "-none"]),
        ("reset-earliest", [*reset, "--to-earliest", "--dry-run"]),
        ("reset-latest", [*reset, "--to-latest", "--dry-run"]),
        ("reset-offset", [*reset, "--to-offset", "4", "--dry-run"]),
        ("reset-shift", [*reset, "--shift-by", "-2", "--dry-run"]),
        ("reset-datetime", [*reset, "--to-datetime", when, "--dry-run"]),
        ("reset-duration", [*reset, "--by-duration", "PT1H", "--dry-run"]),
        ("reset-current", [*reset, "--to-current", "--dry-run"]),
        ("reset-file", ["--reset-offsets", *g, "--from-file", str(tmp / "plan.csv"), "--dry-run"]),
        ("reset-partitions", ["--reset-offsets", *g, "--topic", f"{s.topic}:0,2", "--to-offset", "1",
                              "--dry-run"]),
        ("reset-active", ["--reset-offsets", "--group", s.stable, *t, "--to-earliest", "--execute"]),
        ("reset-execute", [*reset, "--shift-by", "1", "--execute"]),
        ("describe-after-reset", ["--describe", *g]),
        ("reset-file-execute", ["--reset-offsets", *g, "--from-file", str(tmp / "plan.csv"), "--execute"]),
        ("describe-after-file", ["--describe", *g]),
        ("delete-offsets", ["--delete-offsets", *g, "--topic", f"{s.topic}:1"]),
        ("describe-after-delete-offsets", ["--describe", *g]),
        ("delete-active", ["--delete", "--group", s.stable]),
        ("delete", ["--delete", *g]),
        ("delete-again", ["--delete", *g]),
    ]


def _mine(name: str, ran: Ran, s: Scenario) -> Ran:
    """Listings without other tests' groups (the brokers are shared across the session), and
    listings and reset plans in sorted order (Kafka's tool prints them in hash order)."""
    if name.startswith("reset"):
        warns = sorted(line for line in ran.out if line.startswith("Warn:"))
        table = sorted(line for line in ran.out if not line.startswith(("GROUP", "Warn:")))
        head = [line for line in ran.out if line.startswith("GROUP")]
        return Ran(ran.code, (*warns, *head, *table), ran.err)
    if not name.startswith("list"):
        return ran
    suffix = s.topic.rsplit("-", 1)[1]
    head = [line for line in ran.out if line.startswith("GROUP")]
    return Ran(ran.code, (*head, *sorted(line for line in ran.out if suffix in line)), ran.err)


def _run_all(run: Callable[..., Ran], s: Scenario, tmp: Path) -> dict[str, Ran]:
    return {name: _mine(name, run(s.bootstrap, *args, cwd=tmp), s) for name, args in _commands(s, tmp)}


def _differences(tool: str, ours: dict[str, Ran], theirs: dict[str, Ran], s: Scenario) -> list[str]:
    found = []
    for name, mine in ours.items():
        other = theirs[name]
        mine_text, other_text = _text(mine, s), _text(other, s)
        if mine_text != other_text and not allowed_output(tool, name):
            found.append(f"--- {name} (kcsim side)\n{mine_text}\n--- {name} (Kafka)\n{other_text}")
    return found


def _text(ran: Ran, s: Scenario) -> str:
    lines = [f"exit {ran.code}", *ran.out, "[stderr]", *ran.err]
    return "\n".join(lines)


def test_kafka_tool_output_is_the_same_against_kcsim(scenarios: Any, tmp_path: Path) -> None:
    ours, theirs = scenarios
    on_kcsim = _run_all(kafka_command, ours, tmp_path)
    on_kafka = _run_all(kafka_command, theirs, tmp_path)
    found = _differences("kafka-consumer-groups", on_kcsim, on_kafka, ours)
    assert not found, "\n\n".join(found)


def test_kcsim_tool_output_is_kafka_tools_output(scenarios: Any, tmp_path: Path) -> None:
    ours, theirs = scenarios
    from_kcsim = _run_all(kcsim_command, ours, tmp_path)
    from_kafka = _run_all(kafka_command, theirs, tmp_path)
    found = _differences("kcsim consumer-groups", from_kcsim, from_kafka, ours)
    assert not found, "\n\n".join(found)
