"""What watching the coordinator costs, counted rather than timed: the instructions a
`kcsim serve` executes per OffsetCommit and per Heartbeat with the group events and the
metrics on, against both off, under valgrind's callgrind.

observability_cost times the same thing in CPU seconds, and on a busy machine its rounds
scatter by a few percent either way, as much as the cost itself. An instruction count
does not depend on what else runs (`bench/callgrind.py`, which also says how a server's
life is counted): REQUESTS requests, IN_FLIGHT at a time, by LIVES servers of each
configuration per mix, the median of each.

Without valgrind (a Debian package) the figures say so and are left empty.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..callgrind import MIXES, REQUESTS, missing_tools, per_request
from ..client import BenchError
from ..registry import Figure, at_most, workload
from .observability import TARGET_PERCENT, _flags

if TYPE_CHECKING:
    from ..harness import RunContext

LIVES = 2
IN_FLIGHT = 16


@workload("observability_instructions", "request_rate", order=26)
def observability_instructions(ctx: RunContext) -> list[Figure]:
    """Instructions per OffsetCommit and per Heartbeat with events and metrics on, against off."""
    error = missing_tools()
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
                        counts[config].append(per_request(
                            ctx, "observability_instructions", _flags(config == "on"), mix,
                            IN_FLIGHT, Path(tmp) / f"{mix}.{config}.{life}"))
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
