"""Nanosecond CPU time of another process, for phases too short for /proc's 10 ms ticks.

Linux gives every process a CPU-time clock (clock_getcpuclockid): the scheduler's
exact runtime of all its threads, exited ones included. A 10-member rebalance
costs about a millisecond of server CPU, which /proc/<pid>/stat would round to
0 or 10; this clock resolves it. Where the clock cannot be read it falls back
to /proc.
"""

from __future__ import annotations

import time

from . import procstat

_CPUCLOCK_SCHED = 2


def _clock_id(pid: int) -> int:
    """The kernel's MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)."""
    return ((~pid) << 3) | _CPUCLOCK_SCHED


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of `pid` so far."""
    try:
        return time.clock_gettime(_clock_id(pid))
    except OSError:
        return procstat.cpu_seconds(pid)
