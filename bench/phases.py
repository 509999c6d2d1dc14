"""Running one kcsim beside floors that change between phases, and the load patterns of
the group workloads: timed repeated calls, connections cycling frames, answer checks.

`RunContext.paired` gives one floor for a whole workload; workloads whose floor
answer depends on the phase (1,000 groups, then 10,000) keep one kcsim with its
state up and start a floor per phase, then fold the floors' values into one
outcome so the table still shows kcsim beside the floor. A baseline kcsim
(`--baseline`) keeps its state up for the whole workload, as kcsim does.
"""

from __future__ import annotations

import statistics
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from . import cpuclock, procstat
from .client import BenchError, Frame, LoadClient, PhaseResult
from .harness import Outcome, RunContext, Side, outcomes
from .measure import CpuMeter, CpuSample

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence


def _start(side: Side) -> None:
    side.server.start()


@contextmanager
def one_side(ctx: RunContext, what: str, name: str, *, table: dict[int, bytes] | None = None,
             kcsim_args: list[str] | None = None) -> Iterator[Side | None]:
    """A started server of one kind (None when the run leaves that side out)."""
    if name not in ctx.sides:
        yield None
        return
    srv = ctx.server(name, table, kcsim_args)
    ctx.log(f"{what}: {name}")
    with srv:
        side = Side(ctx, what, name, srv)
        side.attempt(_start)
        yield side
    side.report_stderr()


@contextmanager
def beside(ctx: RunContext, what: str, baseline: Side | None,
           table: dict[int, bytes]) -> Iterator[Side | None]:
    """What a phase measures kcsim beside: the run's baseline, up for the whole workload,
    or else a floor answering from this phase's `table`."""
    if baseline is not None:
        yield baseline
        return
    with one_side(ctx, what, "floor", table=table) as floor:
        yield floor


def merged(sides: Sequence[Side | None]) -> dict[str, Outcome]:
    """Outcomes per side name, several sides of one name (successive floors) merged."""
    by_name: dict[str, Side] = {}
    for side in sides:
        if side is None:
            continue
        first = by_name.setdefault(side.name, side)
        if first is not side:
            first.values.update(side.values)
            first.extra.update(side.extra)
            first.error = first.error or side.error
    return outcomes(list(by_name.values()))


def alternate(sides: Sequence[Side | None], rounds: int, fn: Callable[..., Any], *args: Any) -> None:
    """`fn` on every side, `rounds` times, swapping the order each round so background
    load falls on both alike."""
    live = [s for s in sides if s is not None]
    for r in range(rounds):
        for side in live if r % 2 == 0 else live[::-1]:
            side.attempt(fn, *args)


class SameAnswer:
    """Response check for a stream of identical requests: an answer equal to the last
    approved one passes at the cost of a comparison; any other is decoded and judged."""

    def __init__(self, judge: Callable[[Any], str | None]) -> None:
        self.judge = judge
        self.approved: bytes | None = None

    def __call__(self, _idx: int, frame: Frame, raw: bytes) -> None:
        body = raw[4:]
        if body == self.approved:
            return
        problem = self.judge(frame.decode_response(raw))
        if problem:
            raise BenchError(problem)
        self.approved = body


class Calls:
    """Wall time and server CPU of each of repeated calls (CPU from the server's CPU clock,
    since a call may cost well under /proc's 10 ms resolution). Figures are medians, which
    a burst of load from other processes during a few calls does not move."""

    def __init__(self) -> None:
        self.walls: list[float] = []
        self.cpus: list[float] = []
        self.counts: list[int] = []
        self.other = 0.0
        self.ticked = 0.0  # the same CPU from /proc, as a cross-check of the clock

    def timed(self, pid: int, fn: Callable[[], int | tuple[int, float]]) -> None:
        """Time one call of `fn`, which returns how many requests it sent, or that and the
        wall time it measured itself (when only part of the call counts)."""
        busy0 = procstat.machine_busy_seconds()
        own0 = procstat.own_cpu_seconds()
        tick0 = procstat.cpu_seconds(pid)
        cpu0 = cpuclock.cpu_seconds(pid)
        t0 = time.perf_counter()
        got = fn()
        wall = time.perf_counter() - t0
        cpu = cpuclock.cpu_seconds(pid) - cpu0
        self.ticked += procstat.cpu_seconds(pid) - tick0
        n, wall = got if isinstance(got, tuple) else (got, wall)
        own = procstat.own_cpu_seconds() - own0
        self.walls.append(wall)
        self.cpus.append(cpu)
        self.counts.append(max(n, 1))
        self.other += max(0.0, procstat.machine_busy_seconds() - busy0 - cpu - own)

    def median_ms(self) -> float:
        return statistics.median(self.walls) * 1e3

    def cpu_ms_per_call(self) -> float:
        return statistics.median(self.cpus) * 1e3

    def cpu_us_per_request(self) -> float:
        per_request = [c / n for c, n in zip(self.cpus, self.counts, strict=True)]
        return statistics.median(per_request) * 1e6

    def detail(self) -> dict[str, Any]:
        total = sum(self.walls)
        return {"calls": len(self.walls), "requests": sum(self.counts),
                "wall_ms_median": round(self.median_ms(), 3),
                "wall_ms_min": round(min(self.walls) * 1e3, 3),
                "server_cpu_ms_median": round(self.cpu_ms_per_call(), 3),
                "server_cpu_ms_min": round(min(self.cpus) * 1e3, 3),
                "server_cpu_s": round(sum(self.cpus), 3),
                "server_cpu_s_from_proc_stat": round(self.ticked, 2),
                # /proc/stat counts in 10 ms ticks: over less than a second the share is noise.
                "other_processes_cpu_share": round(self.other / total, 2) if total >= 1 else None}


class Rings:
    """Each connection of a client cycling through its own frames, every answer checked;
    timed runs are kept as (result, CPU) slices for `measure.combine`."""

    def __init__(self, client: LoadClient, rings: list[list[Frame]],
                 check: Callable[[int, Frame, bytes], None]) -> None:
        self.client = client
        self.rings = rings
        self.cursor = [0] * len(rings)
        self.check = check
        self.slices: dict[str, list[tuple[PhaseResult, CpuSample]]] = {}

    def _next(self, idx: int) -> Frame:
        ring = self.rings[idx]
        i = self.cursor[idx]
        self.cursor[idx] = (i + 1) % len(ring)
        return ring[i]

    def run(self, pid: int, label: str | None, in_flight: int, seconds: float,
            only: int | None = None) -> None:
        """Load for `seconds`; timed under `label` (None: warm-up, not timed)."""
        if label is None:
            self.client.run(self._next, self.check, in_flight=in_flight, duration=seconds,
                            only=only)
            return
        with CpuMeter(pid) as meter:
            result = self.client.run(self._next, self.check, in_flight=in_flight,
                                     duration=seconds, only=only, latencies=True)
        assert meter.sample is not None
        self.slices.setdefault(label, []).append((result, meter.sample))

    def close(self) -> None:
        self.client.close()


def sweep(client: LoadClient, frames: list[Frame], in_flight: int, conn: int = 0,
          check: Callable[[int, Frame, bytes], None] | None = None) -> int:
    """Send `frames` once each over one connection, `in_flight` at a time; returns the count."""
    it = iter(frames)

    def next_frame(_idx: int) -> Frame | None:
        return next(it, None)

    return client.run(next_frame, check, in_flight=in_flight, only=conn).requests
