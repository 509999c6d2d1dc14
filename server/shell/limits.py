"""The open-file limit: every connection holds a descriptor, so this limit caps connections.

Shells often start programs with a soft limit of 1024 under a much higher hard
limit; a broker raises its soft limit to the hard one at start (Kafka's service
units set LimitNOFILE) so that the hard limit, the administrator's choice, is
what bounds connections, not an interactive default.
"""

from __future__ import annotations

import logging
import os
import resource

log = logging.getLogger("kcsim.server")

# Descriptors kept beyond those open at start: segments rolled, partitions created,
# compaction's temporary files.
HEADROOM = 64
# Where the hard limit is "unlimited" the kernel still has a ceiling: try these.
_UNLIMITED_TARGETS = (1 << 20, 10240)


def raise_open_file_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    targets = (hard,) if hard != resource.RLIM_INFINITY else _UNLIMITED_TARGETS
    for target in targets:
        if soft == resource.RLIM_INFINITY or soft >= target:
            break
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            continue  # above the kernel's ceiling: try a lower one
        break
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def open_descriptors() -> int:
    """Descriptors this process holds now (0 where the system does not list them)."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(listing)) - 1  # less the one listing it
        except OSError:
            continue
    return 0


def log_connection_room(limit: int) -> None:
    """Say how many connections the open-file limit leaves room for."""
    if limit == resource.RLIM_INFINITY:
        log.info("no open-file limit: connections are bounded by memory only")
        return
    reserve = open_descriptors() + HEADROOM
    log.info("open-file limit %d: room for about %d connections (%d descriptors kept for "
             "log segments, partition files and the listener)", limit, max(limit - reserve, 0),
             reserve)
