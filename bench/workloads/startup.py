"""Start-up: how long until a server accepts, as a process and embedded in Python.

`kcsim serve` is timed from just before the process is spawned until a TCP
connection to its port succeeds; the embedded server from `EmbeddedServer(...)
.start()` until it returns, in a fresh interpreter that has already imported it
(import time, paid once per test session, is kept apart in the JSON); the first
start in a process is shown on its own row since it pays for lazy imports. Runs
alternate between kcsim and the floor so background load affects both alike.

kcsim and the bench are compiled to bytecode first, as `pip install` leaves an
installed kcsim: otherwise the figures would time Python compiling the source,
in every process where PYTHONDONTWRITEBYTECODE is set and in the first one
after any source change elsewhere, and would depend on which ran before.
"""

from __future__ import annotations

import compileall
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import time

from ..harness import BASELINE, RunContext, Side, figures, outcomes
from ..measure import BackgroundMeter
from ..registry import Figure, at_most, workload
from ..servers import ROOT, ServerError

CLI_TARGET_S = 0.3
EMBEDDED_TARGET_MS = 50.0


def _cache_bytecode(ctx: RunContext) -> None:
    """Write the bytecode of kcsim and the bench where it is missing or stale, where they
    are imported from (for kcsim, the installed package: under an editable install, the
    files linked from build/, whose bytecode is kept beside the links), and the baseline's."""
    for package in ("kcsim", "bench"):
        spec = importlib.util.find_spec(package)
        for path in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(path, quiet=1)
    if ctx.baseline is not None:
        compileall.compile_dir(ctx.baseline.path / "kcsim", quiet=1)


def _process_start(side: Side) -> None:
    srv = side.ctx.server(side.name)
    t0 = time.perf_counter()
    with srv:
        side.srv = srv
        srv.start()
        socket.create_connection((srv.host, srv.port), timeout=5).close()
        side.state.setdefault("cli", []).append(time.perf_counter() - t0)
    side.srv = None  # stopped on purpose: not a crash


def _embedded(side: Side, runs: int) -> None:
    baseline = side.ctx.baseline if side.name == BASELINE else None
    kind = "floor" if side.name == "floor" else "kcsim"
    cmd = [sys.executable, "-m", "bench.embedded_probe", kind, str(runs)]
    env = None if baseline is None else {**os.environ, "PYTHONPATH": str(baseline.path)}
    proc = subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env=env)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
        raise ServerError(f"embedded probe exited with {proc.returncode}: {tail}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    ms = [x * 1e3 for x in got["start_s"]]
    side.values["embedded"] = statistics.median(ms)
    side.values["embedded first"] = ms[0]
    side.extra["embedded"] = {"runs_ms": [round(x, 2) for x in ms],
                              "stop_ms": [round(x * 1e3, 2) for x in got["stop_s"]],
                              "import_ms": round(got["import_s"] * 1e3, 1)}


@workload("startup", "startup", order=40)
def startup(ctx: RunContext) -> list[Figure]:
    """`kcsim serve` to accepting, and EmbeddedServer start, medians of N runs."""
    n = ctx.settings.startup_runs
    sides = [Side(ctx, "startup", name, None) for name in ctx.sides]
    ctx.log(f"startup: {' and '.join(ctx.sides)} alternating, {n} runs each")
    _cache_bytecode(ctx)
    with BackgroundMeter() as cli_load:
        for _ in range(n):
            for side in sides:
                side.attempt(_process_start)
    for side in sides:
        runs = side.state.get("cli")
        if runs and side.error is None:
            side.values["cli"] = statistics.median(runs)
            side.extra["cli"] = {"runs_s": [round(r, 4) for r in runs],
                                 "other_processes_cpu_share": cli_load.share}
        with BackgroundMeter() as emb_load:
            side.attempt(_embedded, n)
        if "embedded" in side.extra:
            side.extra["embedded"]["other_processes_cpu_share"] = emb_load.share
    return figures("startup", outcomes(sides), [
        ("cli", f"process start to accepting, median of {n}", "s",
         at_most(CLI_TARGET_S, "s")),
        ("embedded", f"embedded start() after import, median of {n}", "ms",
         at_most(EMBEDDED_TARGET_MS, "ms")),
        ("embedded first", "embedded start(), first in the process", "ms", None),
    ])

