"""Consumer lag in Kafka's own terms, from any Kafka cluster: a Structured Streaming job.

It reads `__consumer_offsets` through Spark's Kafka connector (`pipeline/connector.py`),
decodes Kafka's record format with kcsim's codec of Kafka's coordinator records
(`protocol/apis/coordinator_records.py`) in a vectorised UDF, and for each micro-batch
asks the cluster for the log end offsets of the partitions groups have committed to
(Kafka's AdminClient, `listOffsets` with `OffsetSpec.latest()`, the one the connector
ships, through the driver's JVM) and writes one row per group and partition: the time,
the committed offset, the log end offset and their difference. Nothing in it is kcsim's:
the same job runs against Kafka.

Spark's default offset reader (the AdminClient's) leaves internal topics out of what it
reads, whatever the cluster; the job therefore turns on the consumer-based one
(`spark.sql.streaming.kafka.useDeprecatedOffsetFetching`) for its session.

`__consumer_offsets` is read from its beginning at every start, as lag monitors do (the
topic is compacted and holds every group's newest commit), so the job keeps no state of its
own between runs: the newest commit per partition is kept by the driver while it runs. A
tombstone (an offset deleted, or expired) removes its partition from the table.
"""

from __future__ import annotations

import struct
from datetime import UTC
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

OFFSETS_TOPIC = "__consumer_offsets"
CONSUMER_OFFSET_READER = "spark.sql.streaming.kafka.useDeprecatedOffsetFetching"
# Kafka's record types of __consumer_offsets keys that are offset commits (0: v0, 1: v1).
_COMMIT_KEY_TYPES = (0, 1)
_SHORT = struct.Struct(">h")

LAG_COLUMNS = ("time", "group", "topic", "partition", "committed", "log_end", "lag")
COMMIT_SCHEMA = "group string, topic string, partition int, committed long"


def decode_commits(keys: pd.Series, values: pd.Series) -> pd.DataFrame:
    """Offset commits of `__consumer_offsets` records, decoded (vectorised): one row per
    record; group None for a record that is not an offset commit, committed None for a
    tombstone."""
    import pandas as pd

    from kcsim.protocol.codecs import data_codec

    key_codec, value_codec = data_codec("OffsetCommitKey"), data_codec("OffsetCommitValue")
    rows: list[tuple[str | None, str | None, int | None, int | None]] = []
    for key, value in zip(keys, values, strict=True):
        if key is None or _SHORT.unpack_from(key)[0] not in _COMMIT_KEY_TYPES:
            rows.append((None, None, None, None))
            continue
        body = key_codec.decode(bytes(key[2:]), 0)
        offset = None
        if value is not None:
            offset = value_codec.decode(bytes(value[2:]), _SHORT.unpack_from(value)[0]).offset
        rows.append((body.group, body.topic, body.partition, offset))
    return pd.DataFrame(rows, columns=["group", "topic", "partition", "committed"])


def commits(spark: SparkSession, bootstrap: str, options: dict[str, str] | None = None
            ) -> DataFrame:
    """The stream of offset commits (and deletions) of a cluster, in log order per partition."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    spark.conf.set(CONSUMER_OFFSET_READER, "true")

    # Spark reads a pandas UDF's kind from its type hints, which postponed annotations hide;
    # a wrapper without hints is a scalar pandas UDF.
    decode = pandas_udf(lambda keys, values: decode_commits(keys, values),  # type: ignore[call-overload]
                        COMMIT_SCHEMA)
    reader = (spark.readStream.format("kafka")
              .option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", OFFSETS_TOPIC)
              .option("startingOffsets", "earliest"))
    for key, value in (options or {}).items():
        reader = reader.option(key, value)
    records = reader.load()
    decoded = records.select(
        F.col("partition").alias("log_partition"), F.col("offset").alias("log_offset"),
        decode(F.col("key"), F.col("value")).alias("c"))
    return decoded.where(F.col("c.group").isNotNull()).select(
        "log_partition", "log_offset", "c.group", "c.topic", "c.partition", "c.committed")


def log_end_offsets(spark: SparkSession, bootstrap: str, admin_config: dict[str, str],
                    partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """The log end offsets of `partitions`, asked with Kafka's AdminClient in the driver's JVM."""
    jvm: Any = spark.sparkContext._jvm
    kafka = jvm.org.apache.kafka
    props = jvm.java.util.Properties()
    props.put("bootstrap.servers", bootstrap)
    for key, value in admin_config.items():
        props.put(key, value)
    admin = kafka.clients.admin.Admin.create(props)
    try:
        wanted = jvm.java.util.HashMap()
        for topic, partition in partitions:
            wanted.put(kafka.common.TopicPartition(topic, partition),
                       kafka.clients.admin.OffsetSpec.latest())
        answers = admin.listOffsets(wanted).all().get()
        return {(tp.topic(), tp.partition()): answers.get(tp).offset() for tp in answers.keySet()}
    finally:
        admin.close()


class LagTable:
    """The newest commit of every group and partition, folded from the stream's batches."""

    def __init__(self) -> None:
        self.committed: dict[tuple[str, str, int], int] = {}

    def fold(self, rows: list[Any]) -> None:
        """Fold a batch's commits in log order (per `__consumer_offsets` partition)."""
        for r in sorted(rows, key=lambda r: (r.log_partition, r.log_offset)):
            key = (r.group, r.topic, r.partition)
            if r.committed is None:
                self.committed.pop(key, None)
            else:
                self.committed[key] = r.committed

    def rows(self, time: Any, ends: dict[tuple[str, int], int]) -> list[tuple[Any, ...]]:
        out = []
        for (group, topic, partition), committed in sorted(self.committed.items()):
            end = ends.get((topic, partition))
            if end is not None:
                out.append((time, group, topic, partition, committed, end, max(end - committed, 0)))
        return out


def lag_query(spark: SparkSession, bootstrap: str, write: Callable[[DataFrame], None], *,
              admin_config: dict[str, str] | None = None,
              source_options: dict[str, str] | None = None) -> Any:
    """A DataStreamWriter that computes the lag table at each micro-batch and hands it to
    `write` (to Parquet, to the console); start it with a trigger and a checkpoint."""
    from datetime import datetime

    table = LagTable()
    schema = ("time timestamp, group string, topic string, partition int, committed long, "
              "log_end long, lag long")

    def batch(frame: DataFrame, batch_id: int) -> None:
        table.fold(frame.collect())
        partitions = sorted({(t, p) for _, t, p in table.committed})
        ends = log_end_offsets(spark, bootstrap, admin_config or {}, partitions) if partitions else {}
        now = datetime.now(UTC)
        write(spark.createDataFrame(table.rows(now, ends), schema))

    return commits(spark, bootstrap, source_options).writeStream.foreachBatch(batch)
