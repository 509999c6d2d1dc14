"""Compaction on Spark gives what the embedded compactor gives, and swaps it in safely."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings

from kcsim.pipeline import compact as spark_compaction
from kcsim.storage import DataDirLockedError, compact
from tests.coordinator.state_dump import dump

from .histories import histories, open_log, replayed, step_records, topic_records

if TYPE_CHECKING:
    from pathlib import Path

SEGMENT_BYTES = 700  # a few records per segment: many segments, several outputs
RETENTION_MS = 120


def files(directory: Path) -> dict[str, bytes]:
    """The segment files of a log directory and their bytes (temporaries would show)."""
    return {name: (directory / name).read_bytes() for name in sorted(os.listdir(directory))}


def served_state(data_dir: Path) -> dict[str, Any]:
    """The groups, consumer groups, offsets and pauses a server started on ``data_dir``
    holds once it has replayed its log (its start-up path, in this process)."""
    from kcsim.server import config as config_mod
    from kcsim.server.app import build

    config = config_mod.load(None, env={}, data_dir=str(data_dir), port=0,
                             log_level="WARNING")
    server = build(config)
    try:
        state = dump(server.broker.groups)
    finally:
        server.broker.topics.close()
        server.durability.close()
    return {k: state[k] for k in ("classic", "consumer", "offsets", "paused")}


def play(history: list[tuple[Any, int]], embedded: Path, on_spark: Path, spark: Any,
         segment_bytes: int = SEGMENT_BYTES) -> None:
    """Write the same history into both data dirs; at each compaction point compact one
    with the embedded compactor (on the open log, as the server does) and the other on
    Spark (the log closed, the directory not held)."""
    now = 1_000_000
    left = open_log(embedded, segment_bytes)
    right = open_log(on_spark, segment_bytes)
    try:
        for log in (left, right):
            log.append(topic_records(), timestamp_ms=now)
        for step, elapsed in [*history, (("compact",), 0)]:
            now += elapsed
            records = step_records(step, now)
            if records:
                left.append(records, timestamp_ms=now)
                right.append(records, timestamp_ms=now)
                continue
            compact(left, tombstone_retention_ms=RETENTION_MS, now_ms=now)
            right.sync()
            right.close()
            spark_compaction.compact(spark, on_spark, tombstone_retention_ms=RETENTION_MS,
                                     now_ms=now, segment_bytes=segment_bytes)
            right = open_log(on_spark, segment_bytes)
    finally:
        left.close()
        right.close()


@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(history=histories)
def test_spark_compaction_replays_to_the_embedded_compactions_state(
        spark: Any, tmp_path_factory: pytest.TempPathFactory, history: list[Any]) -> None:
    base = tmp_path_factory.mktemp("history")
    embedded, on_spark = base / "embedded", base / "spark"
    play(history, embedded, on_spark, spark)
    assert replayed(on_spark) == replayed(embedded)
    assert files(on_spark / "meta") == files(embedded / "meta")
    assert served_state(on_spark) == served_state(embedded)


def test_a_large_history_compacts_to_identical_segments(spark: Any, tmp_path: Path) -> None:
    """Hundreds of commits over several groups, a deletion and pauses: one compaction."""
    history: list[tuple[Any, int]] = []
    for n in range(150):
        group = f"g{n % 12}"
        history.append((("commit", group, [(p, n * 10 + p) for p in range(4)]), 1))
        if n % 40 == 0:
            history.append((("pause", group, frozenset({n % 4})), 1))
            history.append((("delete_offsets", group, [n % 4]), 1))
    play(history, tmp_path / "embedded", tmp_path / "spark", spark, segment_bytes=1000)
    assert replayed(tmp_path / "spark") == replayed(tmp_path / "embedded")
    assert files(tmp_path / "spark" / "meta") == files(tmp_path / "embedded" / "meta")
    assert len(files(tmp_path / "spark" / "meta")) > 2


def history_dir(path: Path) -> Path:
    history = [(("commit", "g0", [(p, n) for p in range(4)]), 5) for n in range(60)]
    with open_log(path, SEGMENT_BYTES) as log:
        log.append(topic_records(), timestamp_ms=1_000_000)
        now = 1_000_000
        for step, elapsed in history:
            now += elapsed
            log.append(step_records(step, now), timestamp_ms=now)
        log.sync()
    return path


def test_out_writes_a_compacted_copy_and_leaves_the_source_untouched(
        spark: Any, tmp_path: Path) -> None:
    source = history_dir(tmp_path / "source")
    before = files(source / "meta")
    stats = spark_compaction.compact(spark, source, tombstone_retention_ms=RETENTION_MS,
                                     segment_bytes=SEGMENT_BYTES, out=tmp_path / "out")
    assert files(source / "meta") == before
    assert not stats.skipped and stats.records_after < stats.records_before
    kept = replayed(tmp_path / "out")
    active = len(replayed(source)) - stats.records_before  # copied as it is
    assert len(kept) == stats.records_after + active
    latest = {r.key: r.value for r in replayed(source)}
    assert {r.key: r.value for r in kept} == latest
    assert sorted(os.listdir(tmp_path)) == ["out", "source"]  # nothing left half-built


def test_a_crash_after_the_commit_point_is_finished_at_the_next_open(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = history_dir(tmp_path / "d")
    latest = {r.key: r.value for r in replayed(source)}

    def crash(directory: str, manifest: Any) -> None:
        raise OSError("power cut")

    monkeypatch.setattr(spark_compaction, "roll_forward", crash)
    with pytest.raises(OSError, match="power cut"):
        spark_compaction.compact(spark, source, tombstone_retention_ms=RETENTION_MS,
                                 segment_bytes=SEGMENT_BYTES)
    with open_log(source, SEGMENT_BYTES) as log:  # what a server's start does
        records = list(log.replay())
    assert {r.key: r.value for r in records} == latest
    assert len(records) < 61
    assert not [n for n in os.listdir(source / "meta") if not n.endswith(".log")]


def test_a_data_dir_a_live_server_holds_is_refused(spark: Any, kcsim_server: Any) -> None:
    before = files(kcsim_server.data_dir / "meta")
    with pytest.raises(DataDirLockedError):
        spark_compaction.compact(spark, kcsim_server.data_dir, tombstone_retention_ms=0)
    assert files(kcsim_server.data_dir / "meta") == before
    cli = subprocess.run(
        [sys.executable, "-m", "kcsim", "pipeline", "compact", "--data-dir",
         str(kcsim_server.data_dir), "--master", "local[1]"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert cli.returncode == 1
    assert "already in use" in cli.stderr

