"""Spark's own Kafka connector (spark-sql-kafka-0-10) against kcsim, over real sockets.

A Structured Streaming word count reads one kcsim topic and writes another through the
connector, is stopped and restarted from its checkpoint, and runs through kcsim's faults;
a batch read starts at offsets found by timestamp. Each run of the query is `availableNow`:
it reads what the topic holds when it starts and stops, so a test waits on the query, not
on time.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kcsim.testing import EmbeddedServer

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.spark

LINES = ["the quick brown fox", "jumps over the lazy dog", "the dog sleeps", "a fox runs",
         "over and over", "quick quick slow"]


@pytest.fixture
def broker() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(port=0) as server:
        admin = AdminClient({"bootstrap.servers": server.bootstrap})
        for future in admin.create_topics([NewTopic("lines", 3, 1), NewTopic("counts", 1, 1)]).values():
            future.result(30)
        yield server


def produce(bootstrap: str, topic: str, values: list[str], timestamps: list[int] | None = None) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i, value in enumerate(values):
        producer.produce(topic, value=value.encode(), key=str(i).encode(),
                         timestamp=timestamps[i] if timestamps else 0)
    assert producer.flush(30) == 0


def run_word_count(spark: Any, bootstrap: str, checkpoint: Path) -> None:
    """One `availableNow` run of the word count, from the checkpoint where one exists."""
    from pyspark.sql import functions as F

    lines = (spark.readStream.format("kafka")
             .option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", "lines")
             .option("startingOffsets", "earliest")
             .load())
    counts = (lines.select(F.explode(F.split(F.col("value").cast("string"), " ")).alias("word"))
              .groupBy("word").count())
    query = (counts.select(F.col("word").alias("key"), F.col("count").cast("string").alias("value"))
             .writeStream.format("kafka")
             .option("kafka.bootstrap.servers", bootstrap)
             .option("topic", "counts")
             .option("checkpointLocation", str(checkpoint))
             .outputMode("update")
             .trigger(availableNow=True)
             .start())
    query.awaitTermination(180)
    assert not query.isActive, "the word count did not finish in 180 s"
    assert query.exception() is None, query.exception()


def latest_counts(spark: Any, bootstrap: str) -> dict[str, int]:
    """The last count written for each word: what a reader of the output topic takes."""
    rows = (spark.read.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", "counts")
            .load()
            .orderBy("offset")
            .collect())
    return {bytes(r.key).decode(): int(bytes(r.value).decode()) for r in rows}


def words(lines: list[str]) -> Counter[str]:
    return Counter(w for line in lines for w in line.split(" "))


def test_word_count_restarts_from_its_checkpoint(kafka_spark: Any, broker: EmbeddedServer,
                                                 tmp_path: Path) -> None:
    checkpoint = tmp_path / "checkpoint"
    produce(broker.bootstrap, "lines", LINES[:3])
    run_word_count(kafka_spark, broker.bootstrap, checkpoint)
    assert latest_counts(kafka_spark, broker.bootstrap) == words(LINES[:3])

    produce(broker.bootstrap, "lines", LINES[3:])
    run_word_count(kafka_spark, broker.bootstrap, checkpoint)
    assert latest_counts(kafka_spark, broker.bootstrap) == words(LINES)


def test_word_count_recovers_from_faults(kafka_spark: Any, broker: EmbeddedServer,
                                         tmp_path: Path) -> None:
    checkpoint = tmp_path / "checkpoint"
    produce(broker.bootstrap, "lines", LINES[:3])
    run_word_count(kafka_spark, broker.bootstrap, checkpoint)

    produce(broker.bootstrap, "lines", LINES[3:])
    # The first rule that matches a request answers it: a burst of NOT_LEADER_OR_FOLLOWER,
    # then one dropped connection, then every Fetch 200 ms late.
    not_leader = broker.faults.add(api="Fetch", error="NOT_LEADER_OR_FOLLOWER", times=3)
    dropped = broker.faults.add(api="Fetch", close="before", times=1)
    slow = broker.faults.add(api="Fetch", latency_ms=200, times=None)
    run_word_count(kafka_spark, broker.bootstrap, checkpoint)

    assert broker.faults.get(not_leader).fired == 3
    assert broker.faults.get(dropped).fired == 1
    assert broker.faults.get(slow).fired > 0
    broker.faults.clear()
    assert latest_counts(kafka_spark, broker.bootstrap) == words(LINES)


def test_batch_read_starts_at_offsets_by_timestamp(kafka_spark: Any, broker: EmbeddedServer) -> None:
    base = 1_700_000_000_000
    stamps = [base + 1000 * i for i in range(10)]
    produce(broker.bootstrap, "counts", [f"v{i}" for i in range(10)], stamps)
    # Kafka's rule (ListOffsets by timestamp): the first offset whose timestamp is at or
    # after the one asked for; between two records' times, the later record.
    rows = (kafka_spark.read.format("kafka")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("subscribe", "counts")
            .option("startingOffsetsByTimestamp", f'{{"counts": {{"0": {base + 4500}}}}}')
            .load()
            .orderBy("offset")
            .collect())
    assert [r.offset for r in rows] == list(range(5, 10))
    assert [bytes(r.value).decode() for r in rows] == [f"v{i}" for i in range(5, 10)]
    assert [int(r.timestamp.timestamp() * 1000) for r in rows] == stamps[5:]
