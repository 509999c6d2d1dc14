"""The Spark pipeline: a large record log read, compacted and reported on, local[1] vs local[2].

- pipeline: a record log of `--pipeline-records` OffsetCommit records (10,000,000
  by default: half the partitions committed twice) is written by kcsim's own
  RecordLog in the shape the server writes (10 partitions per append: one batch
  frame, as one 10-partition OffsetCommit), as the replay bench writes its log.
  Then, once on `local[1]` and once on `local[2]`, each in its own process (so
  each has its own driver JVM): the records view is read in full, the log is
  compacted (into another directory) and reported on, with records/s for each.
  The embedded compactor (storage.compact) runs on a copy of the same log beside.

Targets: the Spark compaction's segments are byte for byte the embedded
compactor's (so a server replays the same state from both); `local[2]` reads at
least 1.6x faster than `local[1]`; the driver's peak RSS (its JVM and its
Python process together) stays under 2 GiB.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..registry import Figure, at_least, at_most, workload
from .storage import SEGMENT_BYTES, build_log

if TYPE_CHECKING:
    from ..harness import RunContext

MASTERS = ("local[1]", "local[2]")
SPEEDUP_TARGET = 1.6
DRIVER_RSS_TARGET_MIB = 2048
RETENTION_MS = 24 * 3600 * 1000
CHILD_TIMEOUT_S = 3 * 3600


@workload("pipeline", "pipeline", order=70, in_process=True)
def pipeline(ctx: RunContext) -> list[Figure]:
    """Spark pipeline over a large record log: read, compact, report; local[1] vs local[2]."""
    if "kcsim" not in ctx.sides:
        return []
    records = ctx.settings.pipeline_records
    values: dict[str, float] = {}
    extra: dict[str, Any] = {"records": records}
    error: str | None = None
    work = Path(tempfile.mkdtemp(prefix="kcsim-bench-pipeline-"))
    try:
        data = work / "data"
        ctx.log(f"pipeline: writing {records:,} records")
        extra["log"] = build_log(data, records // 2, passes=2)
        now_ms = int(time.time() * 1000)
        ctx.log("pipeline: embedded compaction")
        embedded = _embedded(data, work / "embedded", now_ms)
        extra["embedded"] = embedded
        values["embedded"] = embedded["records_before"] / embedded["compact_s"]
        for master in MASTERS:
            ctx.log(f"pipeline: {master}")
            run = _child(data, work / master.replace("[", "-").strip("]"), master, now_ms)
            extra[master] = run
            for step in ("read", "compact", "report"):
                values[f"{master} {step}"] = run["records"] / run[f"{step}_s"]
            values[f"{master} rss"] = run["driver_peak_rss_mib"]
            values[f"{master} identical"] = float(run["segments"] == embedded["segments"])
        values["speedup"] = values["local[2] read"] / values["local[1] read"]
        values["identical"] = min(values[f"{m} identical"] for m in MASTERS)
        values["rss"] = max(values[f"{m} rss"] for m in MASTERS)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        ctx.log(f"[red]pipeline failed:[/] {error}")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def fig(key: str, metric: str, unit: str, target: Any = None, more: bool = False) -> Figure:
        return Figure("pipeline", metric, unit, values.get(key), None, target,
                      kcsim_error=None if key in values else error or "not measured",
                      extra=extra if more else {})

    label = f"{records:,}-record log"
    figures = [fig("embedded", f"embedded compactor (storage.compact), {label}", "rec/s",
                   more=True)]
    for master in MASTERS:
        figures += [
            fig(f"{master} read", f"{master}: read the records view", "rec/s"),
            fig(f"{master} compact", f"{master}: compact", "rec/s"),
            fig(f"{master} report", f"{master}: report (four tables)", "rec/s"),
        ]
    figures += [
        fig("speedup", "read local[2] / local[1]", "x", at_least(SPEEDUP_TARGET, "x")),
        fig("identical", "Spark compaction's segments identical to the embedded's (1 = yes)",
            "", at_least(1, "")),
        fig("rss", "driver peak RSS (JVM + Python)", "MiB", at_most(DRIVER_RSS_TARGET_MIB, "MiB")),
    ]
    return figures


def _embedded(data: Path, copy: Path, now_ms: int) -> dict[str, Any]:
    from kcsim.server.state.record_types import RECORD_TYPES
    from kcsim.storage import RecordLog, compact

    shutil.copytree(data / "meta", copy / "meta")
    with RecordLog.open(copy / "meta", types=RECORD_TYPES, segment_bytes=SEGMENT_BYTES) as log:
        log.closed_segments()  # the first-open validation a server does at start-up
        started = time.perf_counter()
        stats = compact(log, tombstone_retention_ms=RETENTION_MS, now_ms=now_ms)
        elapsed = time.perf_counter() - started
    out = {"compact_s": round(elapsed, 3), "records_before": stats.records_before,
           "records_after": stats.records_after, "segments": _digests(copy / "meta")}
    shutil.rmtree(copy)
    return out


def _digests(meta: Path) -> dict[str, str]:
    return {name: hashlib.sha256((meta / name).read_bytes()).hexdigest()
            for name in sorted(os.listdir(meta)) if name.endswith(".log")}


def _child(data: Path, work: Path, master: str, now_ms: int) -> dict[str, Any]:
    """One master's run in its own process: a fresh driver JVM whose peak RSS is its own."""
    work.mkdir()
    run = spark_child("bench.workloads.pipeline", [str(data), str(work), master, str(now_ms)],
                      work / "result.json", f"{master} run", CHILD_TIMEOUT_S)
    shutil.rmtree(work, ignore_errors=True)
    return run


