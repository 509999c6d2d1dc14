"""Kafka's kafka-streams-groups tool gives the same output against kcsim as against Kafka,
and `kcsim streams-groups` prints Kafka's tool's tables for the same commands.

One scenario is built on both brokers with the same names: a 3-partition input topic with
10 records per partition; a running word count (a member heartbeating over the wire,
tests/admin/streams_app.py, owning all six tasks) that committed 3 and 4 on partitions 0
and 1; and an idle one whose member committed 2, 5 and 9 and left. (One running member:
which of the six tasks move to a second member is the assignor's choice, and there
kcsim's sticky assignor and Kafka's choose differently.) Every command then runs against both; the
normalised outputs (tests/oracle/groupcommand.py) must be equal. Kafka's tool prints the
rows of its offset tables in hash order: those rows are compared sorted.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import TYPE_CHECKING

import pytest

from kcsim.admin import AdminClient
from kcsim.protocol.codecs import request_class
from tests.admin.helpers import produce
from tests.admin.streams_app import StreamsApp

from .groupcommand import Ran
from .toolcompare import scenarios_on, tool_tests

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .harness import Endpoint

pytestmark = [pytest.mark.java, pytest.mark.timeout(900)]

MAIN = "org.apache.kafka.tools.streams.StreamsGroupCommand"
CONSUMER_GROUP_HEARTBEAT = 68
ConsumerHeartbeat = request_class(CONSUMER_GROUP_HEARTBEAT)
PARTITIONS = 3
TASKS = 6  # two subtopologies of three partitions
BEAT_S = 1.0
HASH_ORDERED = ("describe", "reset", "list")  # Kafka's tool prints these rows in hash order
ROW = "sg-"  # a table row: it starts with a group's or the topic's name

# Where `kcsim streams-groups` says something else than Kafka's tool, by design: kcsim's
# tools give diagnostics on stderr, with Kafka's error names and a hint, and exit codes
# (docs/consumer-groups.md); Kafka's tool prints them on stdout (or a stack trace) and
# mostly exits 0. The tables are the same; these commands are compared on stdout only,
# without Kafka's diagnostic lines.
KCSIM_DIAGNOSTICS = {
    "describe-idle": "Kafka's tool prints nothing for a group without members; kcsim's says "
                     "`Streams group 'G' has no active members.` on stderr",
    "describe-idle-members": "as describe-idle",
    "describe-idle-state": "Kafka's tool prints `Error: Streams group 'G' has no active "
                           "members.` on stdout; kcsim's prints the note on stderr",
    "describe-unknown": "Kafka's tool prints the Java exception and its stack trace and exits "
                        "1; kcsim's prints `Error: Streams group 'G' does not exist.` and exits 3",
    "reset-active": "both refuse with the same first sentence; Kafka's tool on stdout (exit 0), "
                    "kcsim's on stderr with the partitions that are not paused and a hint "
                    "(KIP-1249), exit 4",
    "delete-offsets-active": "Kafka's tool names the Java exception of each partition; kcsim's "
                             "its Kafka error name, and the errors also on stderr (exit 1)",
    "delete-active": "Kafka's tool prints `Error: Deletion of some streams groups failed:` and "
                     "the Java exception on stdout, exit 0; kcsim's the error name and a hint "
                     "on stderr, exit 1 (NON_EMPTY_GROUP) or 3 (not a streams group)",
    "delete-unknown": "as delete-active",
}


class Scenario:
    """The topic and the two streams groups on one broker, and the running group's heartbeats."""

    def __init__(self, bootstrap: str, suffix: str) -> None:
        self.bootstrap = bootstrap
        self.topic = f"sg-words-{suffix}"
        self.running = StreamsApp(bootstrap, f"sg-count-{suffix}", self.topic, PARTITIONS)
        self.idle = StreamsApp(bootstrap, f"sg-idle-{suffix}", self.topic, PARTITIONS)
        self.probe = f"sg-probe-{suffix}"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def __enter__(self) -> Scenario:
        produce(self.bootstrap, self.topic, 10, PARTITIONS)
        # The internal topics are made, and known to the broker, before the first heartbeat:
        # Kafka, creating them in the background, would bump the group epoch when they land,
        # at a time of its own.
        internal = [t for app in (self.idle, self.running) for t in (app.repartition, app.changelog)]
        for name in [*internal, self.probe]:
            self.idle.wire.create_topic(name, PARTITIONS)
        with AdminClient(self.bootstrap, timeout=10) as admin:
            deadline = time.monotonic() + 30
            while not all(d.error(t) is None and all(p.leader is not None for p in d[t].partitions)
                          for d in [admin.describe_topics(internal)] for t in internal):
                assert time.monotonic() < deadline, f"{internal} not all known after 30 s"
                time.sleep(0.1)
        self._await_the_coordinator_knows_the_probe()
        self.idle.settle_until_owned(["x"], TASKS)
        self.idle.commit("x", {0: 2, 1: 5, 2: 9})
        self.idle.leave("x")
        self.running.settle_until_owned(["a"], TASKS)
        self.running.commit("a", {0: 3, 1: 4})
        self.thread.start()
        return self

    def _await_the_coordinator_knows_the_probe(self) -> None:
        """Kafka's group coordinator learns of topics from the metadata log a little after its
        broker's Metadata answers name them; a streams member joining meanwhile finds its
        internal topics missing, and the group epoch is bumped again once they land. The
        probe topic is made after the internal topics, so once a KIP-848 member subscribed
        to it is assigned its partitions, the coordinator knows them all. The probe group is
        a consumer group: kafka-streams-groups lists streams groups only."""
        group, member, epoch = f"{self.probe}-probe", uuid.uuid4().hex, 0
        deadline = time.monotonic() + 30
        while True:
            answer = self.idle.wire.call(CONSUMER_GROUP_HEARTBEAT, 1, ConsumerHeartbeat(
                group_id=group, member_id=member, member_epoch=epoch,
                rebalance_timeout_ms=30000 if epoch == 0 else -1,
                subscribed_topic_names=[self.probe] if epoch == 0 else None,
                topic_partitions=[] if epoch == 0 else None))
            assert answer.error_code == 0, answer
            epoch = answer.member_epoch
            if answer.assignment is not None and answer.assignment.topic_partitions:
                break
            assert time.monotonic() < deadline, f"{self.probe} not assigned after 30 s"
            time.sleep(0.1)
        left = self.idle.wire.call(CONSUMER_GROUP_HEARTBEAT, 1, ConsumerHeartbeat(
            group_id=group, member_id=member, member_epoch=-1))
        assert left.error_code == 0, left

    def _beat(self) -> None:
        while not self.stop.wait(BEAT_S):
            self.running.settle(["a"], rounds=1)

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(30)
        self.running.close()
        self.idle.close()


