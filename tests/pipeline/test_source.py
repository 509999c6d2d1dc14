"""The `kcsim` data source reads what the server wrote, as the server would replay it."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.pipeline.tears import find_tears
from kcsim.server.cli import main
from kcsim.server.state.record_types import RECORD_TYPES
from kcsim.storage import CorruptLogError, RecordLog

from . import scenario
from .histories import open_log, replayed, step_records, topic_records

if TYPE_CHECKING:
    from pathlib import Path


def read(spark: Any, data_dir: Path, kind: str = "records") -> Any:
    return spark.read.format("kcsim").option("kind", kind).load(str(data_dir))


def test_records_are_the_servers_replay_in_log_order(spark: Any, workload_dir: Any) -> None:
    data_dir, _ = workload_dir
    expected = replayed(data_dir)
    rows = sorted(read(spark, data_dir).collect(), key=lambda r: r.position)
    assert [r.position for r in rows] == list(range(len(expected)))
    assert [r.record_type for r in rows] == [RECORD_TYPES.of(e).name for e in expected]
    assert [r.tombstone for r in rows] == [e.value is None for e in expected]
    for row, record in zip(rows, expected):
        for part in (record.key, record.value):
            for field in part.__struct_fields__ if part is not None else ():
                value = getattr(part, field)
                if isinstance(value, (str, int, bytes)) or value is None:
                    assert getattr(row, field if field in row else
                                   f"{RECORD_TYPES.of(record).name}_{field}") == value
    members = [r for r in rows if r.record_type == "group_metadata" and r.members]
    assert members and all(m.member_id for r in members for m in r.members)


def test_group_and_topic_filters_select_the_same_rows_pushed_down(spark: Any,
                                                                 workload_dir: Any) -> None:
    data_dir, work = workload_dir
    records = read(spark, data_dir)
    billing = records.where(f"`group` = '{scenario.GROUP}'").collect()
    expected = [r for r in replayed(data_dir) if getattr(r.key, "group", None) == scenario.GROUP]
    assert len(billing) == len(expected) and {r.group for r in billing} == {scenario.GROUP}
    assert records.where("`group` = 'nobody'").count() == 0
    one = read(spark, data_dir, "messages").where(
        f"topic = '{scenario.TOPIC}' AND partition IN (1)").collect()
    assert sorted(r.offset for r in one) == sorted(o for p, o in work.produced if p == 1)


def test_messages_have_spark_kafka_columns_for_every_codec(spark: Any, workload_dir: Any) -> None:
    data_dir, work = workload_dir
    every = read(spark, data_dir, "messages")
    assert every.columns == ["key", "value", "topic", "partition", "offset", "timestamp",
                             "timestampType", "headers"]
    # the produced topic only: the broker writes its __consumer_offsets once a client
    # reads that topic, and none did
    assert {r.topic for r in every.select("topic").collect()} == {scenario.TOPIC}
    messages = every.where(f"topic = '{scenario.TOPIC}'")
    got = {(r.partition, r.offset): (r.key, r.value, [(h.key, h.value) for h in r.headers])
           for r in messages.collect()}
    assert got == work.produced


@pytest.mark.java
def test_the_java_clients_batches_decode_with_every_codec(spark: Any, kcsim_server: Any) -> None:
    """snappy from the Java client is xerial-framed, lz4 and zstd its own streams."""
    from tests.server.clients import javaclient

    javaclient.skip_without_java()
    codecs = ("none", "gzip", "snappy", "lz4", "zstd")
    done = javaclient.run("CompressedProducer", kcsim_server.bootstrap, "50", *codecs,
                          timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    sent = {(t, int(o)): k for t, o, k in (line.split() for line in done.stdout.splitlines())}
    kcsim_server.stop()
    rows = read(spark, kcsim_server.data_dir, "messages").where(
        "topic LIKE 'java-%'").collect()
    got = {(r.topic, r.offset): r.key.decode() for r in rows}
    assert got == sent and len(got) == 50 * len(codecs)
    for r in rows:
        i = int(r.key.decode()[1:])
        assert r.value.decode() == f"{r.topic[5:]}-{i};" * 20
        assert [(h.key, h.value) for h in r.headers] == [("i", str(i).encode())]


def torn_copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    (target / ".lock").unlink(missing_ok=True)
    return target


def test_a_torn_tail_ends_the_read_where_a_servers_start_would_cut_it(
        spark: Any, workload_dir: Any, tmp_path: Path) -> None:
    data_dir, work = torn_copy(workload_dir[0], tmp_path / "d"), workload_dir[1]
    meta = sorted((data_dir / "meta").iterdir())[-1]
    complete = len(replayed(data_dir))
    with open(meta, "ab") as f:
        f.write(b"\x40\x00\x00\x00\x12\x34")  # the start of a frame, never finished
    topic_id = next(r.value.topic_id for r in replayed(data_dir)
                    if type(r.key).__name__ == "TopicKey" and r.key.name == scenario.TOPIC)
    partition = next((data_dir / "partitions" / bytes(topic_id).hex() / "2").glob("*.log"))
    with open(partition, "ab") as f:
        f.write(b"\x99" * 20)
    assert read(spark, data_dir).count() == complete == len(replayed(data_dir))
    produced = sum(1 for p, _ in work.produced if p == 2)
    assert read(spark, data_dir, "messages").where(
        f"topic = '{scenario.TOPIC}' AND partition = 2").count() == produced
    torn = {r.path: r for r in read(spark, data_dir, "segments").collect() if r.torn}
    assert set(torn) == {str(meta), str(partition)}
    assert torn[str(meta)].problem == "partial frame"
    assert torn[str(meta)].valid_bytes == torn[str(meta)].problem_position
    assert {t.path for t in find_tears(data_dir)} == set(torn)


def test_damage_before_the_tail_fails_the_read_as_it_fails_a_servers_start(
        spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with open_log(tmp_path, 400) as log:
        log.append(topic_records(), timestamp_ms=1)
        for n in range(40):
            log.append(step_records(("commit", "g0", [(0, n), (1, n)]), n), timestamp_ms=n)
        log.sync()
    first = sorted((tmp_path / "meta").iterdir())[0]
    data = bytearray(first.read_bytes())
    data[60] ^= 0xFF
    first.write_bytes(bytes(data))
    with pytest.raises(CorruptLogError), \
            RecordLog.open(tmp_path / "meta", types=RECORD_TYPES, read_only=True) as log:
        list(log.replay())
    with pytest.raises(Exception, match=r"corrupt log file .* CRC mismatch"):
        read(spark, tmp_path).count()
    segments = read(spark, tmp_path, "segments").collect()
    damaged = [r for r in segments if r.problem]
    assert [(r.path, r.torn) for r in damaged] == [(str(first), False)]
    assert os.path.getsize(first) == len(data)  # nothing was cut
    assert main(["pipeline", "report", "--data-dir", str(tmp_path),
                 "--out", str(tmp_path / "report")]) == 1
    said = capsys.readouterr().err
    assert f"corrupt log file {first} at byte" in said and "CRC mismatch" in said