def spark_child(module: str, args: list[str], result: Path, what: str,
                timeout: float) -> dict[str, Any]:
    """Run ``python -m module *args result`` (a Spark driver of its own, loopback only)
    and return the JSON it wrote to ``result``."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args, str(result)],
        capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable},
        cwd=Path(__file__).resolve().parents[2])
    if done.returncode != 0 or not result.exists():
        raise RuntimeError(f"{what} failed ({done.returncode}): {done.stderr[-2000:]}")
    run: dict[str, Any] = json.loads(result.read_text())
    return run


def _run_child(data: str, work: str, master: str, now_ms: int, result: str) -> None:
    from kcsim.pipeline import report
    from kcsim.pipeline.compact import compact
    from kcsim.pipeline.session import spark_session

    spark = spark_session(master, f"kcsim-bench-{master}", {
        "spark.ui.enabled": "false", "spark.driver.memory": "1g",
        "spark.sql.shuffle.partitions": "8"})
    spark.sparkContext.setLogLevel("ERROR")
    jvm_pid = int(spark.sparkContext._jvm.ProcessHandle.current().pid())  # type: ignore[union-attr]
    out: dict[str, Any] = {"master": master}
    started = time.perf_counter()
    out["records"] = spark.read.format("kcsim").load(data).count()
    out["read_s"] = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    stats = compact(spark, data, out=os.path.join(work, "compacted"),
                    tombstone_retention_ms=RETENTION_MS, now_ms=now_ms,
                    segment_bytes=SEGMENT_BYTES)
    out["compact_s"] = round(time.perf_counter() - started, 3)
    out["records_after"] = stats.records_after
    out["segments"] = _digests(Path(work) / "compacted" / "meta")
    started = time.perf_counter()
    report.write(spark, data, os.path.join(work, "report"))
    out["report_s"] = round(time.perf_counter() - started, 3)
    out["driver_jvm_peak_rss_mib"] = round(_peak_kib(jvm_pid) / 1024, 1)
    out["driver_python_peak_rss_mib"] = round(_peak_kib(os.getpid()) / 1024, 1)
    out["driver_peak_rss_mib"] = round(out["driver_jvm_peak_rss_mib"]
                                       + out["driver_python_peak_rss_mib"], 1)
    spark.stop()
    Path(result).write_text(json.dumps(out))


def _peak_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1])
    return 0


if __name__ == "__main__":
    _run_child(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
