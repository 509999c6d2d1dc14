"""`kcsim pipeline compact|report|lag`: the Spark pipeline from the command line.

Registered with the `kcsim` command through the ``kcsim.commands`` entry
point; this module imports only argparse, and Spark is started by the
subcommand that needs it, so `kcsim serve` never loads PySpark.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any

from .extra import require_spark

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from pyspark.sql import SparkSession

DESCRIPTION = (
    "Run kcsim's data pipeline on Spark: compact a data directory's record log, or "
    "report on its consumer groups. Runs on local[*] unless --master names a cluster; "
    "on a cluster the data directory must be at the same path on every executor "
    "(a shared filesystem) and kcsim[spark] installed there."
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pipeline", help="compact the log and report on groups, on Spark",
                       description=DESCRIPTION)
    commands = p.add_subparsers(dest="pipeline_command", required=True)

    compact = commands.add_parser(
        "compact", help="compact the record log (in place, or into --out)",
        description="Keep the newest record per key of the closed segments and drop "
        "tombstones older than the retention, as the server's own compaction does. In "
        "place the swap is crash-safe (the compaction manifest is its commit point); with "
        "--out a new data directory is written and the source left untouched. Refused "
        "while a server holds the data directory.")
    _common(compact)
    compact.add_argument("--out", help="write a compacted copy of the data directory here")
    compact.add_argument("--tombstone-retention-ms", type=int, default=None,
                         help="drop tombstones written longer ago than this "
                         "(default: the server's default)")
    compact.add_argument("--segment-bytes", type=int, default=None,
                         help="largest output segment (default: the server's default)")
    compact.add_argument("--now-ms", type=int, default=None,
                         help="the time tombstone ages are measured at (default: now)")
    compact.set_defaults(run=run_compact, parser=compact)

    report = commands.add_parser(
        "report", help="write consumer-group reports (Parquet and an HTML page)",
        description="Offset history, lag over time, rebalance timeline and a summary per "
        "group, as Parquet tables under --out, an HTML page (--out/report.html) and, when "
        "small, tables on the terminal.")
    _common(report)
    report.add_argument("--out", required=True, help="directory for the report")
    report.add_argument("--lag", metavar="DIR",
                        help="the lag job's output (`kcsim pipeline lag --out DIR`): the page "
                        "also draws the lag it measured over time, per group")
    report.add_argument("--max-rows", type=int, default=40,
                        help="print a table when it has at most this many rows (default 40)")
    report.set_defaults(run=run_report, parser=report)

    lag = commands.add_parser(
        "lag", help="consumer lag of any Kafka cluster over time (Parquet, console)",
        description="A Structured Streaming job: reads __consumer_offsets through Spark's "
        "Kafka connector, decodes Kafka's records, asks the cluster for log end offsets at "
        "each micro-batch and writes lag per group and partition. Works against kcsim and "
        "any Kafka cluster. Spark's connector is fetched with Maven once (--cache-dir).")
    lag.add_argument("--bootstrap-server", required=True, help="the cluster, host:port")
    lag.add_argument("--out", help="directory for the lag table (Parquet, appended)")
    lag.add_argument("--console", action="store_true", help="print each lag table")
    lag.add_argument("--page", help="an HTML page of the lag over time, rewritten after each "
                     "table (needs --out)")
    lag.add_argument("--once", action="store_true",
                     help="read what the topic holds now, write one table and stop")
    lag.add_argument("--trigger-ms", type=int, default=5000,
                     help="time between micro-batches (default 5000)")
    lag.add_argument("--checkpoint", help="the query's checkpoint directory (default: a "
                     "temporary one; the job re-reads __consumer_offsets at every start)")
    lag.add_argument("--cache-dir", default=os.path.join("~", ".cache", "kcsim"),
                     help="where Spark's Kafka connector is kept (default ~/.cache/kcsim)")
    lag.add_argument("--master", default=None,
                     help="Spark master URL (default local[*]), e.g. spark://host:7077")
    lag.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                     help="a Spark setting, repeatable")
    lag.set_defaults(run=run_lag, parser=lag)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", required=True, help="the kcsim data directory")
    p.add_argument("--master", default=None,
                   help="Spark master URL (default local[*]), e.g. spark://host:7077")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting, repeatable (e.g. spark.executor.memory=4g)")


def _session(args: argparse.Namespace, name: str, extra: dict[str, str] | None = None
             ) -> tuple[SparkSession, bool]:
    """The session to run on, and whether this command started it (and so stops it).

    In a process that already has a session (a notebook, a test), that one is used."""
    from pyspark.sql import SparkSession

    from .session import spark_session
    from .source import register

    active = SparkSession.getActiveSession()
    if active is not None:
        register(active)
        return active, False
    conf = dict(extra or {})
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"kcsim pipeline: --conf wants KEY=VALUE, got {item!r}")
        conf[key] = value
    spark = spark_session(args.master, f"kcsim-pipeline-{name}", conf)
    spark.sparkContext.setLogLevel("ERROR")
    return spark, True


def _warn_tears(data_dir: str) -> None:
    from .tears import find_tears

    for tear in find_tears(data_dir):
        print(f"kcsim pipeline: warning: torn tail in {tear.path} at byte {tear.position} "
              f"({tear.reason}); reading stops there, {tear.dropped_bytes} bytes left out",
              file=sys.stderr)


_STORAGE_ERROR = re.compile(r"kcsim\.storage\.errors\.\w+: (.*)")


def why(exc: BaseException) -> str:
    """The storage error behind a failed job (a worker's, wrapped by Spark), else the first line."""
    found = _STORAGE_ERROR.search(str(exc))
    if found:
        return found.group(1)
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _needs_spark(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """`run`, where the spark extra is installed; elsewhere a message naming it, and exit 2."""
    def checked(args: argparse.Namespace) -> int:
        try:
            require_spark()
        except ImportError as exc:
            print(f"kcsim pipeline: {exc}", file=sys.stderr)
            return 2
        return run(args)
    return checked


@_needs_spark
def run_compact(args: argparse.Namespace) -> int:
    from kcsim.storage import (
        DEFAULT_SEGMENT_BYTES,
        DEFAULT_TOMBSTONE_RETENTION_MS,
        DataDirLock,
        StorageError,
    )

    from .compact import compact

    if not os.path.isdir(args.data_dir):
        print(f"kcsim pipeline: {args.data_dir} is not a directory", file=sys.stderr)
        return 2
    try:  # fail fast, before Spark starts; compact() holds the lock for the whole run
        DataDirLock.acquire(args.data_dir).release()
    except StorageError as exc:
        print(f"kcsim pipeline: {exc}", file=sys.stderr)
        return 1
    spark, owned = _session(args, "compact")
    try:
        _warn_tears(args.data_dir)
        stats = compact(
            spark, args.data_dir, out=args.out,
            tombstone_retention_ms=(DEFAULT_TOMBSTONE_RETENTION_MS
                                    if args.tombstone_retention_ms is None
                                    else args.tombstone_retention_ms),
            segment_bytes=args.segment_bytes or DEFAULT_SEGMENT_BYTES, now_ms=args.now_ms)
    except Exception as exc:
        print(f"kcsim pipeline: {why(exc)}", file=sys.stderr)
        return 1
    finally:
        if owned:
            spark.stop()
    where = stats.out or args.data_dir
    if stats.skipped:
        print(f"nothing to compact in {args.data_dir}"
              + (f"; copied to {stats.out}" if stats.out else ""))
    else:
        print(f"compacted {stats.segments_before} segments ({stats.records_before} records, "
              f"{stats.bytes_before} bytes) into {stats.segments_after} "
              f"({stats.records_after} records, {stats.bytes_after} bytes), "
              f"{stats.tombstones_dropped} tombstones dropped, in {stats.duration_s:.1f} s: "
              f"{where}")
    return 0


@_needs_spark
def run_report(args: argparse.Namespace) -> int:
    from . import page, report

    if not os.path.isdir(args.data_dir):
        print(f"kcsim pipeline: {args.data_dir} is not a directory", file=sys.stderr)
        return 2
    if args.lag is not None and not os.path.isdir(args.lag):
        print(f"kcsim pipeline report: --lag {args.lag} is not a directory (give the lag "
              "job's --out)", file=sys.stderr)
        return 2
    spark, owned = _session(args, "report")
    try:
        _warn_tears(args.data_dir)
        paths = report.write(spark, args.data_dir, args.out)
    except Exception as exc:
        print(f"kcsim pipeline: {why(exc)}", file=sys.stderr)
        return 1
    finally:
        if owned:
            spark.stop()
    try:
        html = page.render(paths, os.path.join(args.out, "report.html"),
                           title=f"kcsim consumer groups: {os.path.abspath(args.data_dir)}",
                           lag_dir=args.lag)
    except Exception as exc:  # a --lag that is not the lag job's Parquet output, say
        print(f"kcsim pipeline report: cannot draw the page: {why(exc)}", file=sys.stderr)
        return 1
    report.print_tables(paths, args.max_rows)
    print(f"report written to {args.out} ({', '.join(sorted(paths))}; {html})")
    return 0


@_needs_spark
def run_lag(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from .connector import ConnectorUnavailable, connector_jars
    from .lag import lag_query

    if not args.out and not args.console:
        print("kcsim pipeline lag: give --out DIR, --console or both", file=sys.stderr)
        return 2
    if args.page and not args.out:
        print("kcsim pipeline lag: --page draws the tables --out writes; give --out",
              file=sys.stderr)
        return 2
    try:
        jars = connector_jars(Path(args.cache_dir).expanduser() / "spark-kafka")
    except ConnectorUnavailable as exc:
        print(f"kcsim pipeline lag: {exc}", file=sys.stderr)
        return 1
    spark, owned = _session(args, "lag", {"spark.jars": ",".join(map(str, jars))})

    def write(frame: Any) -> None:
        if args.out:
            frame.write.mode("append").parquet(args.out)
            if args.page:
                from .page import render_lag

                render_lag(args.out, args.page, f"consumer lag: {args.bootstrap_server}")
        if args.console:
            frame.show(truncate=False)

    try:
        with tempfile.TemporaryDirectory(prefix="kcsim-lag-") as scratch:
            writer = lag_query(spark, args.bootstrap_server, write).option(
                "checkpointLocation", args.checkpoint or scratch)
            writer = (writer.trigger(availableNow=True) if args.once
                      else writer.trigger(processingTime=f"{args.trigger_ms} milliseconds"))
            writer.start().awaitTermination()
    except KeyboardInterrupt:
        return 0
    except Exception as exc:
        print(f"kcsim pipeline lag: {why(exc)}", file=sys.stderr)
        return 1
    finally:
        if owned:
            spark.stop()
    return 0
