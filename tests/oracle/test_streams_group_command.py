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

import re
import subprocess
import sys
import threading
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import pytest

from kcsim.admin import AdminClient
from tests.admin.helpers import produce
from tests.admin.streams_app import StreamsApp

from .groupcommand import RUN_TIMEOUT_S, Ran, normalise
from .kafka import CACHE, KafkaUnavailable, maven_jars
from .toolcommand import TOOLS_VERSION, tool

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from .harness import Endpoint

pytestmark = [pytest.mark.java, pytest.mark.timeout(900)]

MAIN = "org.apache.kafka.tools.streams.StreamsGroupCommand"
PARTITIONS = 3
TASKS = 6  # two subtopologies of three partitions
BEAT_S = 1.0
HASH_ORDERED = ("describe", "reset")  # Kafka's tool prints these rows in hash order
ROW = "sg-"  # a table row: it starts with a group's or the topic's name
_JAVA_ERROR = re.compile(r"Error: \S+: ")  # a Java exception's or a Kafka error's name

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


# An accepted difference of the brokers, not of the tools: Kafka 4.4 gives the first member
# of a new streams group (its topics all there) member and group epoch 2, kcsim 1; later
# epochs keep that offset. These commands are compared with the epoch columns masked.
EPOCHS_DIFFER = {"describe-members-verbose", "describe-state-verbose"}
EPOCH_COLUMNS = ("GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "MEMBER-EPOCH")


class Scenario:
    """The topic and the two streams groups on one broker, and the running group's heartbeats."""

    def __init__(self, bootstrap: str, suffix: str) -> None:
        self.bootstrap = bootstrap
        self.topic = f"sg-words-{suffix}"
        self.running = StreamsApp(bootstrap, f"sg-count-{suffix}", self.topic, PARTITIONS)
        self.idle = StreamsApp(bootstrap, f"sg-idle-{suffix}", self.topic, PARTITIONS)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def __enter__(self) -> Scenario:
        produce(self.bootstrap, self.topic, 10, PARTITIONS)
        # The internal topics are made, and known to the broker, before the first heartbeat:
        # Kafka, creating them in the background, would bump the group epoch when they land,
        # at a time of its own.
        internal = [t for app in (self.idle, self.running) for t in (app.repartition, app.changelog)]
        for name in internal:
            self.idle.wire.create_topic(name, PARTITIONS)
        with AdminClient(self.bootstrap, timeout=10) as admin:
            deadline = time.monotonic() + 30
            while not all(d.error(t) is None and all(p.leader is not None for p in d[t].partitions)
                          for d in [admin.describe_topics(internal)] for t in internal):
                assert time.monotonic() < deadline, f"{internal} not all known after 30 s"
                time.sleep(0.1)
        self.idle.settle_until_owned(["x"], TASKS)
        self.idle.commit("x", {0: 2, 1: 5, 2: 9})
        self.idle.leave("x")
        self.running.settle_until_owned(["a"], TASKS)
        self.running.commit("a", {0: 3, 1: 4})
        self.thread.start()
        return self

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
    try:
        maven_jars(CACHE / "kafka-tools" / TOOLS_VERSION,
                   [("org.apache.kafka", "kafka-tools", TOOLS_VERSION)])
    except KafkaUnavailable as exc:
        pytest.skip(f"kafka-tools unavailable, NOT RUN: {exc}")
    suffix = uuid.uuid4().hex[:8]
    with ExitStack() as stack:
        yield tuple(stack.enter_context(Scenario(f"{e.host}:{e.port}", suffix))
                    for e in (twin, kafka))


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


@dataclass(frozen=True)
class At:
    """Where toolcommand.tool sends the tool (what it reads of an Endpoint)."""

    host: str
    port: int


def kafka_tool(broker: str, *args: str, cwd: Path) -> Ran:
    host, port = broker.rsplit(":", 1)
    return tool(cast("Any", At(host, int(port))), MAIN, *args, cwd=cwd)


def kcsim_tool(broker: str, *args: str, cwd: Path) -> Ran:
    proc = subprocess.run(
        [sys.executable, "-m", "kcsim", "streams-groups", "--bootstrap-server", broker, *args],
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
        stdin=subprocess.DEVNULL, cwd=cwd)
    return Ran(proc.returncode, normalise(proc.stdout, broker), normalise(proc.stderr, broker))


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
    if name in EPOCHS_DIFFER:
        out = _epochs_masked(out)
    err = tuple(line for line in ran.err if not line.startswith(("at ", "... ")))
    return Ran(ran.code, out, err)


def _epochs_masked(out: tuple[str, ...]) -> tuple[str, ...]:
    """The table with the values of its epoch columns (EPOCH_COLUMNS) replaced."""
    masked: list[str] = []
    columns: list[int] = []
    for line in out:
        words = line.split(" ")
        if "GROUP" in words:
            columns = [i for i, w in enumerate(words) if w in EPOCH_COLUMNS]
        elif columns:
            words = ["<epoch>" if i in columns else w for i, w in enumerate(words)]
        masked.append(" ".join(words))
    return tuple(masked)


def _run_all(run: Callable[..., Ran], s: Scenario, tmp: Path) -> dict[str, Ran]:
    return {name: _mine(name, run(s.bootstrap, *args, cwd=tmp), s) for name, args in _commands(s)}


def _text(ran: Ran, with_err: bool = True) -> str:
    return "\n".join([f"exit {ran.code}", *ran.out, *(["[stderr]", *ran.err] if with_err else [])])


def test_kafka_tool_output_is_the_same_against_kcsim(scenarios: Any, tmp_path: Path) -> None:
    ours, theirs = scenarios
    on_kcsim = _run_all(kafka_tool, ours, tmp_path)
    on_kafka = _run_all(kafka_tool, theirs, tmp_path)
    found = [f"--- {name} (kcsim)\n{_text(ran)}\n--- {name} (Kafka)\n{_text(on_kafka[name])}"
             for name, ran in on_kcsim.items() if _text(ran) != _text(on_kafka[name])]
    assert not found, "\n\n".join(found)


def _tables(ran: Ran) -> tuple[str, ...]:
    """stdout without the diagnostics Kafka's tool prints there (`Error: ...`, `* Group ...`),
    an error in a table cell named alike."""
    return tuple(_JAVA_ERROR.sub("Error: <error>: ", line) for line in ran.out
                 if not line.startswith(("Error:", "* Group")))


def test_kcsim_tool_prints_kafka_tools_tables(scenarios: Any, tmp_path: Path) -> None:
    ours, theirs = scenarios
    from_kcsim = _run_all(kcsim_tool, ours, tmp_path)
    from_kafka = _run_all(kafka_tool, theirs, tmp_path)
    found = []
    for name, mine in from_kcsim.items():
        other = from_kafka[name]
        if name in KCSIM_DIAGNOSTICS:
            same = _tables(mine) == _tables(other)
        else:
            same = _text(mine) == _text(other)
        if not same:
            found.append(f"--- {name} (kcsim streams-groups)\n{_text(mine)}\n"
                         f"--- {name} (Kafka's tool)\n{_text(other)}")
    assert not found, "\n\n".join(found)
