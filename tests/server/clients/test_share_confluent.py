"""Share groups (KIP-932) with confluent-kafka's ShareConsumer (librdkafka).

The scenarios of test_share_java.py, run by librdkafka's share consumer. Each consumer is
an instance on a thread of its own (an instance is not thread-safe; separate instances
are), steered by a policy: what it does with the records it gets (accept, release, reject,
release on the first delivery, or stall: take records and then neither acknowledge nor poll
again). The broker runs in-process (the `kcsim` fixture), so a lock runs out when the test
advances kcsim's clock, never in real time. A share partition starts at the log end when a
member first fetches it (share.auto.offset.reset=latest), so records are produced once the
consumers have fetched.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import AcknowledgeType, Message, Producer, ShareConsumer

from ..durability.wire import Wire

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

pytestmark = pytest.mark.timeout(60)

TOPIC, GROUP = "jobs", "workers"
SHARE_FETCH = 78
LOCK_MS, DELIVERY_LIMIT = 30_000, 5  # Kafka's defaults
WAIT_S = 20.0
ACK_TYPES = {"accept": AcknowledgeType.ACCEPT, "release": AcknowledgeType.RELEASE,
             "reject": AcknowledgeType.REJECT}


def action(policy: str, delivery: int) -> str:
    """What `policy` does with a record on its `delivery`-th delivery."""
    if policy == "release-first":
        return "release" if delivery <= 1 else "accept"
    return policy


class Worker:
    """One ShareConsumer polling on its own thread, and the records it reported."""

    def __init__(self, bootstrap: str, name: str, mode: str,
                 changed: threading.Condition) -> None:
        self.name, self.changed, self.explicit = name, changed, mode == "explicit"
        self.policy = "accept"
        self.seen: list[dict[str, Any]] = []  # offset, delivery, action
        self.acked: list[tuple[set[int], str | None]] = []  # answered: offsets, failure
        self.errors: list[str] = []
        self.stalled = False
        self.closing = threading.Event()
        self.consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                                       "client.id": name, "share.acknowledgement.mode": mode})
        self.consumer.set_acknowledgement_commit_callback(self._answered)
        self.consumer.subscribe([TOPIC])
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while not self.closing.is_set():
                if self.stalled:
                    self.closing.wait(0.05)
                else:
                    self._take(self.consumer.poll(0.1))
        except Exception as exc:  # shown by Share.wait
            self._report(errors=[repr(exc)])
        finally:
            self.consumer.close()

    def _take(self, messages: Iterable[Message]) -> None:
        policy = self.policy  # read after the poll: what the test said before producing
        records = [m for m in messages if m.error() is None]
        errors = [str(m.error()) for m in messages if m.error() is not None]
        actions = [action(policy, m.delivery_count() or -1) for m in records]
        stall = "stall" in actions
        for m, act in zip(records, actions, strict=True):
            if stall:
                continue  # held: neither acknowledged nor polled again
            if self.explicit:
                self.consumer.acknowledge(m, ACK_TYPES[act])
        seen = [{"offset": m.offset(), "delivery": m.delivery_count(),
                 "action": "stall" if stall else act if self.explicit else "implicit"}
                for m, act in zip(records, actions, strict=True)]
        self._report(seen=seen, errors=errors, stalled=stall)
        if records and not stall:
            outcome = self.consumer.commit_sync(WAIT_S)
            self._report(errors=[str(e) for e in outcome.values() if e is not None])

    def _answered(self, offsets: dict[Any, set[int]], exc: Exception | None) -> None:
        done = set().union(*offsets.values()) if offsets else set()
        with self.changed:
            self.acked.append((done, None if exc is None else str(exc)))
            self.changed.notify_all()

    def _report(self, *, seen: Sequence[dict[str, Any]] = (), errors: Sequence[str] = (),
                stalled: bool = False) -> None:
        with self.changed:
            self.seen += seen
            self.errors += errors
            self.stalled |= stalled
            self.changed.notify_all()

    def tell(self, policy: str) -> None:
        self.policy = policy

    def close(self) -> None:
        self.closing.set()
        self.thread.join(WAIT_S)


class Share:
    """kcsim, the topic, and the workers started."""

    def __init__(self, kcsim: Any) -> None:
        self.kcsim = kcsim
        host, port = kcsim.bootstrap.rsplit(":", 1)
        with Wire(host, int(port)) as wire:
            wire.create_topic(TOPIC, 1)
        self.changed = threading.Condition()
        self.workers: list[Worker] = []

    def start(self, n: int, mode: str = "explicit") -> list[Worker]:
        """`n` workers, returned once each has fetched and the share partition exists."""
        since = self.kcsim.last_request_seq()
        new = [Worker(self.kcsim.bootstrap, f"w{len(self.workers) + i}", mode, self.changed)
               for i in range(n)]
        self.workers += new
        for w in new:
            self.kcsim.wait_for_request(SHARE_FETCH, client_id=w.name, since=since,
                                        timeout=WAIT_S)
        self.kcsim.wait_for_share_partition(GROUP, TOPIC, timeout=WAIT_S)
        return new

    def produce(self, count: int) -> None:
        producer = Producer({"bootstrap.servers": self.kcsim.bootstrap})
        for i in range(count):
            producer.produce(TOPIC, value=f"job-{i}".encode(), partition=0)
        assert producer.flush(WAIT_S) == 0

    def wait(self, what: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + WAIT_S
        with self.changed:
            while not ready():
                left = deadline - time.monotonic()
                errors = [f"{w.name}: {e}" for w in self.workers for e in w.errors]
                if left <= 0 or errors:
                    raise AssertionError(f"{what}: not so after {WAIT_S:.0f}s; errors "
                                         f"{errors}; seen {self.seen()}")
                self.changed.wait(min(left, 0.5))

    def seen(self) -> list[tuple[str, dict[str, Any]]]:
        with self.changed:
            return [(w.name, e) for w in self.workers for e in w.seen]

    def acked(self) -> Counter[int]:
        """How many times the broker answered an acknowledgement of each offset, without
        a failure (any failure is listed in the assertion's message)."""
        with self.changed:
            answers = [a for w in self.workers for a in w.acked]
        assert [f for _, f in answers if f is not None] == []
        return Counter(o for offsets, _ in answers for o in offsets)

    def close(self) -> None:
        for w in self.workers:
            w.closing.set()
        for w in self.workers:
            w.close()


@pytest.fixture
def share(kcsim: Any) -> Iterator[Share]:
    s = Share(kcsim)
    yield s
    s.close()


def accepted(share: Share) -> Counter[int]:
    return Counter(e["offset"] for _, e in share.seen() if e["action"] in ("accept", "implicit"))


def test_three_share_consumers_split_300_records(share: Share, kcsim: Any) -> None:
    share.start(3)
    share.produce(300)
    share.wait("all 300 accepted", lambda: set(accepted(share)) == set(range(300)))
    assert max(accepted(share).values()) == 1  # none acknowledged twice
    assert all(e["delivery"] == 1 for _, e in share.seen())
    kcsim.wait_for_share_partition(GROUP, TOPIC, start_offset=300, timeout=WAIT_S)
    share.wait("every acknowledgement answered", lambda: set(share.acked()) == set(range(300)))
    assert max(share.acked().values()) == 1


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
    assert stalled.stalled
    kcsim.wait_for_share_partition(GROUP, TOPIC, acquired=10, timeout=WAIT_S)
    (other,) = share.start(1)
    kcsim.clock.freeze()  # the locks run out when the clock is advanced, not in real time
    try:
        kcsim.clock.advance(LOCK_MS)
        share.wait("the other took them over", lambda: set(accepted(share)) == set(range(10)))
    finally:
        kcsim.clock.resume()
    assert {(e["offset"], e["delivery"]) for e in other.seen} == {(o, 2) for o in range(10)}


def test_a_record_always_released_is_archived_at_the_delivery_limit(
        share: Share, kcsim: Any) -> None:
    (worker,) = share.start(1)
    worker.tell("release")
    share.produce(1)
    share.wait("delivered up to the limit", lambda: len(worker.seen) >= DELIVERY_LIMIT)
    kcsim.wait_for_share_partition(GROUP, TOPIC, start_offset=1, timeout=WAIT_S)  # archived
    worker.tell("accept")
    share.produce(1)  # the next record comes; the archived one never does again
    share.wait("the next record accepted", lambda: 1 in accepted(share))
    assert [e["delivery"] for e in worker.seen if e["offset"] == 0] == list(
        range(1, DELIVERY_LIMIT + 1))


def test_reject_archives_at_once(share: Share, kcsim: Any) -> None:
    (worker,) = share.start(1)
    worker.tell("reject")
    share.produce(3)
    share.wait("rejected", lambda: len(worker.seen) == 3)
    kcsim.wait_for_share_partition(GROUP, TOPIC, start_offset=3, timeout=WAIT_S)  # archived
    worker.tell("accept")
    share.produce(1)
    share.wait("the next record accepted", lambda: 3 in accepted(share))
    assert [(e["offset"], e["delivery"], e["action"]) for e in worker.seen] == [
        (0, 1, "reject"), (1, 1, "reject"), (2, 1, "reject"), (3, 1, "accept")]


def test_implicit_acknowledgement(share: Share, kcsim: Any) -> None:
    share.start(2, mode="implicit")
    share.produce(50)
    share.wait("all 50 acknowledged", lambda: set(accepted(share)) == set(range(50)))
    assert max(accepted(share).values()) == 1
    kcsim.wait_for_share_partition(GROUP, TOPIC, start_offset=50, timeout=WAIT_S)
    share.wait("every acknowledgement answered", lambda: set(share.acked()) == set(range(50)))
    assert max(share.acked().values()) == 1
