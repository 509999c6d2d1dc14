"""What watching the coordinator costs, counted rather than timed: the instructions a
`kcsim serve` executes per OffsetCommit and per Heartbeat with the group events and the
metrics on, against both off, under valgrind's callgrind.

observability_cost times the same thing in CPU seconds, and on a busy machine its rounds
scatter by a few percent either way, as much as the cost itself. An instruction count
does not depend on what else runs: two lives of the same server differ by about 1%
(how the requests fall into the shell's batches). Each server runs under callgrind with
instrumentation off while it starts, its member joins and the warm-up runs; its clock is
frozen through the control API (so no timer fires more often because valgrind is slow);
then instrumentation is on for REQUESTS pipelined requests and the counters are dumped.
LIVES servers of each configuration per mix, the median of each.

Without valgrind (a Debian package) the figures say so and are left empty.
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from kcsim.tools.control_client import ControlClient

from .. import classic as c
from ..admin import ensure_topic
from ..client import BenchError, Frame, LoadClient
from ..harness import RunContext, Side
from ..rebalance import Driver, Member
from ..registry import Figure, at_most, workload
from .observability import MIXES, TARGET_PERCENT, _flags

REQUESTS = 3000
WARMUP = 2000
LIVES = 2
IN_FLIGHT = 16
START_S = 240.0  # a server starts 30-60 times slower under valgrind
_CONTROL = re.compile(r"control API (http://[^\s;]+)")
_TOTALS = re.compile(rb"^totals: (\d+)", re.MULTILINE)


def _frame(mix: str, member: Member) -> Frame:
    if mix == "OffsetCommit":
        return c.commit_frame("bench-obs", 7, member.member_id, member.generation)
    return c.heartbeat_frame("bench-obs", member.generation, member.member_id)


def _callgrind(args: list[str], pid: int) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True,
                   timeout=120)


def _one_life(ctx: RunContext, mix: str, on: bool, out: Path) -> float:
    """Instructions per request of one server's life (valgrind's own count)."""
    srv = ctx.kcsim([*_flags(on), "--control-port", "0"])
    srv.argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                f"--callgrind-out-file={out}", *srv.argv]
    side = Side(ctx, "observability_instructions", f"kcsim ({'on' if on else 'off'})", srv)
    counted: list[float] = []

    def run(side: Side) -> None:
        server = side.server
        server.start(timeout=START_S)
        found = _CONTROL.search(server.ready_line)
        if found is None:
            raise BenchError(f"no control API in the ready line {server.ready_line!r}")
        with LoadClient(server.host, server.port, stall_timeout=START_S) as client:
            ensure_topic(client, c.TOPIC, c.PARTITIONS)
            member = Member("bench-obs", "kcsim-bench-member", 0, session_ms=600_000)
            with Driver(server.host, server.port, 1) as driver:
                driver.run([member])
            frame = _frame(mix, member)
            answer = client.call(frame)
            errors = ([p.error_code for t in answer.topics for p in t.partitions]
                      if mix == "OffsetCommit" else [answer.error_code])
            if any(errors):
                raise BenchError(f"the member's {mix} answered errors {errors}")
            client.run(lambda _i: frame, in_flight=IN_FLIGHT, max_requests=WARMUP)
            ControlClient(found.group(1)).call("POST", "/clock/freeze")
            _callgrind(["-i", "on"], server.pid)
            result = client.run(lambda _i: frame, in_flight=IN_FLIGHT, max_requests=REQUESTS)
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


@workload("observability_instructions", "request_rate", order=26)
def observability_instructions(ctx: RunContext) -> list[Figure]:
    """Instructions per OffsetCommit and per Heartbeat with events and metrics on, against off."""
    missing = [t for t in ("valgrind", "callgrind_control") if shutil.which(t) is None]
    error = f"{' and '.join(missing)} not installed (Debian: valgrind)" if missing else None
    ctx.log(f"observability_instructions: {LIVES} lives of each under callgrind, "
            f"{REQUESTS} requests each" if error is None else
            f"observability_instructions: skipped, {error}")
    figures = []
    with tempfile.TemporaryDirectory(prefix="kcsim-bench-callgrind-") as tmp:
        for mix in MIXES:
            counts: dict[str, list[float]] = {"off": [], "on": []}
            for life in range(LIVES if error is None else 0):
                for config in ("off", "on") if life % 2 == 0 else ("on", "off"):
                    try:
                        counts[config].append(_one_life(
                            ctx, mix, config == "on", Path(tmp) / f"{mix}.{config}.{life}"))
                    except (BenchError, OSError, subprocess.SubprocessError) as exc:
                        error = f"{type(exc).__name__}: {exc}"
                        break
            medians = {k: statistics.median(v) if v and error is None else None
                       for k, v in counts.items()}
            extra: dict[str, Any] = {k: [round(x) for x in v] for k, v in counts.items()}
            for config, value in medians.items():
                figures.append(Figure("observability_instructions",
                                      f"instructions/{mix}, events and metrics {config}",
                                      "instr", value, None, kcsim_error=error,
                                      extra={"kcsim": extra}))
            off, on = medians["off"], medians["on"]
            added = (on / off - 1) * 100 if off and on is not None else None
            figures.append(Figure(
                "observability_instructions",
                f"instructions/{mix} added by events and metrics", "%", added, None,
                at_most(TARGET_PERCENT, "%"), kcsim_error=error, extra={"kcsim": extra}))
    return figures
