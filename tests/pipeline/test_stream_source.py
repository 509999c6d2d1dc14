"""The live `kcsim` source follows a server's record log as Structured Streaming.

Queries write to a Parquet sink with a checkpoint (Spark's exactly-once file sink), so
what a query delivered, across restarts, is what the output directory holds; tests
wait on that output, not on time.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kcsim.storage import compact
from tests.conftest import KcsimProcess

from .histories import open_log, step_records, topic_records

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.spark

TOPIC = "payments"
GROUP = "ledger"
WAIT_S = 90


def start_stream(spark: Any, data_dir: Path, out: Path, checkpoint: Path,
                 once: bool = False, **options: str) -> Any:
    """The records of ``data_dir`` streamed to Parquet in ``out``: every 500 ms, or
    (``once``) what the log holds now, then stop."""
    reader = spark.readStream.format("kcsim")
    for name, value in options.items():
        reader = reader.option(name, value)
    writer = (reader.load(str(data_dir)).writeStream.format("parquet")
              .option("path", str(out)).option("checkpointLocation", str(checkpoint)))
    if once:
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination(WAIT_S)
        assert not query.isActive, f"the availableNow run did not finish in {WAIT_S} s"
        if query.exception() is not None:
            raise query.exception()
        return query
    return writer.trigger(processingTime="500 milliseconds").start()


def streamed(spark: Any, out: Path) -> list[Any]:
    """What the stream delivered, in log order."""
    if not (out / "_spark_metadata").exists():
        return []
    from pyspark.sql.pandas.types import from_arrow_schema

    from kcsim.pipeline.source import arrow_schema

    written = spark.read.schema(from_arrow_schema(arrow_schema("records"))).parquet(str(out))
    return sorted(written.collect(), key=lambda r: r.position)


def batch(spark: Any, data_dir: Path) -> list[Any]:
    return sorted(spark.read.format("kcsim").load(str(data_dir)).collect(),
                  key=lambda r: r.position)


def wait_for(what: str, check: Callable[[], bool], query: Any = None) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if query is not None and query.exception() is not None:
            raise query.exception()
        assert time.monotonic() < deadline, f"no {what} within {WAIT_S} s"
        time.sleep(0.3)


def commits_of(rows: list[Any]) -> list[tuple[int, int]]:
    return [(r.partition, r.offset) for r in rows
            if r.record_type == "offset_commit" and r.group == GROUP and r.topic == TOPIC]


class Committer:
    """A confluent-kafka group member that commits each message it consumes, synchronously."""

    def __init__(self, bootstrap: str) -> None:
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        self.consumer.subscribe([TOPIC])
        self.committed: list[tuple[int, int]] = []

    def commit(self, n: int) -> None:
        deadline = time.monotonic() + WAIT_S
        goal = len(self.committed) + n
        while len(self.committed) < goal:
            assert time.monotonic() < deadline, f"{len(self.committed)} of {goal} commits"
            message = self.consumer.poll(0.5)
            if message is None or message.error():
                continue
            self.consumer.commit(message=message, asynchronous=False)
            partition, offset = message.partition(), message.offset()
            assert partition is not None and offset is not None
            self.committed.append((partition, offset + 1))


def test_the_stream_follows_a_running_server_through_a_restart_from_its_checkpoint(
        spark: Any, tmp_path: Path) -> None:
    data_dir, out, checkpoint = tmp_path / "data", tmp_path / "out", tmp_path / "checkpoint"
    server = KcsimProcess(data_dir, tmp_path / "kcsim.log", min_session_timeout_ms=1000,
                          initial_rebalance_delay_ms=0).start()
    try:
        admin = AdminClient({"bootstrap.servers": server.bootstrap})
        admin.create_topics([NewTopic(TOPIC, 3, 1)])[TOPIC].result(30)
        producer = Producer({"bootstrap.servers": server.bootstrap})
        for i in range(90):
            producer.produce(TOPIC, value=b"%d" % i, partition=i % 3)
        assert producer.flush(30) == 0
        committer = Committer(server.bootstrap)
        query = start_stream(spark, data_dir, out, checkpoint)
        try:
            committer.commit(30)
            wait_for("first 30 commits in the stream",
                     lambda: commits_of(streamed(spark, out)) == committer.committed, query)
        finally:
            query.stop()
        committer.commit(30)  # while no query runs
        query = start_stream(spark, data_dir, out, checkpoint)
        try:
            wait_for("the commits made while stopped",
                     lambda: commits_of(streamed(spark, out)) == committer.committed, query)
            committer.commit(30)
            wait_for("all 90 commits",
                     lambda: commits_of(streamed(spark, out)) == committer.committed, query)
        finally:
            query.stop()
        committer.consumer.close()
    finally:
        server.stop()
    start_stream(spark, data_dir, out, checkpoint, once=True)  # the records written at close
    rows = streamed(spark, out)
    assert len(committer.committed) == 90
    assert commits_of(rows) == committer.committed
    assert rows == batch(spark, data_dir)
    assert len({r.position for r in rows}) == len(rows)


def test_a_torn_tail_is_read_once_it_is_whole_and_segments_roll_in_order(
        spark: Any, tmp_path: Path) -> None:
    data_dir, out, checkpoint = tmp_path / "data", tmp_path / "out", tmp_path / "checkpoint"
    with open_log(data_dir, 400) as log:
        log.append(topic_records(), timestamp_ms=1)
        for n in range(30):
            log.append(step_records(("commit", "g0", [(0, n), (1, n)]), n), timestamp_ms=n)
    segments = sorted((data_dir / "meta").iterdir())
    assert len(segments) > 5  # the stream crosses rolled segments
    start_stream(spark, data_dir, out, checkpoint, once=True)
    first = streamed(spark, out)
    assert first == batch(spark, data_dir) and len(first) == 61
    active = segments[-1]
    before = active.read_bytes()
    with open_log(data_dir, 4000) as log:  # one frame: two commits in a batch frame
        log.append(step_records(("commit", "g0", [(0, 99), (1, 99)]), 99), timestamp_ms=99)
    frame = active.read_bytes()[len(before):]
    assert frame
    active.write_bytes(before + frame[: len(frame) // 2])  # being written
    start_stream(spark, data_dir, out, checkpoint, once=True)
    assert streamed(spark, out) == first
    with open(active, "ab") as f:
        f.write(frame[len(frame) // 2:])
    start_stream(spark, data_dir, out, checkpoint, once=True)
    rows = streamed(spark, out)
    assert rows == batch(spark, data_dir)
    assert [(r.position, r.partition, r.offset) for r in rows[len(first):]] == [
        (61, 0, 99), (62, 1, 99)]


def compacted_log(data_dir: Path, steps: range) -> None:
    with open_log(data_dir, 400) as log:
        log.closed_segments()
        for n in steps:
            log.append(step_records(("commit", "g0", [(0, n)]), n), timestamp_ms=n)
        compact(log, tombstone_retention_ms=1000, now_ms=100)


@pytest.mark.parametrize("fail", [False, True])
def test_records_compacted_away_before_the_stream_read_them_are_skipped_or_fail_the_query(
        spark: Any, tmp_path: Path, fail: bool) -> None:
    data_dir, out, checkpoint = tmp_path / "data", tmp_path / "out", tmp_path / "checkpoint"
    with open_log(data_dir, 400) as log:
        log.append(topic_records(), timestamp_ms=1)
    start_stream(spark, data_dir, out, checkpoint, once=True)
    read_first = streamed(spark, out)
    assert len(read_first) == 1
    compacted_log(data_dir, range(40))  # while no query runs: 40 commits of one key
    assert len(batch(spark, data_dir)) < 41
    if fail:
        with pytest.raises(Exception, match="compacted away before the stream read them"):
            start_stream(spark, data_dir, out, checkpoint, once=True,
                         failOnCompacted="true")
        return
    start_stream(spark, data_dir, out, checkpoint, once=True)
    rows = streamed(spark, out)
    assert rows == batch(spark, data_dir)  # the newest of each key, each once, in order
    assert rows[-1].offset == 39


def test_offsets_name_the_segment_holding_the_position_and_respect_a_row_limit(
        tmp_path: Path) -> None:
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

    from kcsim.pipeline.stream_source import KcsimStreamReader, StreamError

    empty = KcsimStreamReader(str(tmp_path / "none"), {})
    assert empty.initialOffset() == {"segment": 0, "position": 0}
    assert empty.latestOffset(empty.initialOffset(), ReadAllAvailable()) == empty.initialOffset()
    with open_log(tmp_path, 400) as log:
        log.append(topic_records(), timestamp_ms=1)
        for n in range(30):
            log.append(step_records(("commit", "g0", [(0, n), (1, n)]), n), timestamp_ms=n)
        bases = [s.base for s in log.segments]
    reader = KcsimStreamReader(str(tmp_path), {"maxRecordsPerTrigger": "25"})
    start = reader.initialOffset()
    assert start == {"segment": 0, "position": 0}
    assert isinstance(reader.getDefaultReadLimit(), ReadMaxRows)
    end = {"segment": bases[-1], "position": 61}
    assert reader.latestOffset(start, ReadAllAvailable()) == end
    held = max(b for b in bases if b <= 25)
    assert reader.latestOffset(start, ReadMaxRows(25)) == {"segment": held, "position": 25}
    latest = KcsimStreamReader(str(tmp_path), {"startingOffsets": "latest"})
    assert latest.initialOffset() == end
    parts = reader.partitions(start, end)
    assert [p.value[:2] for p in parts] == list(zip([0, *bases[1:]], [*bases[1:], 61]))
    assert reader.partitions(end, end) == []
    with pytest.raises(StreamError, match="ends at position 61, before this query's offset 70"):
        reader.latestOffset({"segment": bases[-1], "position": 70}, ReadAllAvailable())


def test_the_group_events_stream_as_the_events_view_reads_them(
        spark: Any, workload_dir: Any, tmp_path: Path) -> None:
    """`.option("kind", "events")`: the events of a real client workload's log, streamed,
    are the batch view's rows, in the broker's order."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from kcsim.pipeline.source import arrow_schema

    data_dir, _ = workload_dir
    out = tmp_path / "out"
    start_stream(spark, data_dir, out, tmp_path / "checkpoint", once=True, kind="events")
    events = from_arrow_schema(arrow_schema("events"))
    got = sorted(spark.read.schema(events).parquet(str(out)).collect(), key=lambda r: r.seq)
    read = spark.read.format("kcsim").option("kind", "events").load(str(data_dir))
    assert got == sorted(read.collect(), key=lambda r: r.seq)
    assert {"group-created", "member-joined", "stable"} <= {r.kind for r in got}
