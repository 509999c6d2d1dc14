"""Timed phases with the server's CPU time read around them (never around warm-up)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Self

from . import cpuclock, procstat
from .client import Frame, LoadClient, PhaseResult


@dataclass
class CpuSample:
    """Server and client CPU seconds plus wall time spent over one timed phase; `other` is
    every other process's CPU on the machine meanwhile (noise from concurrent work)."""

    server: float
    client: float
    wall: float
    other: float


class CpuMeter:
    """`with CpuMeter(pid) as m:` around a timed phase; read `m.sample` after. The server's
    CPU comes from its CPU clock (`cpuclock`): a phase of tens of milliseconds would
    move /proc's 10 ms ticks by a handful."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.sample: CpuSample | None = None

    def __enter__(self) -> Self:
        self._m0 = procstat.machine_busy_seconds()
        self._s0 = cpuclock.cpu_seconds(self.pid)
        self._c0 = procstat.own_cpu_seconds()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        wall = time.perf_counter() - self._t0
        server = cpuclock.cpu_seconds(self.pid) - self._s0
        client = procstat.own_cpu_seconds() - self._c0
        busy = procstat.machine_busy_seconds() - self._m0
        self.sample = CpuSample(server, client, wall, max(0.0, busy - server - client))


class BackgroundMeter:
    """Share of a core used by processes other than this one and its reaped children
    (servers started and stopped inside the block), for phases without a long-lived pid."""

    def __init__(self) -> None:
        self.share: float | None = None

    @staticmethod
    def _ours() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    def __enter__(self) -> Self:
        self._m0 = procstat.machine_busy_seconds()
        self._o0 = self._ours()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        wall = time.perf_counter() - self._t0
        other = procstat.machine_busy_seconds() - self._m0 - (self._ours() - self._o0)
        self.share = round(max(0.0, other) / wall, 2) if wall > 0 else None


def repeat(client: LoadClient, pid: int, frame: Frame, in_flight: int,
           duration: float, timed: bool = True) -> tuple[PhaseResult, CpuSample | None]:
    """The same frame over and over, `in_flight` at a time, for `duration` seconds."""

    def same(_idx: int) -> Frame:
        return frame

    if not timed:
        return client.run(same, in_flight=in_flight, duration=duration), None
    with CpuMeter(pid) as meter:
        result = client.run(same, in_flight=in_flight, duration=duration, latencies=True)
    return result, meter.sample


def combine(slices: list[tuple[PhaseResult, CpuSample]]) -> tuple[PhaseResult, CpuSample]:
    """Several timed slices of one measurement added up into one."""
    results = [r for r, _ in slices]
    cpus = [c for _, c in slices]
    latencies = [x for r in results for x in r.latencies]
    return (PhaseResult(sum(r.requests for r in results), sum(r.elapsed for r in results),
                        sum(r.bytes_out for r in results), sum(r.bytes_in for r in results),
                        latencies),
            CpuSample(sum(c.server for c in cpus), sum(c.client for c in cpus),
                      sum(c.wall for c in cpus), sum(c.other for c in cpus)))


def per_request_extra(result: PhaseResult, cpu: CpuSample) -> dict[str, Any]:
    """The detail kept in JSON beside a request-rate figure."""
    n = max(result.requests, 1)
    return {
        "requests": result.requests,
        "seconds": round(result.elapsed, 3),
        "server_cpu_us_per_request": round(cpu.server / n * 1e6, 2),
        "server_cpu_s": round(cpu.server, 3),
        "server_cpu_share": round(cpu.server / cpu.wall, 3) if cpu.wall else None,
        "client_cpu_us_per_request": round(cpu.client / n * 1e6, 2),
        "other_processes_cpu_share": round(cpu.other / cpu.wall, 2) if cpu.wall else None,
        "latency_p50_us": _round(result.latency_us(0.5)),
        "latency_p99_us": _round(result.latency_us(0.99)),
        "request_bytes": result.bytes_out // n,
        "response_bytes": result.bytes_in // n,
    }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)
