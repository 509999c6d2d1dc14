"""Shared pieces of the consumer-group client tests: waiting, topics, member and group views.

Every client (kafka-python, confluent-kafka, aiokafka, the Java client) is driven
through the same small surface: `consumer()` starts a group member that keeps
polling on its own thread or task and exposes what it sees as a `MemberView`;
admin calls return plain values (`Described`, offsets maps, Kafka error names).
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from kcsim.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

T = TypeVar("T")

SESSION_MS = 6000
HEARTBEAT_MS = 200
WAIT_S = 20.0

Offsets = dict[tuple[str, int], tuple[int, str]]  # (topic, partition) -> (offset, metadata)


def wait_for(value: Callable[[], T], ok: Callable[[T], bool], what: str,
             timeout: float = WAIT_S, interval: float = 0.05) -> T:
    """Poll value() until ok(value) holds; fails with the last value seen."""
    deadline = time.monotonic() + timeout
    while True:
        current = value()
        if ok(current):
            return current
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last: {current!r}")
        time.sleep(interval)


def error_name(code: int) -> str | None:
    """Kafka's name for an error code; None for no error."""
    return None if code == 0 else ErrorCode(code).name


# -- topics and records (through kafka-python: the setup, not what is tested) -----


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)], timeout_ms=5000)
    finally:
        admin.close()


def produce(bootstrap: str, topic: str, partitions: Iterable[int], count: int,
            start: int = 0) -> list[tuple[int, int, str]]:
    """`count` records to each partition, keyed "<partition>-<n>" for n from `start`.

    Returns (partition, offset, key) of every record, as the broker acknowledged it.
    """
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5,
                             enable_idempotence=False, request_timeout_ms=5000)
    try:
        sent = [(p, f"{p}-{n}", producer.send(topic, key=f"{p}-{n}".encode(), value=b"v",
                                             partition=p))
                for p in partitions for n in range(start, start + count)]
        producer.flush(timeout=15)
        return [(p, future.get(timeout=5).offset, key) for p, key, future in sent]
    finally:
        producer.close(timeout=5)


# -- what a member sees ---------------------------------------------------------


@dataclass
class MemberView:
    """A member's current assignment (partitions of its topic) and everything it consumed."""

    assignment: list[int] = field(default_factory=list)
    records: list[tuple[int, int, str]] = field(default_factory=list)
    assigned_events: int = 0
    member_id: str = ""
    generation: int | None = None  # None: the client does not tell
    error: str | None = None


@dataclass
class DescribedMember:
    member_id: str
    instance_id: str | None
    client_id: str
    partitions: list[tuple[str, int]]


@dataclass
class Described:
    state: str
    members: list[DescribedMember]
    protocol: str | None = None  # the assignor, where the client reports it

    def assignments(self) -> dict[str, list[int]]:
        return {m.member_id: sorted(p for _, p in m.partitions) for m in self.members}


class ThreadedMember:
    """A group member polling on its own thread; calls on it run there between polls."""

    name: str

    def __init__(self, name: str) -> None:
        self.name = name
        self._tasks: queue.Queue[tuple[Callable[[], Any], Future[Any]]] = queue.Queue()
        self._closing = threading.Event()
        self._started: Future[None] = Future()
        self._lock = threading.Lock()
        self._view = MemberView()
        self._records: list[tuple[int, int, str]] = []
        self.assigned_events = 0
        self._thread = threading.Thread(target=self._run, name=f"member-{name}", daemon=True)
        self._thread.start()
        self._started.result(timeout=WAIT_S)

    # subclasses: open the consumer, poll once, describe it, close it
    def _open(self) -> None:
        raise NotImplementedError

    def _poll(self) -> list[tuple[int, int, str]]:
        raise NotImplementedError

    def _snapshot(self) -> tuple[list[int], str, int | None]:
        """(assignment, member id, generation or None)."""
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        try:
            self._open()
        except BaseException as exc:
            self._started.set_exception(exc)
            return
        self._started.set_result(None)
        error = None
        try:
            while not self._closing.is_set():
                self._run_tasks()
                self._records += self._poll()
                assignment, member_id, generation = self._snapshot()
                with self._lock:
                    self._view = MemberView(assignment, list(self._records), self.assigned_events,
                                            member_id, generation)
        except BaseException as exc:
            error = repr(exc)
        finally:
            self._run_tasks(cancel=True)
            try:
                self._close()
            except BaseException as exc:
                error = error or f"close: {exc!r}"
            with self._lock:
                self._view.error = error

    def _run_tasks(self, cancel: bool = False) -> None:
        while True:
            try:
                fn, future = self._tasks.get_nowait()
            except queue.Empty:
                return
            if cancel:
                future.cancel()
                continue
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

    def call(self, fn: Callable[[], T], timeout: float = WAIT_S) -> T:
        future: Future[T] = Future()
        self._tasks.put((fn, future))
        if not self._thread.is_alive():
            raise RuntimeError(f"member {self.name} stopped: {self._view.error}")
        return future.result(timeout=timeout)

    def view(self) -> MemberView:
        with self._lock:
            return self._view

    def close(self) -> None:
        self._closing.set()
        self._thread.join(timeout=30)
        assert not self._thread.is_alive(), f"member {self.name} did not close"
        assert self._view.error is None, f"member {self.name} failed: {self._view.error}"


# -- checks shared by the scenarios ------------------------------------------------


def covers_exactly(views: Iterable[MemberView], partitions: int) -> bool:
    """Every partition assigned to exactly one of the members."""
    assigned = [p for v in views for p in v.assignment]
    return sorted(assigned) == list(range(partitions))


def balanced(views: list[MemberView], partitions: int) -> bool:
    """An exact cover where member sizes differ by at most one, none empty."""
    sizes = [len(v.assignment) for v in views]
    return covers_exactly(views, partitions) and min(sizes) >= 1 and max(sizes) - min(sizes) <= 1
