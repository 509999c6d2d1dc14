"""The lag job (`pipeline/lag.py`) on the same scenario against kcsim and a real Kafka 4.4.

A group commits, falls behind and catches up. At each step one `availableNow` run of the
job writes its lag table; kcsim's and Kafka's tables are the same, and both match the LAG
column `kafka-consumer-groups --describe` prints.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kcsim.testing import EmbeddedServer
from tests.oracle.groupcommand import kafka_command

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.spark

TOPIC, GROUP = "lag-job-input", "lag-job-group"


@pytest.fixture
def kcsim_broker() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(port=0) as server:
        yield server


def produce(bootstrap: str, counts: dict[int, int]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition, n in counts.items():
        for i in range(n):
            producer.produce(TOPIC, value=f"m{i}".encode(), partition=partition)
    assert producer.flush(30) == 0


def commit(bootstrap: str, offsets: dict[int, int]) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                         "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(TOPIC, p, o) for p, o in offsets.items()],
                        asynchronous=False)
    finally:
        consumer.close()


def lag_table(spark: Any, bootstrap: str, out: Path) -> dict[tuple[str, int], tuple[int, int, int]]:
    """One availableNow run of the job into `out`; the group's rows of its last table."""
    from kcsim.pipeline.lag import lag_query

    def write(frame: Any) -> None:
        frame.write.mode("append").parquet(str(out / "lag"))

    query = (lag_query(spark, bootstrap, write)
             .option("checkpointLocation", str(out / "checkpoint"))
             .trigger(availableNow=True).start())
    query.awaitTermination(180)
    assert query.exception() is None, query.exception()
    rows = spark.read.parquet(str(out / "lag")).where(f"group = '{GROUP}'").collect()
    last = max(r.time for r in rows)
    return {(r.topic, r.partition): (r.committed, r.log_end, r.lag) for r in rows if r.time == last}


def described_lag(bootstrap: str, cwd: Path) -> dict[tuple[str, int], int]:
    """LAG per partition as Kafka's kafka-consumer-groups --describe prints it."""
    ran = kafka_command(bootstrap, "--describe", "--group", GROUP, cwd=cwd)
    assert ran.code == 0, ran
    header = next(line.split(" ") for line in ran.out if "LAG" in line.split(" "))
    lags = {}
    for line in ran.out:
        fields = dict(zip(header, line.split(" "), strict=False))
        if fields.get("TOPIC") == TOPIC:
            lags[(TOPIC, int(fields["PARTITION"]))] = int(fields["LAG"])
    return lags


def scenario(spark: Any, bootstrap: str, tmp: Path) -> list[dict[tuple[str, int], tuple[int, int, int]]]:
    """Commit, fall behind, catch up; the lag table after each step, each checked against
    kafka-consumer-groups' LAG."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(30)
    steps = []
    for n, change in enumerate((
            lambda: (produce(bootstrap, {0: 10, 1: 10}), commit(bootstrap, {0: 4, 1: 10})),
            lambda: produce(bootstrap, {1: 5}),
            lambda: commit(bootstrap, {0: 10, 1: 15}))):
        change()
        step = lag_table(spark, bootstrap, tmp / f"run{n}")
        assert {k: lag for k, (_, _, lag) in step.items()} == described_lag(bootstrap, tmp)
        steps.append(step)
    return steps


def test_lag_job_gives_the_same_table_against_kcsim_and_kafka(
        kafka_spark: Any, kcsim_broker: EmbeddedServer, kafka_broker: Any, tmp_path: Path) -> None:
    ours = scenario(kafka_spark, kcsim_broker.bootstrap, tmp_path / "kcsim")
    theirs = scenario(kafka_spark, kafka_broker.bootstrap, tmp_path / "kafka")
    expected = [
        {(TOPIC, 0): (4, 10, 6), (TOPIC, 1): (10, 10, 0)},
        {(TOPIC, 0): (4, 10, 6), (TOPIC, 1): (10, 15, 5)},
        {(TOPIC, 0): (10, 10, 0), (TOPIC, 1): (15, 15, 0)},
    ]
    assert ours == expected
    assert theirs == expected


def test_the_lag_page_draws_the_jobs_output(tmp_path: Path) -> None:
    """`kcsim pipeline lag --page`: the newest lag of each partition, and a chart per group."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kcsim.pipeline.page import render_lag

    out = tmp_path / "lag"
    out.mkdir()
    times = [datetime(2026, 1, 1, 0, 0, s, tzinfo=UTC) for s in (1, 2)]
    pq.write_table(pa.table({
        "time": times * 2, "group": ["g1", "g1", "g2", "g2"], "topic": ["t"] * 4,
        "partition": [0, 0, 1, 1], "committed": [4, 10, 7, 7], "log_end": [10, 12, 9, 9],
        "lag": [6, 2, 2, 2]}), out / "part-0.parquet")
    page = Path(render_lag(str(out), str(tmp_path / "lag.html"))).read_text()
    rows = re.findall(r"<tr>((?:<td>[^<]*</td>)+)</tr>", page)
    assert [re.findall(r"<td>([^<]*)</td>", r) for r in rows] == [
        ["g1", "t", "0", "10", "12", "2"], ["g2", "t", "1", "7", "9", "2"]]
    assert "<h2>g1</h2>" in page and "<h2>g2</h2>" in page
    assert page.count("lag behind the log end") == 2
