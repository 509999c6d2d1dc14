"""Instructions a `kcsim serve` executes per request, counted by valgrind's callgrind.

A CPU time on a busy machine scatters by a few percent between rounds, as much as the
changes worth measuring; an instruction count does not depend on what else runs (two
lives of one server differ by about 1%: how the requests fall into the shell's
batches). The server runs under callgrind with instrumentation off while it starts, its
member joins and the warm-up runs; its clock is frozen through the control API (so no
timer fires more often because valgrind is slow); then instrumentation is on for
`REQUESTS` requests and the counters are dumped.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from kcsim.tools.control_client import ControlClient

from . import classic as c
from .admin import ensure_topic
from .client import BenchError, Frame, LoadClient
from .harness import Side
from .rebalance import Driver, Member

if TYPE_CHECKING:
    from .harness import RunContext

REQUESTS = 3000
WARMUP = 2000
START_S = 240.0  # a server starts 30-60 times slower under valgrind
GROUP = "bench-instr"
MIXES = ("OffsetCommit", "Heartbeat")
_CONTROL = re.compile(r"control API (http://[^\s;]+)")
_TOTALS = re.compile(rb"^totals: (\d+)", re.MULTILINE)


def missing_tools() -> str | None:
    """Why instructions cannot be counted here, or None."""
    missing = [t for t in ("valgrind", "callgrind_control") if shutil.which(t) is None]
    return f"{' and '.join(missing)} not installed (Debian: valgrind)" if missing else None


def mix_frame(mix: str, member: Member) -> Frame:
    """The request a joined member sends over and over: a commit of every partition of the
    bench topic, or a heartbeat."""
    if mix == "OffsetCommit":
        return c.commit_frame(GROUP, 7, member.member_id, member.generation)
    return c.heartbeat_frame(GROUP, member.generation, member.member_id)


def _callgrind(args: list[str], pid: int) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True,
                   timeout=120)


def per_request(ctx: RunContext, what: str, args: list[str], mix: str, in_flight: int,
                out: Path) -> float:
    """Instructions per request of one life of `kcsim serve args` (with ctx's kcsim):
    `mix` sent by one member of a classic group, `in_flight` at a time."""
    srv = ctx.kcsim([*args, "--control-port", "0"])
    srv.argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                f"--callgrind-out-file={out}", *srv.argv]
    side = Side(ctx, what, "kcsim", srv)
    counted: list[float] = []

    def run(side: Side) -> None:
        server = side.server
        server.start(timeout=START_S)
        found = _CONTROL.search(server.ready_line)
        if found is None:
            raise BenchError(f"no control API in the ready line {server.ready_line!r}")
        with LoadClient(server.host, server.port, stall_timeout=START_S) as client:
            ensure_topic(client, c.TOPIC, c.PARTITIONS)
            member = Member(GROUP, "kcsim-bench-member", 0, session_ms=600_000)
            with Driver(server.host, server.port, 1) as driver:
                driver.run([member])
            frame = mix_frame(mix, member)
            answer = client.call(frame)
            errors = ([p.error_code for t in answer.topics for p in t.partitions]
                      if mix == "OffsetCommit" else [answer.error_code])
            if any(errors):
                raise BenchError(f"the member's {mix} answered errors {errors}")
            client.run(lambda _i: frame, in_flight=in_flight, max_requests=WARMUP)
            ControlClient(found.group(1)).call("POST", "/clock/freeze")
            _callgrind(["-i", "on"], server.pid)
            result = client.run(lambda _i: frame, in_flight=in_flight, max_requests=REQUESTS)
            _callgrind(["-i", "off"], server.pid)
            _callgrind(["-d"], server.pid)
        dumped = Path(f"{out}.1")
        totals = _TOTALS.search(dumped.read_bytes()) if dumped.exists() else None
        if totals is None:
            raise BenchError(f"callgrind wrote no totals to {dumped}")
        counted.append(int(totals.group(1)) / result.requests)

    with srv:
        side.attempt(run)
    if side.error is not None:
        raise BenchError(side.error)
    return counted[0]
