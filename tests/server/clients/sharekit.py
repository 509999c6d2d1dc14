"""Share-group (KIP-932) scenarios that every share-consumer client runs against kcsim.

A test file gives its client's workers: each one share consumer steered by a policy (what
it does with the records it gets: "accept", "release", "reject", "release-first" to
release a record on its first delivery and accept it later, or "stall" to take records and
then neither acknowledge nor poll again), reporting each record it got (offset, delivery
count, what it did: "implicit" in implicit mode) and each acknowledgement the broker
answered. `Share` holds kcsim, the topic and the workers; the scenarios wait on what the
workers report and on the broker's share partition, with deadlines. A share partition
starts at the log end when a member first fetches it (share.auto.offset.reset=latest), so
records are produced once the consumers have fetched; locks run out when the test advances
kcsim's clock, never in real time.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from confluent_kafka import Producer

from ..durability.wire import Wire

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

TOPIC, GROUP = "jobs", "workers"
SHARE_FETCH = 78
LOCK_MS, DELIVERY_LIMIT = 30_000, 5  # Kafka's defaults


class Worker(Protocol):
    name: str
    seen: list[dict[str, Any]]  # offset, delivery, action
    acked: list[tuple[Collection[int], str | None]]  # answered: offsets, failure
    errors: list[str]
    stalled: bool

    def tell(self, policy: str) -> None: ...

    def close(self) -> None: ...


W = TypeVar("W", bound=Worker)


class Share(Generic[W]):
    """kcsim, the topic, and the workers started; `new_worker(name, mode, changed)` makes
    one, which reports under `changed`."""

    def __init__(self, kcsim: Any, new_worker: Callable[[str, str, threading.Condition], W],
                 wait_s: float) -> None:
        self.kcsim, self.new_worker, self.wait_s = kcsim, new_worker, wait_s
        host, port = kcsim.bootstrap.rsplit(":", 1)
        with Wire(host, int(port)) as wire:
            wire.create_topic(TOPIC, 1)
        self.changed = threading.Condition()
        self.workers: list[W] = []

    def start(self, n: int, mode: str = "explicit") -> list[W]:
        """`n` workers, returned once each has fetched and the share partition exists."""
        since = self.kcsim.last_request_seq()
        new = [self.new_worker(f"w{len(self.workers) + i}", mode, self.changed) for i in range(n)]
        self.workers += new
        for w in new:
            self.kcsim.wait_for_request(SHARE_FETCH, client_id=w.name, since=since,
                                        timeout=self.wait_s)
        self.kcsim.wait_for_share_partition(GROUP, TOPIC, timeout=self.wait_s)
        return new

    def produce(self, count: int) -> None:
        producer = Producer({"bootstrap.servers": self.kcsim.bootstrap})
        for i in range(count):
            producer.produce(TOPIC, value=f"job-{i}".encode(), partition=0)
        assert producer.flush(30) == 0

    def wait(self, what: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + self.wait_s
        with self.changed:
            while not ready():
                left = deadline - time.monotonic()
                errors = [f"{w.name}: {e}" for w in self.workers for e in w.errors]
                if left <= 0 or errors:
                    raise AssertionError(f"{what}: not so after {self.wait_s:.0f}s; errors "
                                         f"{errors}\n{self.details()}")
                self.changed.wait(min(left, 0.5))

    def details(self) -> str:
        """What a failed wait shows besides the errors."""
        return f"seen: {self.seen()}"

    def seen(self) -> list[tuple[str, dict[str, Any]]]:
        with self.changed:
            return [(w.name, e) for w in self.workers for e in w.seen]

    def acked(self) -> Counter[int]:
        """How many times the broker answered an acknowledgement of each offset, once every
        answer so far was without a failure."""
        with self.changed:
            answers = [a for w in self.workers for a in w.acked]
        assert [f for _, f in answers if f is not None] == []
        return Counter(o for offsets, _ in answers for o in offsets)

    def close(self) -> None:
        for w in self.workers:
            w.close()


def accepted(share: Share[Any]) -> Counter[int]:
    return Counter(e["offset"] for _, e in share.seen() if e["action"] in ("accept", "implicit"))


def all_accepted_once(share: Share[Any], count: int) -> None:
    """Every one of the first `count` records accepted, none twice, on its first delivery,
    and every acknowledgement answered once; the share partition is past them all."""
    share.wait(f"all {count} accepted", lambda: set(accepted(share)) == set(range(count)))
    assert max(accepted(share).values()) == 1  # none acknowledged twice
    assert all(e["delivery"] == 1 for _, e in share.seen())
    share.kcsim.wait_for_share_partition(GROUP, TOPIC, start_offset=count,
                                         timeout=share.wait_s)
    share.wait("every acknowledgement answered", lambda: set(share.acked()) == set(range(count)))
    assert max(share.acked().values()) == 1


def three_consumers_split_300_records(share: Share[Any]) -> None:
    share.start(3)
    share.produce(300)
    all_accepted_once(share, 300)


def a_released_record_is_delivered_again(share: Share[Any]) -> None:
    (worker,) = share.start(1)
    worker.tell("release-first")
    share.produce(5)
    share.wait("each record accepted on its second delivery",
               lambda: set(accepted(share)) == set(range(5)))
    deliveries = sorted((e["offset"], e["delivery"], e["action"]) for _, e in share.seen())
    assert deliveries == [(o, d, a) for o in range(5)
                          for d, a in ((1, "release"), (2, "accept"))]


def a_stalled_consumer_s_records_go_to_another_once_its_lock_runs_out(
        share: Share[Any]) -> None:
    """A consumer may have a ShareFetch parked at the broker when it stalls (a client
    fetches ahead), and that fetch may take the records back when their locks run out
    (delivery 2, still unreported). Their locks then run out again, so the clock is advanced
    once more each time they are all held by the stalled consumer again, as they would on a
    real broker after another lock duration."""
    (stalled,) = share.start(1)
    stalled.tell("stall")
    share.produce(10)
    share.wait("the stalled consumer took the records and stalled",
               lambda: len(stalled.seen) == 10 and stalled.stalled)
    held = share.kcsim.wait_for_share_partition(GROUP, TOPIC, acquired=10, timeout=share.wait_s)
    (stalled_member,) = {r.member for r in held.records}
    (other,) = share.start(1)

    def taken_over() -> bool:
        return set(accepted(share)) == set(range(10))

    def held_again(delivery: int) -> bool:
        view = share.kcsim.share_partition(GROUP, TOPIC)
        return view is not None and len(view.records) == 10 and all(
            r.state == "Acquired" and r.member == stalled_member
            and r.delivery_count == delivery for r in view.records)

    def settled(delivery: int) -> bool:
        return taken_over() or held_again(delivery)

    clock = share.kcsim.clock
    clock.freeze()  # the locks run out when the clock is advanced, never in real time
    try:
        for delivery in range(2, DELIVERY_LIMIT + 1):
            clock.advance(LOCK_MS)
            share.wait(f"delivery {delivery} taken by the other or held by the stalled one",
                       partial(settled, delivery))
            if taken_over():
                break
    finally:
        clock.resume()
    assert taken_over(), f"the other never took them over: {share.seen()}"
    assert max(accepted(share).values()) == 1
    assert all(2 <= e["delivery"] <= DELIVERY_LIMIT for e in other.seen)  # after a lock ran out
    assert sorted(e["offset"] for e in other.seen) == list(range(10))
    assert len(stalled.seen) == 10  # the stalled consumer reported only its first delivery


def a_record_always_released_is_archived_at_the_delivery_limit(share: Share[Any]) -> None:
    (worker,) = share.start(1)
    worker.tell("release")
    share.produce(1)
    share.wait("delivered up to the limit", lambda: len(worker.seen) >= DELIVERY_LIMIT)
    share.kcsim.wait_for_share_partition(GROUP, TOPIC, start_offset=1,  # archived
                                         timeout=share.wait_s)
    worker.tell("accept")
    share.produce(1)  # the next record comes; the archived one never does again
    share.wait("the next record accepted", lambda: 1 in accepted(share))
    assert [e["delivery"] for e in worker.seen if e["offset"] == 0] == list(
        range(1, DELIVERY_LIMIT + 1))


def reject_archives_at_once(share: Share[Any]) -> None:
    (worker,) = share.start(1)
    worker.tell("reject")
    share.produce(3)
    share.wait("rejected", lambda: len(worker.seen) == 3)
    share.kcsim.wait_for_share_partition(GROUP, TOPIC, start_offset=3,  # archived
                                         timeout=share.wait_s)
    worker.tell("accept")
    share.produce(1)
    share.wait("the next record accepted", lambda: 3 in accepted(share))
    assert [(e["offset"], e["delivery"], e["action"]) for e in worker.seen] == [
        (0, 1, "reject"), (1, 1, "reject"), (2, 1, "reject"), (3, 1, "accept")]


def implicit_acknowledgement(share: Share[Any]) -> None:
    share.start(2, mode="implicit")
    share.produce(50)
    all_accepted_once(share, 50)
