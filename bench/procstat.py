"""CPU time and memory of another process, read from /proc (no psutil dependency).

/proc/<pid>/stat counts the whole thread group, including threads that have
already exited, so worker threads of the server are charged to it too.
"""

from __future__ import annotations

import os

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of `pid` so far (resolution 1/CLK_TCK s)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        raw = f.read()
    # The command name may contain spaces and parentheses: split after the last ')'.
    fields = raw[raw.rindex(b")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / CLK_TCK


def _status_kib(pid: int, key: bytes) -> int:
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    raise KeyError(key.decode())


def rss_bytes(pid: int) -> int:
    """Resident set size now."""
    return _status_kib(pid, b"VmRSS:") * 1024


def peak_rss_bytes(pid: int) -> int:
    """Highest resident set size the process has had."""
    return _status_kib(pid, b"VmHWM:") * 1024


def own_cpu_seconds() -> float:
    """CPU time of this (the load client's) process."""
    return cpu_seconds(os.getpid())


def machine_busy_seconds() -> float:
    """CPU seconds all cores spent not idle (nor in iowait) since boot, from /proc/stat."""
    with open("/proc/stat", "rb") as f:
        cpu = f.readline().split()
    # user nice system idle iowait irq softirq steal (guest time is inside user)
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in cpu[1:9])
    return (user + nice + system + irq + softirq + steal) / CLK_TCK
