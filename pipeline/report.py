"""Reports about consumer groups from a data directory's history, as Spark tables.

- ``offset_history``: every commit of every group and partition with its time,
  the offset before it and the delta, rewinds (a negative delta) and admin
  resets (commits from outside the group, generation -1: the only commits
  accepted while the group has no members, or for a paused partition), offset
  deletions, and pauses and resumes of partitions;
- ``lag``: at each commit, the partition's log-end offset at that time (from
  the produced data's timestamps) and the lag behind it;
- ``timeline``: one row per generation (classic) or epoch (consumer group):
  state, members, who joined and who left, the assignment, time spent in it;
- ``summary``: one row per group: commits, rewinds, admin resets, rebalances,
  the longest time without a commit, the current lag, time per state.

The history is what the log holds: a compacted log keeps only the newest
record per key, so its report shows the last commit per partition.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from .group_history import GROUP_RECORD_TYPES, GroupHistory, fold

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

TABLES = ("offset_history", "lag", "timeline", "summary")

_TIMELINE_SCHEMA = (
    "group string, group_type string, generation long, state string, position long, "
    "start timestamp, end timestamp, duration_s double, protocol string, leader string, "
    "members array<string>, joined array<string>, left array<string>, "
    "assignment array<struct<member:string,topic:string,partitions:array<long>>>"
)


def write(spark: SparkSession, data_dir: str, out: str) -> dict[str, str]:
    """Compute the report's tables for ``data_dir`` and write each as Parquet under
    ``out/<table>``; returns their paths.

    Each table is written once and read back by the tables built from it, so the
    logs are read once each (the records twice: group state, then commits).
    """
    import shutil

    from pyspark.sql import functions as F

    paths = {name: os.path.join(out, name) for name in TABLES}
    records = spark.read.format("kcsim").load(data_dir)
    group_rows = _group_rows(records)
    history = fold(group_rows)
    _offset_history(spark, records, history).write.mode("overwrite").parquet(
        paths["offset_history"])
    offsets = spark.read.parquet(paths["offset_history"])
    newest = offsets.agg(F.max(F.unix_millis("time"))).first()
    latest = newest[0] if newest is not None else None  # an aggregate always has its one row
    last_ms = max([latest or 0] + [int(r["timestamp"].timestamp() * 1000) for r in group_rows])
    history.close(last_ms)
    ends_path = os.path.join(out, ".log_ends")
    messages = spark.read.format("kcsim").option("kind", "messages").load(data_dir)
    (messages.groupBy("topic", "partition", F.col("timestamp").alias("time"))
     .agg((F.max("offset") + 1).alias("log_end"))
     .write.mode("overwrite").parquet(ends_path))
    ends = spark.read.parquet(ends_path)
    try:
        _lag(offsets, ends).write.mode("overwrite").parquet(paths["lag"])
        _timeline(spark, history).write.mode("overwrite").parquet(paths["timeline"])
        timeline = spark.read.parquet(paths["timeline"])
        _summary(offsets, timeline, ends, last_ms).write.mode("overwrite").parquet(
            paths["summary"])
    finally:
        shutil.rmtree(ends_path, ignore_errors=True)
    return paths


def _group_rows(records: DataFrame) -> list[dict[str, Any]]:
    """The group-state records (few beside the commits), collected for the fold."""
    from pyspark.sql import functions as F

    wanted = records.where(F.col("record_type").isin(list(GROUP_RECORD_TYPES))).select(
        "position", "timestamp", "record_type", "tombstone", "group", "member_id",
        "protocol_type", "generation", "protocol", "leader", "members", "topics", "epoch",
        "topic_partitions", "name", "topic_id")
    rows: list[dict[str, Any]] = wanted.toArrow().to_pylist()
    return rows


def _offset_history(spark: SparkSession, records: DataFrame, history: GroupHistory) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    commits = records.where(F.col("record_type") == "offset_commit").select(
        "group", "topic", F.col("partition").cast("int").alias("partition"), "position",
        F.col("timestamp").alias("time"),
        F.when(F.col("tombstone"), F.lit("delete")).otherwise(F.lit("commit")).alias("event"),
        "offset", "leader_epoch", "metadata",
    )
    per_partition = Window.partitionBy("group", "topic", "partition").orderBy("position")
    commits = (commits
               .withColumn("previous_offset", F.lag("offset").over(per_partition))
               .withColumn("delta", F.col("offset") - F.col("previous_offset"))
               .withColumn("rewind", F.coalesce(F.col("delta") < 0, F.lit(False))))
    # Whether the group had members, and whether the partition was paused, at each commit:
    # the last such fact before it in the log (an as-of join as a running "last").
    activity = spark.createDataFrame(
        history.activity or [], "group string, position long, active boolean")
    paused = spark.createDataFrame(
        history.paused or [],
        "group string, topic string, partition int, position long, paused boolean")
    marked = _as_of(commits, activity, ["group"], "active")
    marked = _as_of(marked, paused, ["group", "topic", "partition"], "paused")
    marked = marked.withColumn(
        "admin_reset",
        (F.col("event") == "commit")
        & (~F.coalesce(F.col("active"), F.lit(False)) | F.coalesce(F.col("paused"), F.lit(False))),
    ).drop("active", "paused")
    events = spark.createDataFrame(
        [{**e, "time_ms": e["time_ms"]} for e in history.pauses] or [],
        "group string, topic string, partition int, position long, time_ms long, event string",
    ).select("group", "topic", "partition", "position",
             F.timestamp_millis("time_ms").alias("time"), "event")
    return marked.unionByName(events, allowMissingColumns=True).withColumn(
        "rewind", F.coalesce(F.col("rewind"), F.lit(False))).withColumn(
        "admin_reset", F.coalesce(F.col("admin_reset"), F.lit(False)))


def _as_of(rows: DataFrame, facts: DataFrame, keys: list[str], column: str) -> DataFrame:
    """``rows`` with ``column`` = the value of the last fact at or before each row's position."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    tagged = rows.withColumn("_row", F.lit(True)).withColumn(column, F.lit(None).cast("boolean"))
    both = tagged.unionByName(facts.withColumn("_row", F.lit(False)), allowMissingColumns=True)
    ordered = (Window.partitionBy(*keys).orderBy("position", "_row")
               .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    return (both.withColumn(column, F.last(column, ignorenulls=True).over(ordered))
            .where("_row").drop("_row"))


def _lag(offsets: DataFrame, ends: DataFrame) -> DataFrame:
    """At each commit: the partition's log-end offset then, and the lag behind it.

    ``ends``: per partition and record timestamp, one past the highest offset written then."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    ends = ends.withColumn("_commit", F.lit(False))
    commits = (offsets.where(F.col("event") == "commit")
               .select("group", "topic", "partition", "position", "time", "offset")
               .withColumn("_commit", F.lit(True)))
    both = commits.unionByName(ends, allowMissingColumns=True)
    running = (Window.partitionBy("topic", "partition").orderBy("time", "_commit")
               .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    at = both.withColumn("log_end_offset", F.max("log_end").over(running)).where("_commit")
    log_end = F.greatest(F.coalesce(F.col("log_end_offset"), F.lit(0)), F.col("offset"))
    return at.select("group", "topic", "partition", "position", "time",
                     F.col("offset").alias("committed_offset"),
                     log_end.alias("log_end_offset"),
                     (log_end - F.col("offset")).alias("lag"))


def _timeline(spark: SparkSession, history: GroupHistory) -> DataFrame:
    from pyspark.sql import functions as F

    rows = []
    for g in history.generations:
        row = asdict(g)
        rows.append({**row, "start": None, "end": None, "duration_s": (
            None if g.end_ms is None else (g.end_ms - g.start_ms) / 1000)})
    frame = spark.createDataFrame(
        [{k: v for k, v in r.items() if k not in ("start_ms", "end_ms")} for r in rows] or [],
        _TIMELINE_SCHEMA)
    times = spark.createDataFrame(
        [(g.group, g.position, g.start_ms, g.end_ms) for g in history.generations] or [],
        "group string, position long, start_ms long, end_ms long")
    return (frame.drop("start", "end").join(times, ["group", "position"])
            .withColumn("start", F.timestamp_millis("start_ms"))
            .withColumn("end", F.timestamp_millis("end_ms"))
            .drop("start_ms", "end_ms")
            .select(*[c.split()[0] for c in _TIMELINE_SCHEMA.split(", ")]))


def _summary(offsets: DataFrame, timeline: DataFrame, ends: DataFrame,
             last_ms: int | None) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    commits = offsets.where(F.col("event") == "commit")
    by_time = Window.partitionBy("group").orderBy("time", "position")
    gaps = commits.withColumn(
        "gap_s", (F.unix_millis("time") - F.unix_millis(F.lag("time").over(by_time))) / 1000)
    end = F.lit(last_ms).cast("long")
    counts = offsets.groupBy("group").agg(
        F.sum((F.col("event") == "commit").cast("long")).alias("commits"),
        F.sum(F.col("rewind").cast("long")).alias("rewinds"),
        F.sum(F.col("admin_reset").cast("long")).alias("admin_resets"),
        F.sum((F.col("event") == "delete").cast("long")).alias("deletions"),
        F.sum((F.col("event") == "pause").cast("long")).alias("pauses"),
        F.sum((F.col("event") == "resume").cast("long")).alias("resumes"),
        F.min("time").alias("first_commit"),
        F.max(F.when(F.col("event") == "commit", F.col("time"))).alias("last_commit"),
    )
    longest = gaps.groupBy("group").agg(F.max("gap_s").alias("longest_gap_s"))
    # The current lag: each partition's newest offset against the log end offset now.
    newest = Window.partitionBy("group", "topic", "partition").orderBy(F.desc("position"))
    latest = (offsets.where(F.col("event").isin("commit", "delete"))
              .withColumn("_n", F.row_number().over(newest)).where("_n = 1")
              .where(F.col("event") == "commit"))
    now = ends.groupBy("topic", "partition").agg(F.max("log_end").alias("end"))
    current = (latest.join(now, ["topic", "partition"], "left")
               .groupBy("group")
               .agg(F.sum(F.greatest(F.coalesce("end", F.lit(0)) - F.col("offset"), F.lit(0)))
                    .alias("current_lag"),
                    F.count(F.lit(1)).alias("partitions")))
    states = timeline.groupBy("group").agg(
        F.first("group_type").alias("group_type"),
        F.sum(F.when(F.col("state") == "Stable", F.lit(1)).otherwise(0)).alias("rebalances"),
        F.max("generation").alias("generation"),
        F.sum(F.when(F.col("state") == "Stable", F.col("duration_s"))).alias("time_stable_s"),
        F.sum(F.when(F.col("state") == "Empty", F.col("duration_s"))).alias("time_empty_s"),
        F.max_by("state", "position").alias("state"),
    )
    summary = (counts.join(longest, "group", "left").join(current, "group", "left")
               .join(states, "group", "full_outer"))
    tail_s = (end - F.unix_millis("last_commit")) / 1000
    return summary.select(
        "group", F.coalesce("group_type", F.lit("classic")).alias("group_type"), "state",
        "generation", F.coalesce("commits", F.lit(0)).alias("commits"),
        F.coalesce("rewinds", F.lit(0)).alias("rewinds"),
        F.coalesce("admin_resets", F.lit(0)).alias("admin_resets"),
        F.coalesce("deletions", F.lit(0)).alias("deletions"),
        F.coalesce("pauses", F.lit(0)).alias("pauses"),
        F.coalesce("resumes", F.lit(0)).alias("resumes"),
        F.coalesce("rebalances", F.lit(0)).alias("rebalances"),
        F.greatest(F.coalesce("longest_gap_s", F.lit(0.0)), F.coalesce(tail_s, F.lit(0.0)))
        .alias("longest_without_commit_s"),
        F.coalesce("current_lag", F.lit(0)).alias("current_lag"),
        F.coalesce("partitions", F.lit(0)).alias("partitions"),
        "time_stable_s", "time_empty_s", "first_commit", "last_commit",
    ).orderBy("group")


# The columns printed on the terminal (the Parquet tables have them all).
SHOWN = {
    "summary": ("group", "group_type", "state", "generation", "commits", "rewinds",
                "admin_resets", "deletions", "pauses", "rebalances", "longest_without_commit_s",
                "current_lag"),
    "timeline": ("group", "generation", "state", "start", "duration_s", "members", "joined",
                 "left"),
    "offset_history": ("group", "topic", "partition", "time", "event", "offset", "delta",
                       "rewind", "admin_reset"),
    "lag": ("group", "topic", "partition", "time", "committed_offset", "log_end_offset", "lag"),
}


def print_tables(paths: dict[str, str], max_rows: int = 40, console: Any = None) -> None:
    """Rich tables of the written report, each when it has at most ``max_rows`` rows."""
    import sys

    import pyarrow.parquet as pq
    from rich.console import Console
    from rich.table import Table

    console = console or Console(width=None if sys.stdout.isatty() else 160)
    for name in ("summary", "timeline", "offset_history", "lag"):
        table = pq.read_table(paths[name])
        if table.num_rows > max_rows:
            console.print(f"{name}: {table.num_rows} rows (see {paths[name]})")
            continue
        shown = Table(title=name, show_lines=False)
        columns = list(SHOWN[name])
        for column in columns:
            shown.add_column(column, overflow="fold")
        for row in _sorted_rows(name, table.to_pylist()):
            shown.add_row(*[_cell(row[c]) for c in columns])
        console.print(shown)


def _sorted_rows(name: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if name in ("summary",):
        return sorted(rows, key=lambda r: r["group"] or "")
    return sorted(rows, key=lambda r: (r.get("group") or "", r.get("position") or 0))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    if hasattr(value, "isoformat"):
        return value.isoformat(sep=" ", timespec="milliseconds")
    return str(value)
