"""Share groups (KIP-932) with confluent-kafka's ShareConsumer (librdkafka 2.16).

The scenarios of sharekit, as test_share_java.py runs them with KafkaShareConsumer. Each
consumer is a ShareConsumer polling on a thread of its own (an instance is not
thread-safe; separate instances are). The broker runs in-process (the `kcsim` fixture),
so the scenarios wait on its share partition and advance its clock.
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import AcknowledgeType, Message, ShareConsumer

from . import sharekit
from .sharekit import GROUP, TOPIC

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator, Sequence

pytestmark = pytest.mark.timeout(60)

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
        self.acked: list[tuple[Collection[int], str | None]] = []  # answered: offsets, failure
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

    def _take(self, polled: Iterable[Message]) -> None:
        policy = self.policy  # read after the poll: what the test said before producing
        messages = list(polled)
        records = [m for m in messages if m.error() is None]
        errors = [str(m.error()) for m in messages if m.error() is not None]
        actions = [action(policy, m.delivery_count() or -1) for m in records]
        stall = "stall" in actions
        if self.explicit and not stall:  # stall: held, neither acknowledged nor polled again
            for m, act in zip(records, actions, strict=True):
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


@pytest.fixture
def share(kcsim: Any) -> Iterator[sharekit.Share[Worker]]:
    s = sharekit.Share(kcsim, functools.partial(Worker, kcsim.bootstrap), WAIT_S)
    yield s
    s.close()


def test_three_share_consumers_split_300_records(share: sharekit.Share[Worker]) -> None:
    sharekit.three_consumers_split_300_records(share)


def test_a_released_record_is_delivered_again(share: sharekit.Share[Worker]) -> None:
    sharekit.a_released_record_is_delivered_again(share)


def test_a_stalled_consumer_s_records_go_to_another_once_its_lock_runs_out(
        share: sharekit.Share[Worker]) -> None:
    sharekit.a_stalled_consumer_s_records_go_to_another_once_its_lock_runs_out(share)


def test_a_record_always_released_is_archived_at_the_delivery_limit(
        share: sharekit.Share[Worker]) -> None:
    sharekit.a_record_always_released_is_archived_at_the_delivery_limit(share)


def test_reject_archives_at_once(share: sharekit.Share[Worker]) -> None:
    sharekit.reject_archives_at_once(share)


def test_implicit_acknowledgement(share: sharekit.Share[Worker]) -> None:
    sharekit.implicit_acknowledgement(share)