@pytest.fixture
def scenarios(twin: Endpoint, kafka: Endpoint) -> Iterator[tuple[Scenario, ...]]:
    """The same scenario on kcsim and on Kafka, under the same names."""
    yield from scenarios_on(twin, kafka, Scenario)


def _commands(s: Scenario) -> list[tuple[str, list[str]]]:
    """(name, arguments) in order; later ones see what earlier ones changed."""
    run, idle, topic = ["--group", s.running.group], ["--group", s.idle.group], s.topic
    reset = ["--reset-offsets", *idle, "--all-input-topics"]
    return [
        ("list", ["--list"]),
        ("list-state", ["--list", "--state"]),
        ("list-state-stable", ["--list", "--state", "Stable"]),
        ("describe", ["--describe", *run]),
        ("describe-verbose", ["--describe", "--offsets", "--verbose", *run]),
        ("describe-members", ["--describe", "--members", *run]),
        ("describe-members-verbose", ["--describe", "--members", "--verbose", *run]),
        ("describe-state", ["--describe", "--state", *run]),
        ("describe-state-verbose", ["--describe", "--state", "--verbose", *run]),
        ("describe-idle", ["--describe", *idle]),
        ("describe-idle-members", ["--describe", "--members", *idle]),
        ("describe-idle-state", ["--describe", "--state", *idle]),
        ("describe-unknown", ["--describe", "--group", s.idle.group + "-none"]),
        ("reset-earliest", [*reset, "--to-earliest", "--dry-run"]),
        ("reset-latest", [*reset, "--to-latest", "--dry-run"]),
        ("reset-offset", [*reset, "--to-offset", "4", "--dry-run"]),
        ("reset-shift", [*reset, "--shift-by", "-2", "--dry-run"]),
        ("reset-current", [*reset, "--to-current", "--dry-run"]),
        ("reset-export", [*reset, "--to-earliest", "--dry-run", "--export"]),
        ("reset-partitions", ["--reset-offsets", *idle, "--input-topic", f"{topic}:0,2",
                              "--to-offset", "1", "--dry-run"]),
        ("reset-active", ["--reset-offsets", *run, "--input-topic", topic, "--to-earliest",
                          "--execute"]),
        ("reset-execute", [*reset, "--shift-by", "1", "--execute"]),
        ("reset-after-execute", [*reset, "--to-current", "--dry-run"]),
        ("delete-offsets-active", ["--delete-offsets", *run, "--input-topic", f"{topic}:0"]),
        ("delete-offsets", ["--delete-offsets", *idle, "--input-topic", f"{topic}:1"]),
        ("reset-after-delete-offsets", [*reset, "--to-current", "--dry-run"]),
        ("delete-active", ["--delete", *run]),
        ("delete", ["--delete", *idle]),
        ("delete-unknown", ["--delete", *idle]),
    ]


def _mine(name: str, ran: Ran, s: Scenario) -> Ran:
    """Listings without other tests' groups (the brokers are shared across the session), and
    hash-ordered rows sorted; Java's stack trace lines (`\\tat ...`) dropped."""
    out = ran.out
    if name.startswith("list"):
        out = tuple(line for line in out if line.startswith("GROUP")
                    or s.topic.rsplit("-", 1)[1] in line)
    if name.startswith(HASH_ORDERED):
        out = (*(line for line in out if not line.startswith(ROW)),
               *sorted(line for line in out if line.startswith(ROW)))
    err = tuple(line for line in ran.err if not line.startswith(("at ", "... ")))
    return Ran(ran.code, out, err)


test_kafka_tool_output_is_the_same_against_kcsim, test_kcsim_tool_prints_kafka_tools_tables = (
    tool_tests(MAIN, "streams-groups", KCSIM_DIAGNOSTICS, _commands, _mine))
