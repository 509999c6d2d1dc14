"""Kafka's kafka-share-groups tool gives the same output against kcsim as against Kafka,
and `kcsim share-groups` prints Kafka's tool's tables for the same commands.

One scenario is built on both brokers with the same names: a one-partition topic with 10
records, each in a batch of its own; a busy share group whose member (raw frames,
tests/server/test_share_wire.py) accepted records 0-1, holds the others and keeps
heartbeating; and an idle one whose member accepted records 0-5 and left. Both groups read from the earliest offset
(share.auto.offset.reset). Every command then runs against both; the normalised
outputs (tests/oracle/groupcommand.py) must be equal.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import pytest

from kcsim.admin import AdminClient, TopicPartition
from tests.admin.helpers import produce
from tests.server.durability.wire import Wire
from tests.server.test_share_wire import ACCEPT, Member, acquired, set_group_config, topic_id

from .groupcommand import Ran
from .toolcommand import in_columns
from .toolcompare import scenarios_on, tool_tests

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .harness import Endpoint

pytestmark = [pytest.mark.java, pytest.mark.timeout(900)]

MAIN = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
RECORDS = 10
BEAT_S = 1.0
WAIT_S = 30.0
# Kafka raises a share group's epoch when it initializes the share partitions of a new
# member's topics too (kcsim makes their state at the first fetch): the epochs differ.
EPOCHS = dict.fromkeys(("MEMBER-EPOCH", "GROUP-EPOCH", "ASSIGNMENT-EPOCH"),
                       lambda _: "<epoch>")
# Kafka's share partition writes each change with the start offset from before it, so
# while records are in flight its written start offset trails: the busy group's reads 0
# where kcsim's (written with the change) reads 2. The lag is the same on both.
TRAILING_START = {"describe", "describe-verbose"}

# Where `kcsim share-groups` says something else than Kafka's tool, by design (kcsim's
# tools give diagnostics on stderr with exit codes, docs/consumer-groups.md); these are
# compared on their tables only.
KCSIM_DIAGNOSTICS = {
    "describe-unknown": "Kafka's tool prints the Java exception and its stack trace and exits "
                        "1; kcsim's prints `Error: Share group 'G' does not exist.` and exits 3",
    "reset-active": "Kafka's tool prints `Share group 'G' is not empty.` on stderr, exit 1; "
                    "kcsim's `Error: ...` on stderr, exit 4",
    "delete-offsets-active": "kcsim's exit code is 4 (refused)",
    "delete-active": "kcsim's exit code is 4 (refused)",
    "delete-unknown": "kcsim's exit code is 3 (not found)",
}


def _until(what: str, done: Callable[[], bool]) -> None:
    """Kafka assigns and initializes share partitions in the background: ask again until so."""
    deadline = time.monotonic() + WAIT_S
    while not done():
        assert time.monotonic() < deadline, f"{what}: not so after {WAIT_S:.0f} s"
        time.sleep(0.2)


def _join(member: Member) -> None:
    def assigned() -> bool:
        r = member.heartbeat()
        assert r.error_code == 0, r
        return bool(r.assignment and r.assignment.topic_partitions)
    _until(f"{member.member_id} assigned", assigned)


def _take(member: Member, count: int) -> list[tuple[int, int, int]]:
    got: list[tuple[int, int, int]] = []
    _until(f"{member.member_id} acquired {count}",
           lambda: bool(got.extend(acquired(member.fetch(max_records=count)))) or sum(
               b - a + 1 for a, b, _ in got) >= count)
    return got


class Scenario:
    """The topic and the two share groups on one broker, and the busy member's heartbeats."""

    def __init__(self, bootstrap: str, suffix: str) -> None:
        self.bootstrap = bootstrap
        host, port = bootstrap.rsplit(":", 1)
        self.wire = Wire(host, int(port))
        self.topic, self.busy, self.idle = (f"sh-jobs-{suffix}", f"sh-busy-{suffix}",
                                            f"sh-idle-{suffix}")
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def __enter__(self) -> Scenario:
        wire = self.wire
        wire.create_topic(self.topic, 1)
        for group in (self.busy, self.idle):
            set_group_config(wire, "share.auto.offset.reset", "earliest", group=group)
        for _ in range(RECORDS):  # a batch each: acquired and acknowledged alike on both
            produce(self.bootstrap, self.topic, 1, 1)
        tid = topic_id(wire, self.topic)
        x = Member(wire, "member-x", tid, group=self.idle, topic=self.topic)
        _join(x)
        _take(x, RECORDS)
        assert x.ack([(0, 5, ACCEPT)]).error_code == 0
        assert x.heartbeat(epoch=-1).error_code == 0
        # Kafka gives the leaver's records back (and writes the start offset the accepted
        # records moved) in the background: wait until it has.
        tp = TopicPartition(self.topic, 0)
        with AdminClient(self.bootstrap, timeout=WAIT_S) as admin:
            _until("the idle group's start offset written", lambda: admin.list_share_group_offsets(
                self.idle)[self.idle][tp].start_offset == 6)
        self.member = Member(wire, "member-a", tid, group=self.busy, topic=self.topic)
        _join(self.member)
        _take(self.member, RECORDS)
        # Accepting two writes the partition's state: Kafka writes a first fetch's start
        # offset some time after it, so until then it would report none.
        assert self.member.ack([(0, 1, ACCEPT)]).error_code == 0
        self.thread.start()
        return self

    def _beat(self) -> None:
        while not self.stop.wait(BEAT_S):
            self.member.heartbeat()

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(30)
        self.wire.close()


