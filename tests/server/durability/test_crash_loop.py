"""A broker killed again and again, sooner than any compaction interval, stays compact.

The record log first gets a live state of several segments (groups committing
many partitions once); then the commit storm of test_crash overwrites a few
keys while the server is SIGKILLed every 1-2 s after it is ready, with the
default 60 s compaction interval, so only the dirty ratio (checked after replay
and as segments roll) can compact it. At the end the log, the records replayed
and the start-up time are within 2x of what one compaction of the same final
state gives, and every acknowledged commit survived every kill.

The lives are scaled to fit about 90 s on two shared cores (a life is a start
of the Python process, 1-2 s of storm, the kill and a check of the acknowledged
commits); `KCSIM_SOAK=1` runs 100.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import statistics
import time
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.server.durability import RECORD_TYPES
from kcsim.storage import RecordLog, StorageError, compact
from kcsim.storage.compaction_policy import DEFAULT_MIN_CLEANABLE_DIRTY_RATIO

from ...conftest import KcsimProcess
from .test_crash import (
    PARTITIONS,
    TOPIC,
    Committer,
    check_acknowledged,
    kill,
    storm_then_kill,
)
from .wire import Wire

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

LIVES = 100 if os.environ.get("KCSIM_SOAK") else 25
LIFE_S = (1.0, 2.0)
CLIENTS = 4
SEGMENT_BYTES = 64 * 1024
LIVE_TOPIC, LIVE_PARTITIONS, LIVE_GROUPS = "live", 500, 40  # 20,000 live offsets
REPLAYED = re.compile(r"replayed (\d+) records in ([\d.]+) s")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120 + LIVES * 6)]


def meta_bytes(data_dir: Path) -> int:
    return sum(f.stat().st_size for f in (data_dir / "meta").iterdir())


def timed_start(server: Any) -> tuple[float, int, float]:
    """Start `server`: seconds to its ready line, and the records its replay read and
    the seconds it took, from its log."""
    started = time.monotonic()
    server.start()
    ready_s = time.monotonic() - started
    records, seconds = REPLAYED.findall(server.stderr(all_runs=False))[-1]
    return ready_s, int(records), float(seconds)


def typical_start(data_dir: Path, copies: Path) -> tuple[float, int, float]:
    """The median start of three servers, each on its own copy of `data_dir` (a start
    may compact after it is ready)."""
    starts = []
    for n in range(3):
        copy = copies / f"{data_dir.name}{n}"
        shutil.copytree(data_dir, copy)
        server = KcsimProcess(copy, copies / f"{data_dir.name}{n}.log",
                              segment_bytes=SEGMENT_BYTES, fsync="never")
        try:
            starts.append(timed_start(server))
        finally:
            server.stop()
    return (statistics.median(s[0] for s in starts), starts[0][1],
            statistics.median(s[2] for s in starts))


def compact_once(data_dir: Path) -> None:
    """One compaction of everything closed, as the server's own would do it."""
    with RecordLog.open(data_dir / "meta", types=RECORD_TYPES,
                        segment_bytes=SEGMENT_BYTES) as log:
        for _ in log.replay():
            pass
        compact(log, tombstone_retention_ms=24 * 60 * 60 * 1000)


def dirty_share(data_dir: Path) -> float:
    """The share of the closed segments' bytes written since the last compaction, as
    the server counts it (its cleaner checkpoint), read without disturbing it."""
    while True:
        try:
            with RecordLog.open(data_dir / "meta", types=RECORD_TYPES, read_only=True) as log:
                shape = log.shape()
            break
        except (FileNotFoundError, StorageError):
            pass  # a compaction swapped segments while they were read: read them again
    closed = shape.clean_bytes + shape.dirty_bytes
    return shape.dirty_bytes / closed if closed else 0.0


def test_a_broker_killed_in_a_loop_keeps_its_log_compact(
    kcsim_factory: Callable[..., Any], unique_name: Callable[[str], str], tmp_path: Path
) -> None:
    seed = random.randrange(1 << 32)
    rng = random.Random(seed)
    server = kcsim_factory(segment_bytes=SEGMENT_BYTES, fsync="never")
    with Wire.to(server) as wire:
        wire.create_topic(TOPIC, 4)
        wire.create_topic(LIVE_TOPIC, LIVE_PARTITIONS)
        for g in range(LIVE_GROUPS):
            wire.commit(unique_name(f"live{g}"), LIVE_TOPIC,
                        dict.fromkeys(range(LIVE_PARTITIONS), g))
    committers = [Committer(unique_name(f"storm{i}")) for i in range(CLIENTS)]
    lives = []  # (bytes left by the kill, then the next start: ready s, records, replay s)
    for life in range(LIVES):
        context = f"seed {seed}, life {life}"
        committers = storm_then_kill(server, committers, rng.uniform(*LIFE_S), context)
        lives.append((meta_bytes(server.data_dir), *timed_start(server)))
        check_acknowledged(server, committers, context)
    # The last start compacts once its log is dirty enough, as every start did when
    # its life was long enough; then the state a kill leaves is measured.
    deadline = time.monotonic() + 30
    while (share := dirty_share(server.data_dir)) > DEFAULT_MIN_CLEANABLE_DIRTY_RATIO:
        assert time.monotonic() < deadline, f"seed {seed}: the log stays {share:.0%} dirty"
        time.sleep(0.1)
    kill(server)

    final = tmp_path / "final"
    shutil.copytree(server.data_dir, final)
    compacted = tmp_path / "compacted"
    shutil.copytree(server.data_dir, compacted)
    compact_once(compacted)
    end_bytes, once_bytes = meta_bytes(final), meta_bytes(compacted)
    end_ready, end_records, end_replay = typical_start(final, tmp_path)
    once_ready, once_records, once_replay = typical_start(compacted, tmp_path)
    written = sum(c.next_request - 1 for c in committers) * PARTITIONS
    print(f"\n{LIVES} lives, {written} offsets committed; at the end: {end_bytes} bytes, "
          f"{end_records} records replayed in {end_replay:.3f} s, ready in {end_ready:.2f} s; "
          f"after one compaction: {once_bytes} bytes, {once_records} records replayed in "
          f"{once_replay:.3f} s, ready in {once_ready:.2f} s; largest over the lives: "
          f"{max(x[0] for x in lives)} bytes, {max(x[2] for x in lives)} records replayed")
    where = f"seed {seed}"
    assert written > 10 * once_records, f"{where}: the storm wrote only {written} records"
    assert end_bytes <= 2 * once_bytes, f"{where}: {end_bytes} bytes, {once_bytes} compacted"
    assert end_records <= 2 * once_records, f"{where}: {end_records} records, {once_records}"
    assert end_ready <= 2 * once_ready, f"{where}: ready in {end_ready:.2f} s, {once_ready:.2f} s"
    # Every life: bounded by the live state, not by the lives before it (uncompacted,
    # the log would hold every commit: `written` records). A life killed while it
    # compacts leaves what it wrote meanwhile to the next, hence more than 2x.
    for life, (size, _ready, records, _replay) in enumerate(lives):
        assert size <= 6 * once_bytes and records <= 6 * once_records, (
            f"{where}: life {life} left {size} bytes, {records} records to replay")
