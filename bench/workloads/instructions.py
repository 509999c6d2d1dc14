"""request_instructions: what one request costs kcsim, counted rather than timed.

The instructions `kcsim serve` (default settings, `--fsync never`) executes per
OffsetCommit of 10 partitions and per Heartbeat of one member of a classic group, with
1 and with 16 requests in flight on one connection, under valgrind's callgrind
(`bench/callgrind.py`). One life per figure: with 16 in flight two lives differ by
about 1%; with 1 in flight by up to 15% (the server then waits for every request, and
how that wait goes depends on how fast the load client answers), so that row shows a
change of that size only.

kcsim alone: with `--baseline REV` the baseline's column holds the same counts for that
revision, and the ratio is what a change costs or saves per request, free of the
machine's drift that CPU times suffer from.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..callgrind import MIXES, REQUESTS, missing_tools, per_request
from ..client import BenchError
from ..registry import Figure, workload

if TYPE_CHECKING:
    from ..harness import RunContext

IN_FLIGHT = (1, 16)
ARGS = ["--fsync", "never"]


@workload("request_instructions", "request_rate", order=27)
def request_instructions(ctx: RunContext) -> list[Figure]:
    """Instructions per OffsetCommit and per Heartbeat, 1 and 16 in flight, under callgrind."""
    if "kcsim" not in ctx.sides:
        return []
    error = missing_tools()
    ctx.log(f"request_instructions: {REQUESTS} requests of each under callgrind"
            if error is None else f"request_instructions: skipped, {error}")
    figures = []
    with tempfile.TemporaryDirectory(prefix="kcsim-bench-callgrind-") as tmp:
        for mix in MIXES:
            for k in IN_FLIGHT:
                value = None
                if error is None:
                    try:
                        value = per_request(ctx, "request_instructions", ARGS, mix, k,
                                            Path(tmp) / f"{mix}.{k}")
                    except (BenchError, OSError, subprocess.SubprocessError) as exc:
                        error = f"{type(exc).__name__}: {exc}"
                figures.append(Figure("request_instructions",
                                      f"instructions/{mix}, {k} in flight", "instr", value,
                                      None, kcsim_error=error if value is None else None))
    return figures
