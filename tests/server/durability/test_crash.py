"""SIGKILL under a commit storm: every acknowledged offset commit survives the restart.

Several raw-socket clients pipeline OffsetCommit v8 requests of a simple group
each (generation -1, empty member id), committing increasing offsets; the
server is killed with SIGKILL at a random moment, restarted on the same data
dir, and OffsetFetch must return, for every partition, an offset at least the
last acknowledged one and equal to one the client actually sent. The storm then
resumes on the restarted server. Small segments and a short compaction interval
make the kills land during segment rolls and compactions too, and the fsync
policy changes between runs (a process crash loses nothing the OS was given).

`make soak` (KCSIM_SOAK=1) runs 200 kill/restart cycles instead of 20.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from .wire import COMMIT_V, OFFSET_COMMIT, Closed, Wire, commit_request

if TYPE_CHECKING:
    from collections.abc import Callable

ITERATIONS = 200 if os.environ.get("KCSIM_SOAK") else 20
CLIENTS = 4
PARTITIONS = 4
IN_FLIGHT = 16
TOPIC = "storm"
POLICIES = ("always", "interval", "never")
MAX_STORM_S = 0.6

pytestmark = pytest.mark.timeout(60 + ITERATIONS * 6)


class Committer(threading.Thread):
    """Pipelines commits of increasing offsets to its own group until the connection dies.

    Request n commits offset `n * PARTITIONS + p` on each partition p; `sent` keeps
    every offset sent per partition and `acked` the newest acknowledged one.
    """

    def __init__(self, group: str) -> None:
        super().__init__(daemon=True)
        self.group = group
        self.next_request = 1
        self.sent: dict[int, set[int]] = {p: set() for p in range(PARTITIONS)}
        self.acked: dict[int, int] = {}
        self.acked_this_run = 0
        self.failure: BaseException | None = None
        self.host = ""
        self.port = 0

    def restart(self, server: Any) -> Committer:
        """A fresh thread carrying this committer's history on to a new server run."""
        fresh = Committer(self.group)
        fresh.next_request, fresh.sent, fresh.acked = self.next_request, self.sent, self.acked
        fresh.host, fresh.port = server.host, server.port
        return fresh

    def offsets(self, n: int) -> dict[int, int]:
        return {p: n * PARTITIONS + p for p in range(PARTITIONS)}

    def run(self) -> None:
        try:
            self._storm()
        except Closed:
            pass
        except BaseException as exc:
            self.failure = exc

    def _storm(self) -> None:
        try:
            wire = Wire(self.host, self.port)
        except ConnectionRefusedError:
            return  # killed before this client connected
        with wire:
            in_flight: list[dict[int, int]] = []
            while True:
                while wire.in_flight < IN_FLIGHT:
                    offsets = self.offsets(self.next_request)
                    self.next_request += 1
                    for p, o in offsets.items():
                        self.sent[p].add(o)
                    wire.send(OFFSET_COMMIT, COMMIT_V, commit_request(self.group, TOPIC, offsets))
                    in_flight.append(offsets)
                resp = wire.receive()
                offsets = in_flight.pop(0)
                errors = {p.partition_index: p.error_code
                          for t in resp.topics for p in t.partitions}
                if errors != dict.fromkeys(offsets, 0):
                    raise AssertionError(f"{self.group}: OffsetCommit answered {errors}")
                for p, o in offsets.items():
                    assert o > self.acked.get(p, -1), "acknowledged out of order"
                    self.acked[p] = o
                self.acked_this_run += 1


def kill(server: Any) -> None:
    """SIGKILL the server process and forget it, as a crash would."""
    proc = server.proc
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    server.proc = None


def storm_then_kill(server: Any, committers: list[Committer], seconds: float,
                    context: str) -> list[Committer]:
    """Run the committers on `server` for `seconds`, then SIGKILL it; returns them, each
    with its history, once they have stopped without failing."""
    committers = [c.restart(server) for c in committers]
    for c in committers:
        c.start()
    time.sleep(seconds)
    kill(server)
    for c in committers:
        c.join(10)
        assert not c.is_alive(), f"{context}: a client hung after the kill"
        if c.failure is not None:
            raise AssertionError(f"{context}: {c.group} failed") from c.failure
    return committers


def check_acknowledged(server: Any, committers: list[Committer], context: str) -> None:
    with Wire.to(server) as wire:
        got = wire.fetch({c.group: (TOPIC, list(range(PARTITIONS))) for c in committers})
    for c in committers:
        for p in range(PARTITIONS):
            offset = got[(c.group, p)]
            acked = c.acked.get(p)
            where = f"{context}: {c.group} partition {p}"
            if acked is None:
                assert offset == -1 or offset in c.sent[p], \
                    f"{where}: offset {offset} was never committed"
                continue
            assert offset >= acked, (
                f"{where}: committed offset {offset} is older than the acknowledged {acked}")
            assert offset in c.sent[p], f"{where}: offset {offset} was never committed"


def test_acknowledged_commits_survive_sigkill(
    kcsim_factory: Callable[..., Any], unique_name: Callable[[str], str]
) -> None:
    """Kill -9 at random moments during a pipelined commit storm; nothing acked is lost."""
    seed = random.randrange(1 << 32)
    rng = random.Random(seed)
    server = kcsim_factory(segment_bytes=32 * 1024, compaction_interval_ms=100,
                           fsync=POLICIES[0])
    with Wire.to(server) as wire:
        wire.create_topic(TOPIC, PARTITIONS)
    committers = [Committer(unique_name(f"storm{i}")) for i in range(CLIENTS)]
    runs_with_acks = 0
    for iteration in range(ITERATIONS):
        context = f"seed {seed}, run {iteration} (fsync={server.settings['fsync']})"
        committers = storm_then_kill(server, committers, rng.uniform(0.0, MAX_STORM_S), context)
        runs_with_acks += any(c.acked_this_run for c in committers)
        server.settings["fsync"] = POLICIES[(iteration + 1) % len(POLICIES)]
        server.start()
        check_acknowledged(server, committers, context)
    assert server.stop() == 0
    assert runs_with_acks >= ITERATIONS // 2, (
        f"only {runs_with_acks} of {ITERATIONS} runs had acknowledged commits before the kill")
    errors = [line for line in server.stderr().splitlines()
              if " ERROR " in line or " CRITICAL " in line]
    assert not errors, "\n".join(errors)