@pytest.fixture
def scenarios(twin: Endpoint, kafka: Endpoint) -> Iterator[tuple[Scenario, ...]]:
    """The same scenario on kcsim and on Kafka, under the same names."""
    yield from scenarios_on(twin, kafka, Scenario)


def _commands(s: Scenario) -> list[tuple[str, list[str]]]:
    """(name, arguments) in order; later ones see what earlier ones changed."""
    busy, idle, topic = ["--group", s.busy], ["--group", s.idle], ["--topic", s.topic]
    reset = ["--reset-offsets", *idle, *topic]
    return [
        ("list", ["--list"]),
        ("list-state", ["--list", "--state"]),
        ("list-state-stable", ["--list", "--state", "Stable"]),
        ("describe", ["--describe", *busy]),
        ("describe-verbose", ["--describe", "--offsets", "--verbose", *busy]),
        ("describe-members", ["--describe", "--members", *busy]),
        ("describe-members-verbose", ["--describe", "--members", "--verbose", *busy]),
        ("describe-state", ["--describe", "--state", *busy]),
        ("describe-state-verbose", ["--describe", "--state", "--verbose", *busy]),
        ("describe-idle", ["--describe", *idle]),
        ("describe-idle-members", ["--describe", "--members", *idle]),
        ("describe-idle-state", ["--describe", "--state", *idle]),
        ("describe-unknown", ["--describe", "--group", s.idle + "-none"]),
        ("reset-earliest", [*reset, "--to-earliest", "--dry-run"]),
        ("reset-latest", [*reset, "--to-latest", "--dry-run"]),
        ("reset-offset", [*reset, "--to-offset", "4", "--dry-run"]),
        ("reset-current", ["--reset-offsets", *idle, "--all-topics", "--to-current",
                           "--dry-run"]),
        ("reset-export", [*reset, "--to-earliest", "--dry-run", "--export"]),
        ("reset-active", ["--reset-offsets", *busy, *topic, "--to-earliest", "--execute"]),
        ("reset-execute", [*reset, "--to-offset", "2", "--execute"]),
        ("describe-after-reset", ["--describe", *idle]),
        ("delete-offsets-active", ["--delete-offsets", *busy, *topic]),
        ("delete-offsets", ["--delete-offsets", *idle, *topic]),
        ("describe-after-delete-offsets", ["--describe", *idle]),
        ("delete-active", ["--delete", *busy]),
        ("delete", ["--delete", *idle]),
        ("delete-unknown", ["--delete", *idle]),
    ]


def _mine(name: str, ran: Ran, s: Scenario) -> Ran:
    """Listings without other tests' groups (the brokers are shared across the session),
    their rows sorted (Kafka's tool lists in the broker's hash order); epochs masked
    (EPOCHS), and the busy group's start offset (TRAILING_START); Java's stack trace lines
    dropped."""
    masked = {**EPOCHS, "START-OFFSET": lambda _: "<start>"} if name in TRAILING_START else EPOCHS
    out = in_columns(ran, masked).out
    if name.startswith("list"):
        suffix = s.topic.rsplit("-", 1)[1]
        out = (*(line for line in out if line.startswith("GROUP")),
               *sorted(line for line in out if suffix in line))
    err = tuple(line for line in ran.err if not line.startswith(("at ", "... ")))
    return Ran(ran.code, out, err)


test_kafka_tool_output_is_the_same_against_kcsim, test_kcsim_tool_prints_kafka_tools_tables = (
    tool_tests(MAIN, "share-groups", KCSIM_DIAGNOSTICS, _commands, _mine))
