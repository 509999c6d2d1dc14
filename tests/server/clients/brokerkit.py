"""Clients of a kcsim playing several brokers, driven a step at a time: a scenario in its
own process (java/Brokers.java, node/brokers.js; both print the same lines) says when a
step is done and waits for a line, and the test stages the change between steps."""

from __future__ import annotations

import subprocess
from collections import Counter
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from kcsim import EmbeddedServer


class Driver:
    """One scenario in its own process, spoken to a line at a time."""

    def __init__(self, command: list[str], env: Mapping[str, str] | None = None) -> None:
        self.lines: list[str] = []
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)

    def next_line(self, prefix: str) -> str:
        """The next line starting with `prefix` (the output up to it kept in `lines`)."""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith(prefix):
                return line.rstrip("\n")
        self.proc.wait(timeout=30)
        raise AssertionError(f"the client exited ({self.proc.returncode}) before {prefix!r}: "
                             f"{self.lines[-20:]}\n{self.proc.stderr.read()[-4000:]}")

    def answer(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def finish(self) -> list[str]:
        """Every line printed, once the client said "done" and exited 0."""
        self.next_line("done")
        assert self.proc.stderr is not None
        assert self.proc.wait(timeout=60) == 0, self.proc.stderr.read()
        return self.lines

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def drivers() -> Iterator[list[Driver]]:
    """Drivers a test started, killed at its end if still running."""
    started: list[Driver] = []
    yield started
    for one in started:
        one.kill()


def group_coordinated_by(kcsim: EmbeddedServer, node: int, prefix: str = "group") -> str:
    return next(g for g in (f"{prefix}-{i}" for i in range(1000))
                if kcsim.nodes.coordinator(g) == node)


def records(lines: list[str]) -> list[tuple[int, int, str]]:
    """(partition, offset, value) of each record the members consumed, as often as consumed."""
    return [(int(p), int(o), v) for _, p, o, v in
            (line.split() for line in lines if line.startswith("record "))]


def leaders(lines: list[str]) -> dict[int, int]:
    """Each partition's leader, as the client printed them."""
    return {int(p): int(n) for _, p, n in
            (line.split() for line in lines if line.startswith("leader "))}


def step_through(kcsim: EmbeddedServer, start: Callable[..., Driver], topic: str, group: str,
                 between: Callable[[], None], bootstrap: str | None = None,
                 members: int = 3, partitions: int = 6,
                 after: Callable[[], None] = lambda: None) -> list[str]:
    """A group of `members` consuming batches of 60 records: two batches (the second once
    the group is Stable and consumed by every member), `between`, a batch, `after`, a
    batch; every record consumed and the group's offsets committed at the end."""
    steps = start("steps", bootstrap or kcsim.bootstrap, topic, str(partitions), group,
                str(members), "60")
    steps.next_line("batch 0")
    kcsim.wait_for_group(group, "Stable", members=members, timeout=60)
    steps.answer("next")
    assert steps.next_line("batch 1") == f"batch 1 members {members}"  # the assignment settled
    between()
    steps.answer("next")
    steps.next_line("batch 2")
    after()
    steps.answer("next")
    steps.next_line("batch 3")
    steps.answer("end")
    lines = steps.finish()
    missing = {f"{n}-{i}" for n in range(4) for i in range(60)} - {v for _, _, v in records(lines)}
    assert not missing, ([line for line in lines if line.startswith("batch")], sorted(missing))
    assert kcsim.committed(group) == {(topic, p): 240 // partitions for p in range(partitions)}
    return lines


def through_a_coordinator_move(kcsim: EmbeddedServer, start: Callable[..., Driver], topic: str,
                               group: str) -> list[str]:
    """Three members consuming while the group's coordinator moves from node 1 to node 3
    (loading for 300 ms): every record consumed, the offsets committed, and what was
    consumed twice only the tail not yet committed at the move (at least once)."""
    assert kcsim.nodes.coordinator(group) == 1
    at_move: dict[tuple[str, int], int] = {}

    def move() -> None:
        kcsim.nodes.move_coordinator(group, 3, load_ms=300)
        at_move.update(kcsim.committed(group))
        kcsim.wait_for_request(group=group, error="NOT_COORDINATOR", timeout=30)

    lines = step_through(kcsim, start, topic, group, move)
    twice = [(p, o) for (p, o, _), n in Counter(records(lines)).items() if n > 1]
    assert all(o >= at_move.get((topic, p), 0) for p, o in twice), (twice, at_move)
    return lines
