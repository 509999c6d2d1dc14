"""Java kafka-clients 4.x against a kcsim playing three brokers (java/Brokers.java): leaders
on every node, a coordinator apart from the leaders, a coordinator moving while members
consume, a leader's node stopping, the bootstrap node stopping and starting again, and a
transactional consume-transform-produce loop through moves of both its coordinators.

The JVM says when a step is done ("batch ..." or "open") and waits for a line; the test
stages the change between steps. Waits are on what the clients say, never a sleep.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from typing import TYPE_CHECKING

import pytest

from .javaclient import MAVEN_CLIENT, classpath, skip_without_java

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from kcsim import EmbeddedServer

pytestmark = [pytest.mark.java, pytest.mark.timeout(240), pytest.mark.kcsim(brokers=3)]

NODES = {1, 2, 3}


class Jvm:
    """One Brokers.java scenario in its own JVM, spoken to a line at a time."""

    def __init__(self, *args: str) -> None:
        skip_without_java()
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            ["java", "-Xshare:auto", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             "-cp", classpath(MAVEN_CLIENT), "Brokers", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def next_line(self, prefix: str) -> str:
        """The next line starting with `prefix` (the JVM's output up to it kept in `lines`)."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith(prefix):
                return line.rstrip("\n")
        self.proc.wait(timeout=30)
        raise AssertionError(f"the JVM exited ({self.proc.returncode}) before {prefix!r}: "
                             f"{self.lines[-20:]}\n{self.proc.stderr.read()[-4000:]}")  # type: ignore[union-attr]

    def answer(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def finish(self) -> list[str]:
        """Every line the JVM printed, once it said "done" and exited 0."""
        self.next_line("done")
        assert self.proc.wait(timeout=60) == 0, self.proc.stderr.read()  # type: ignore[union-attr]
        return self.lines

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def jvm() -> Iterator[Callable[..., Jvm]]:
    started: list[Jvm] = []

    def start(*args: str) -> Jvm:
        started.append(Jvm(*args))
        return started[-1]

    yield start
    for one in started:
        one.kill()


def group_coordinated_by(kcsim: EmbeddedServer, node: int, prefix: str = "jgroup") -> str:
    return next(g for g in (f"{prefix}-{i}" for i in range(1000))
                if kcsim.nodes.coordinator(g) == node)


def records(lines: list[str]) -> list[tuple[int, int, str]]:
    """(partition, offset, value) of each record the members consumed, as often as consumed."""
    return [(int(p), int(o), v) for _, p, o, v in
            (line.split() for line in lines if line.startswith("record "))]


def test_java_sees_leaders_on_every_node(kcsim: EmbeddedServer, jvm: Callable[..., Jvm]) -> None:
    lines = jvm("leaders", kcsim.bootstrap, "jspread", "6").proc.communicate(timeout=120)[0]
    assert "nodes 1,2,3" in lines.splitlines()
    seen = {int(p): int(n) for _, p, n in
            (line.split() for line in lines.splitlines() if line.startswith("leader "))}
    assert seen == {p: kcsim.nodes.leader("jspread", p) for p in range(6)}
    assert set(seen.values()) == NODES


def step_through(kcsim: EmbeddedServer, jvm: Callable[..., Jvm], topic: str, group: str,
                 between: Callable[[], None], bootstrap: str | None = None,
                 members: int = 3, partitions: int = 6) -> list[str]:
    """A group of `members` consuming batches of 60 records: two batches (the second once
    the group is Stable), `between`, two more."""
    steps = jvm("steps", bootstrap or kcsim.bootstrap, topic, str(partitions), group,
                str(members), "60")
    steps.next_line("batch 0")
    kcsim.wait_for_group(group, "Stable", members=members, timeout=60)
    steps.answer("next")
    assert steps.next_line("batch 1") == f"batch 1 members {members}"  # the assignment settled
    between()
    steps.answer("next")
    steps.next_line("batch 2")
    steps.answer("next")
    steps.next_line("batch 3")
    steps.answer("end")
    lines = steps.finish()
    assert {v for _, _, v in records(lines)} == {f"{n}-{i}" for n in range(4) for i in range(60)}
    assert kcsim.committed(group) == {(topic, p): 240 // partitions for p in range(partitions)}
    return lines


def test_java_commits_through_a_coordinator_leading_none_of_its_partitions(
        kcsim: EmbeddedServer, jvm: Callable[..., Jvm]) -> None:
    (apart,) = NODES - {kcsim.nodes.leader("japart", p) for p in range(2)}
    group = group_coordinated_by(kcsim, apart)
    lines = step_through(kcsim, jvm, "japart", group, lambda: None, members=1, partitions=2)
    assert f"coordinator {apart}" in lines
    commits = kcsim.requests("OffsetCommit", group=group)
    assert commits and not any(r.errors for r in commits)


def test_java_members_refind_a_moved_coordinator(
        kcsim: EmbeddedServer, jvm: Callable[..., Jvm]) -> None:
    group = group_coordinated_by(kcsim, 1)
    at_move: dict[tuple[str, int], int] = {}

    def move() -> None:
        before = kcsim.group(group)
        assert before is not None
        kcsim.nodes.move_coordinator(group, 3, load_ms=300)
        at_move.update(kcsim.committed(group))
        kcsim.wait_for_request(group=group, error="NOT_COORDINATOR", timeout=30)

    lines = step_through(kcsim, jvm, "jmoving", group, move)
    assert "coordinator 3" in lines
    # At least once: what was consumed twice is only the tail not yet committed at the move.
    twice = [(p, o) for (p, o, _), n in Counter(records(lines)).items() if n > 1]
    assert all(o >= at_move.get(("jmoving", p), 0) for p, o in twice), (twice, at_move)


def test_java_clients_follow_the_leaders_of_a_stopped_node(
        kcsim: EmbeddedServer, jvm: Callable[..., Jvm]) -> None:
    group = group_coordinated_by(kcsim, 1)

    def stop() -> None:
        assert 2 in {kcsim.nodes.leader("jfailover", p) for p in range(6)}
        kcsim.nodes.stop(2)
        assert 2 not in {kcsim.nodes.leader("jfailover", p) for p in range(6)}

    step_through(kcsim, jvm, "jfailover", group, stop, bootstrap=kcsim.bootstrap_servers)


def test_java_clients_go_on_while_the_bootstrap_node_stops_and_starts(
        kcsim: EmbeddedServer, jvm: Callable[..., Jvm]) -> None:
    group = group_coordinated_by(kcsim, 2)
    steps = jvm("steps", kcsim.bootstrap, "jboot", "6", group, "2", "60")
    steps.next_line("batch 0")
    kcsim.wait_for_group(group, "Stable", members=2, timeout=60)
    kcsim.nodes.stop(1)  # the only node the clients were given
    steps.answer("next")
    steps.next_line("batch 1")
    kcsim.nodes.start(1)
    steps.answer("next")
    steps.next_line("batch 2")
    kcsim.nodes.stop(1)
    steps.answer("next")
    steps.next_line("batch 3")
    kcsim.nodes.start(1)
    steps.answer("end")
    lines = steps.finish()
    assert {v for _, _, v in records(lines)} == {f"{n}-{i}" for n in range(4) for i in range(60)}
    assert kcsim.committed(group) == {("jboot", p): 40 for p in range(6)}


def test_java_transactions_go_on_through_moves_of_both_coordinators(
        kcsim: EmbeddedServer, jvm: Callable[..., Jvm]) -> None:
    group = group_coordinated_by(kcsim, 1, "jtx-group")
    txn_id = next(t for t in (f"jtx-{i}" for i in range(1000))
                  if kcsim.nodes.coordinator(t, transactional=True) == 2)
    count = 60
    loop = jvm("txn", kcsim.bootstrap, "jtx-in", "jtx-out", group, txn_id, str(count))
    loop.next_line("open")
    since = kcsim.last_request_seq()
    kcsim.nodes.move_coordinator(txn_id, 3, load_ms=300, transactional=True)
    kcsim.nodes.move_coordinator(group, 2, load_ms=300)
    loop.answer("go on")
    lines = loop.finish()
    outputs = [line.split()[1] for line in lines if line.startswith("out ")]
    assert Counter(outputs) == Counter(f"out-v{i}" for i in range(count))
    assert kcsim.committed(group) == {("jtx-in", p): count // 3 for p in range(3)}
    # The open transaction's offsets and its end each went to the old coordinator first.
    for api in ("TxnOffsetCommit", "EndTxn"):
        heard = [r.errors for r in kcsim.requests(api, since=since)]
        assert heard[0] == ["NOT_COORDINATOR"] and heard[-1] == [], (api, heard)
    assert kcsim.nodes.coordinator(txn_id, transactional=True) == 3

