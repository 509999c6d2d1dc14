"""quixstreams with processing_guarantee="exactly-once" (transactions, read_committed,
offsets sent to the transaction, a changelog for its state): a stateful count per key is
killed half-way, restarts, and every count comes out exactly once.

The application runs in a virtualenv of its own under `<repo>/.cache/quix-venv`, made
on first use: quixstreams pins a confluent-kafka older than the one the other client
tests run on, so the two cannot share the project's environment."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from .txnkit import read_values

pytestmark = [pytest.mark.timeout(600)]
APP = Path(__file__).parent / "apps" / "quix_count.py"
VENV = Path(__file__).resolve().parents[3] / ".cache" / "quix-venv"
QUIXSTREAMS = "quixstreams>=3.20,<4"
KEYS = 5
MESSAGES = 2000


def counts_by_key(bootstrap: str, topic: str) -> dict[str, list[int]]:
    """Every count a read_committed consumer sees, in order, by key."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"r-{time.monotonic_ns()}",
                         "isolation.level": "read_committed", "enable.partition.eof": True,
                         "enable.auto.commit": False})
    out: dict[str, list[int]] = {}
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is None:
                continue
            if m.error() is not None:
                if m.error().code() == KafkaError._PARTITION_EOF:
                    return out
                raise AssertionError(m.error())
            out.setdefault(m.key().decode(), []).append(json.loads(m.value())["count"])
    finally:
        consumer.close()
    raise AssertionError("the output was not read to its end")


@pytest.fixture(scope="session")
def quix_python() -> str:
    """The interpreter of the quixstreams virtualenv, made (once) if missing."""
    python = VENV / "bin" / "python"
    ready = VENV / ".installed"
    if not ready.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True,
                       timeout=120)
        pip = subprocess.run([str(python), "-m", "pip", "install", "-q", QUIXSTREAMS],
                             capture_output=True, text=True, timeout=600)
        if pip.returncode != 0:
            reason = f"quixstreams could not be installed: {pip.stderr.strip()[-600:]}"
            print(f"\nSKIPPED LOUDLY: {reason}", file=sys.stderr)
            pytest.skip(reason)
        ready.touch()
    return str(python)


def start(python: str, bootstrap: str, group: str, source: str, sink: str, state: Path,
          log: Path, hold_after: int | None = None) -> subprocess.Popen[bytes]:
    hold = [] if hold_after is None else [str(hold_after)]
    with open(log, "ab") as out:
        return subprocess.Popen([python, str(APP), bootstrap, group, source, sink,
                                 str(state), *hold], stdout=out, stderr=subprocess.STDOUT)


def test_a_killed_stateful_count_restarts_and_counts_each_message_once(
        kcsim: Any, unique_name: Any, tmp_path: Path, quix_python: str) -> None:
    bootstrap = kcsim.bootstrap
    source, sink, group = unique_name("words"), unique_name("counts"), unique_name("g")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(source, 2, 1), NewTopic(sink, 1, 1)]).values():
        future.result(10)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(MESSAGES):
        producer.produce(source, key=f"k{i % KEYS}".encode(), value=b"x")
    assert producer.flush(10) == 0
    log = tmp_path / "app.log"
    # The first run stops mid-transaction after half the messages, until it is killed.
    app = start(quix_python, bootstrap, group, source, sink, tmp_path / "state", log,
                hold_after=MESSAGES // 2)
    try:
        deadline = time.monotonic() + 60
        while len(read_values(bootstrap, sink)) < MESSAGES // 5:
            assert app.poll() is None, log.read_text()[-4000:]
            assert time.monotonic() < deadline, "the application produced too little"
            time.sleep(0.2)
        app.send_signal(signal.SIGKILL)
        app.wait(10)
        assert len(read_values(bootstrap, sink)) < MESSAGES, "killed too late to matter"
        # The dead member's session runs out on the broker's clock, not the test's.
        kcsim.clock.advance(46_000)
        app = start(quix_python, bootstrap, group, source, sink, tmp_path / "state", log)
        deadline = time.monotonic() + 90
        while len(read_values(bootstrap, sink)) < MESSAGES:
            assert app.poll() is None, log.read_text()[-4000:]
            assert time.monotonic() < deadline, log.read_text()[-4000:]
            time.sleep(0.5)
    finally:
        app.kill()
        app.wait(10)
    per_key = MESSAGES // KEYS
    assert counts_by_key(bootstrap, sink) == {
        f"k{k}": list(range(1, per_key + 1)) for k in range(KEYS)}
