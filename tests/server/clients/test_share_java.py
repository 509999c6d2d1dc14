"""Share groups (KIP-932) with Java's KafkaShareConsumer from kafka-clients 4.4.

Each consumer is a JVM (java_share/ShareWorker.java) steered through its stdin: what it
does with the records it gets (accept, release, reject, release on the first delivery,
or stall: take records and then go quiet), printing one JSON line per record with its
offset, delivery count and what it did. The scenarios are sharekit's, which
test_share_confluent.py runs with confluent-kafka's ShareConsumer.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.admin import AdminClient, TopicPartition

from . import javaclient, sharekit
from .sharekit import GROUP, TOPIC, accepted

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

pytestmark = [pytest.mark.java, pytest.mark.timeout(240)]

SOURCES = Path(__file__).resolve().parent / "java_share"
WAIT_S = 60.0


def share_classpath() -> str:
    javaclient.skip_without_java()
    return javaclient.classpath(javaclient.MAVEN_CLIENT, source_dir=SOURCES)


class Worker:
    """One KafkaShareConsumer and the records it reported."""

    def __init__(self, bootstrap: str, name: str, mode: str, log: Path,
                 changed: threading.Condition) -> None:
        self.name, self.changed, self.log = name, changed, log
        self.seen: list[dict[str, Any]] = []
        self.acked: list[tuple[Collection[int], str | None]] = []  # answered: offsets, failure
        self.errors: list[str] = []
        self.stalled = self.ended = False
        cmd = ["java", "-Xshare:auto", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-cp", share_classpath(), "ShareWorker", bootstrap, GROUP, TOPIC, mode,
               f"client.id={name}"]
        with open(log, "a") as err:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=err, text=True, bufsize=1)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if not line.startswith("{"):
                continue
            event = json.loads(line)
            with self.changed:
                if "offset" in event:
                    self.seen.append(event)
                if "acked" in event:
                    self.acked.append((event["acked"], event["failed"]))
                self.stalled |= "stalled" in event
                if "error" in event:
                    self.errors.append(event["error"])
                self.changed.notify_all()
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    def tell(self, policy: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(policy + "\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.tell("close")
                self.proc.wait(20)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


class JavaShare(sharekit.Share[Worker]):
    """The scenarios' Share, whose failed waits show the JVMs' logs."""

    def details(self) -> str:
        logs = "\n".join(f"{w.name}: {w.log.read_text()[-3000:]}" for w in self.workers)
        return f"{super().details()}\n{logs}"


@pytest.fixture
def share(kcsim: Any, tmp_path: Path) -> Iterator[JavaShare]:
    s = JavaShare(kcsim, lambda name, mode, changed: Worker(
        kcsim.bootstrap, name, mode, tmp_path / f"{name}.log", changed), WAIT_S)
    yield s
    s.close()


def test_three_share_consumers_split_300_records(share: JavaShare) -> None:
    sharekit.three_consumers_split_300_records(share)


def test_a_released_record_is_delivered_again(share: JavaShare) -> None:
    sharekit.a_released_record_is_delivered_again(share)


def test_a_stalled_consumer_s_records_go_to_the_others_once_its_lock_runs_out(
        share: JavaShare) -> None:
    sharekit.a_stalled_consumer_s_records_go_to_another_once_its_lock_runs_out(share)


def test_a_record_always_released_is_archived_at_the_delivery_limit(share: JavaShare) -> None:
    sharekit.a_record_always_released_is_archived_at_the_delivery_limit(share)


def test_reject_archives_at_once(share: JavaShare) -> None:
    sharekit.reject_archives_at_once(share)


def test_implicit_acknowledgement(share: JavaShare) -> None:
    sharekit.implicit_acknowledgement(share)


@pytest.mark.kcsim(brokers=3, offsets_topic_num_partitions=3)
def test_three_share_consumers_on_three_brokers(share: JavaShare) -> None:
    """The group's coordinator and the partition's leader are nodes of their own."""
    sharekit.three_consumers_split_300_records(share)


def test_altering_the_start_offset_of_the_empty_group_redelivers_from_there(
        share: JavaShare, kcsim: Any) -> None:
    """AlterShareGroupOffsets to an earlier offset while no member is in the group: a
    consumer that joins afterwards gets every record from there on, as first deliveries."""
    (first,) = share.start(1)
    share.produce(6)
    share.wait("all 6 accepted", lambda: set(accepted(share)) == set(range(6)))
    first.close()  # leaves the group: it is empty now
    with AdminClient(kcsim.bootstrap, timeout=WAIT_S) as admin:
        outcome = admin.alter_share_group_offsets(GROUP, {TopicPartition(TOPIC, 0): 2})
        assert outcome.error(TopicPartition(TOPIC, 0)) is None
    (second,) = share.start(1)
    share.wait("2-5 accepted again", lambda: len(second.seen) == 4)
    assert [(e["offset"], e["delivery"]) for e in second.seen] == [(o, 1) for o in range(2, 6)]
