"""Share groups (KIP-932) with Java's KafkaShareConsumer from kafka-clients 4.4.

Each consumer is a JVM (java_share/ShareWorker.java) steered through its stdin: what it
does with the records it gets (accept, release, reject, release on the first delivery,
or stall: take records and then go quiet), printing one JSON line per record with its
offset, delivery count and what it did. A share partition starts at the log end when a
member first fetches it (share.auto.offset.reset=latest), so records are produced once
the consumers have fetched.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Producer

from kcsim.admin import AdminClient, TopicPartition

from ..durability.wire import Wire
from . import javaclient

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = [pytest.mark.java, pytest.mark.timeout(240)]

SOURCES = Path(__file__).resolve().parent / "java_share"
TOPIC, GROUP = "jobs", "workers"
SHARE_FETCH = 78
LOCK_MS, DELIVERY_LIMIT = 30_000, 5  # Kafka's defaults
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
        self.acked: list[tuple[list[int], str | None]] = []  # answered: offsets, failure
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


class Share:
    """kcsim, the topic, and the workers started."""

    def __init__(self, kcsim: Any, tmp_path: Path) -> None:
        self.kcsim, self.tmp_path = kcsim, tmp_path
        host, port = kcsim.bootstrap.rsplit(":", 1)
        with Wire(host, int(port)) as wire:
            wire.create_topic(TOPIC, 1)
        self.changed = threading.Condition()
        self.workers: list[Worker] = []

    def start(self, n: int, mode: str = "explicit") -> list[Worker]:
        """`n` workers, returned once each has fetched (the share partition exists)."""
        since = self.kcsim.last_request_seq()
        new = [Worker(self.kcsim.bootstrap, f"w{len(self.workers) + i}", mode,
                      self.tmp_path / f"w{len(self.workers) + i}.log", self.changed)
               for i in range(n)]
        self.workers += new
        for w in new:
            self.kcsim.wait_for_request(SHARE_FETCH, client_id=w.name, since=since,
                                        timeout=WAIT_S)
        return new

    def produce(self, count: int) -> None:
        producer = Producer({"bootstrap.servers": self.kcsim.bootstrap})
        for i in range(count):
            producer.produce(TOPIC, value=f"job-{i}".encode(), partition=0)
        assert producer.flush(30) == 0

    def wait(self, what: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + WAIT_S
        with self.changed:
            while not ready():
                left = deadline - time.monotonic()
                errors = [e for w in self.workers for e in w.errors]
                if left <= 0 or errors:
                    logs = "\n".join(f"{w.name}: {w.log.read_text()[-3000:]}"
                                     for w in self.workers)
                    raise AssertionError(f"{what}: not so after {WAIT_S:.0f}s; errors "
                                         f"{errors}\n{logs}")
                self.changed.wait(min(left, 0.5))

    def seen(self) -> list[tuple[str, dict[str, Any]]]:
        with self.changed:
            return [(w.name, e) for w in self.workers for e in w.seen]

    def close(self) -> None:
        for w in self.workers:
            w.close()


@pytest.fixture
def share(kcsim: Any, tmp_path: Path) -> Iterator[Share]:
    s = Share(kcsim, tmp_path)
    yield s
    s.close()


def accepted(share: Share) -> Counter[int]:
    return Counter(e["offset"] for _, e in share.seen() if e["action"] in ("accept", "implicit"))


def test_three_share_consumers_split_300_records(share: Share) -> None:
    share.start(3)
    share.produce(300)
    share.wait("all 300 accepted", lambda: set(accepted(share)) == set(range(300)))
    assert max(accepted(share).values()) == 1  # none acknowledged twice
    assert all(e["delivery"] == 1 for _, e in share.seen())


def test_a_released_record_is_delivered_again(share: Share) -> None:
    (worker,) = share.start(1)
    worker.tell("release-first")
    share.produce(5)
    share.wait("each record accepted on its second delivery",
               lambda: set(accepted(share)) == set(range(5)))
    deliveries = sorted((e["offset"], e["delivery"], e["action"]) for _, e in share.seen())
    assert deliveries == [(o, d, a) for o in range(5)
                          for d, a in ((1, "release"), (2, "accept"))]


def test_a_stalled_consumer_s_records_go_to_the_others_once_its_lock_runs_out(
        share: Share, kcsim: Any) -> None:
    (stalled,) = share.start(1)
    stalled.tell("stall")
    share.produce(10)
    share.wait("the stalled consumer took the records", lambda: len(stalled.seen) == 10)
    (other,) = share.start(1)
    kcsim.clock.advance(LOCK_MS)  # no real-time wait
    share.wait("the other took them over", lambda: set(accepted(share)) == set(range(10)))
    assert {(e["offset"], e["delivery"]) for e in other.seen} == {(o, 2) for o in range(10)}


def test_a_record_always_released_is_archived_at_the_delivery_limit(share: Share) -> None:
    (worker,) = share.start(1)
    worker.tell("release")
    share.produce(1)
    share.wait("delivered up to the limit", lambda: len(worker.seen) >= DELIVERY_LIMIT)
    worker.tell("accept")
    share.produce(1)  # the next record comes; the archived one never does again
    share.wait("the next record accepted", lambda: 1 in accepted(share))
    assert [e["delivery"] for e in worker.seen if e["offset"] == 0] == list(
        range(1, DELIVERY_LIMIT + 1))


def test_reject_archives_at_once(share: Share) -> None:
    (worker,) = share.start(1)
    worker.tell("reject")
    share.produce(3)
    share.wait("rejected", lambda: len(worker.seen) == 3)
    worker.tell("accept")
    share.produce(1)
    share.wait("the next record accepted", lambda: 3 in accepted(share))
    assert [(e["offset"], e["action"]) for e in worker.seen] == [
        (0, "reject"), (1, "reject"), (2, "reject"), (3, "accept")]


def test_implicit_acknowledgement(share: Share) -> None:
    share.start(2, mode="implicit")
    share.produce(50)
    share.wait("all 50 acknowledged", lambda: set(accepted(share)) == set(range(50)))
    assert max(accepted(share).values()) == 1


@pytest.mark.kcsim(brokers=3, offsets_topic_num_partitions=3)
def test_three_share_consumers_on_three_brokers(share: Share) -> None:
    """The group's coordinator and the partition's leader are nodes of their own."""
    share.start(3)
    share.produce(300)
    share.wait("all 300 accepted", lambda: set(accepted(share)) == set(range(300)))
    assert max(accepted(share).values()) == 1


def test_altering_the_start_offset_of_the_empty_group_redelivers_from_there(
        share: Share, kcsim: Any) -> None:
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
