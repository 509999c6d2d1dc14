"""The `events` view of the `kcsim` data source: a data dir's group events as a DataFrame,
the same events, fields and order that `kcsim events` and the event-log file show."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.server.event_dirs import SAMPLE, write_events

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """A data dir a broker wrote the sample events to (and a second run more), stopped."""
    data = tmp_path_factory.mktemp("events") / "data"
    write_events(data)
    return data, write_events(data, SAMPLE[:2])  # after a restart, numbered on


def read(spark: Any, data_dir: Path) -> Any:
    return spark.read.format("kcsim").option("kind", "events").load(str(data_dir))


def as_fields(row: Any) -> dict[str, Any]:
    fields = row.asDict()
    fields["detail"] = json.loads(fields["detail"])
    del fields["time"]
    return fields


def test_events_are_the_rows_of_the_view_with_every_field(spark: Any, logged: Any) -> None:
    data_dir, fields = logged
    frame = read(spark, data_dir)
    assert frame.columns == ["seq", "time", "time_ms", "group", "group_type", "kind", "cause",
                             "member", "detail"]
    rows = frame.orderBy("seq").collect()
    assert len(fields) == len(SAMPLE) + 2
    assert [as_fields(row) for row in rows] == fields
    assert frame.where("unix_millis(time) = time_ms").count() == len(rows)


def test_filters_and_json_detail_work_as_in_spark_sql(spark: Any, logged: Any) -> None:
    from pyspark.sql import functions as F

    # A DataFrame per query: Spark 4 reuses the filters pushed down for one query of a
    # DataFrame in its later queries without filters (any Python data source's).
    data_dir, fields = logged
    joined = read(spark, data_dir).where(
        (F.col("group") == "billing") & (F.col("kind") == "member-joined"))
    assert [r.seq for r in joined.orderBy("seq").collect()] == [
        e["seq"] for e in fields if e["group"] == "billing" and e["kind"] == "member-joined"]
    moved = read(spark, data_dir).where(F.col("kind") == "assignment-changed").select(
        F.get_json_object("detail", "$.added[1]").alias("second")).collect()
    assert [r.second for r in moved] == ["orders-1"]
    per_type = {r.group_type: r["count"]
                for r in read(spark, data_dir).groupBy("group_type").count().collect()}
    assert per_type == {"classic": 8, "consumer": 2}


def test_pushed_down_filters_select_the_same_rows(spark: Any, logged: Any) -> None:
    from pyspark.sql import functions as F

    from kcsim.pipeline.source import PUSHDOWN_CONF, register

    data_dir, _ = logged
    query = lambda: read(spark, data_dir).where(  # noqa: E731
        F.col("kind").isin("group-created", "member-left") & (F.col("group_type") == "classic"))
    pushed = sorted(r.seq for r in query().collect())  # the tests' session pushes down
    spark.conf.set(PUSHDOWN_CONF, "false")
    try:
        register(spark)
        plain = sorted(r.seq for r in query().collect())
    finally:
        spark.conf.set(PUSHDOWN_CONF, "true")
        register(spark)
    assert plain == pushed == [0, 6, 8]

def test_the_events_of_a_real_client_workload(spark: Any, workload_dir: Any) -> None:
    """After merging the events' emission: the workload's classic group (scenario.py) as
    events, the same rows `kcsim events --data-dir` prints."""
    import subprocess
    import sys

    data_dir, work = workload_dir
    done = subprocess.run([sys.executable, "-m", "kcsim", "events", "--data-dir", str(data_dir),
                           "--json"], capture_output=True, text=True, timeout=60, check=True)
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    rows = [as_fields(r) for r in read(spark, data_dir).orderBy("seq").collect()]
    assert rows == printed
    billing = [(e["kind"], e["member"]) for e in rows if e["group"] == "billing"]
    assert billing[0] == ("group-created", "")
    assert [m for kind, m in billing if kind == "member-joined"] == work.member_ids
