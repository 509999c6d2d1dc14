"""GroupCommitWriter: group commit, durability before return, fail-stop on errors."""

from __future__ import annotations

import errno
import logging
import os
import time

import pytest
import trio

import kcsim.storage.segment_writer
from kcsim.storage import (
    GroupCommitWriter,
    RecordLog,
    StorageClosedError,
    StorageFailedError,
)

from .helpers import DurabilityTracker, entry, fold, open_record_log


def open_log(path, **options) -> RecordLog:
    log = open_record_log(path, **options)
    list(log.replay())
    return log


def replay(path) -> list:
    with open_record_log(path) as log:
        return list(log.replay())


@pytest.fixture
def tracker(monkeypatch):
    """Counts fsyncs and remembers what a power cut would keep; fsync made slow."""
    real_fsync = os.fsync

    def slow_fsync(fd):
        time.sleep(0.002)
        real_fsync(fd)

    durability = DurabilityTracker(slow_fsync)
    monkeypatch.setattr(os, "fsync", durability.fsync)
    return durability


async def test_concurrent_commits_share_fsyncs_and_are_durable_on_return(tmp_path, tracker):
    log_dir = tmp_path / "log"
    log = open_log(log_dir)
    writer = GroupCommitWriter(log, "always")
    images = 0

    async def committer(task: int) -> None:
        nonlocal images
        for round_ in range(5):
            records = [entry(f"g{task}", p, round_) for p in range(2)]
            await writer.commit(records)
            images += 1
            image = tracker.crash_image(log_dir, tmp_path / f"crash-{images}")
            survived = replay(image)
            assert all(r in survived for r in records), (task, round_)

    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        fsyncs_before = tracker.file_fsyncs
        async with trio.open_nursery() as committers:
            for task in range(40):
                committers.start_soon(committer, task)
        await writer.aclose()
    commits = 40 * 5
    assert writer.stats.commits == commits
    assert writer.stats.syncs == writer.stats.flushes
    assert writer.stats.flushes < commits / 4, writer.stats
    assert tracker.file_fsyncs - fsyncs_before < commits / 4
    log.close()
    assert fold(replay(log_dir)) == {
        entry(f"g{t}", p, 4).key: entry(f"g{t}", p, 4).value
        for t in range(40) for p in range(2)
    }


async def test_a_burst_of_commits_is_one_flush(tmp_path, tracker):
    log = open_log(tmp_path)
    writer = GroupCommitWriter(log)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        async with trio.open_nursery() as committers:
            for i in range(100):
                committers.start_soon(writer.commit, [entry("g", i, i)])
        await writer.aclose()
    assert writer.stats.flushes <= 2
    log.close()
    assert len(replay(tmp_path)) == 100


async def test_write_error_fails_pending_and_later_commits(tmp_path, monkeypatch, caplog):
    log = open_log(tmp_path)
    writer = GroupCommitWriter(log)
    failures = []

    async def doomed(i: int) -> None:
        with pytest.raises(StorageFailedError) as err:
            await writer.commit([entry("g", i, i)])
        failures.append(err.value)

    def disk_full(fd, data):
        os.write(fd, bytes(data)[:7])  # a partial frame reaches the file first
        raise OSError(errno.ENOSPC, "No space left on device")

    with caplog.at_level(logging.ERROR):
        async with trio.open_nursery() as nursery:
            await nursery.start(writer.run)
            await writer.commit([entry("g", 0, 1)])
            monkeypatch.setattr(kcsim.storage.segment_writer, "write_all", disk_full)
            for i in range(5):
                nursery.start_soon(doomed, i)
        # run() returned on its own after the failure
    assert len(failures) == 5
    assert isinstance(writer.failure, OSError) and writer.failure.errno == errno.ENOSPC
    assert "storage failed" in caplog.text
    with pytest.raises(StorageFailedError):
        await writer.commit([entry("g", 9, 9)])
    with pytest.raises(StorageFailedError):
        writer.commit_now([entry("g", 9, 9)])
    log.close()
    monkeypatch.undo()
    assert replay(tmp_path) == [entry("g", 0, 1)]  # no partial frame left behind


async def test_fsync_error_fails_the_writer(tmp_path, monkeypatch):
    log = open_log(tmp_path)
    writer = GroupCommitWriter(log)

    def broken_fsync(fd):
        raise OSError(errno.EIO, "Input/output error")

    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        monkeypatch.setattr(os, "fsync", broken_fsync)
        with pytest.raises(StorageFailedError, match="Input/output error"):
            await writer.commit([entry("g", 0, 1)])
    monkeypatch.undo()
    with pytest.raises(StorageFailedError):
        await writer.commit([entry("g", 0, 2)])
    log.close()


async def test_interval_policy_releases_at_once_and_fsyncs_periodically(tmp_path, tracker):
    log = open_log(tmp_path)
    writer = GroupCommitWriter(log, "interval", interval_ms=30)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        syncs_before = writer.stats.syncs
        for i in range(200):
            await writer.commit([entry("g", i % 4, i)])
        assert writer.stats.syncs == syncs_before  # nobody waited for an fsync
        await trio.sleep(0.2)
        assert writer.stats.syncs >= 1
        image = tracker.crash_image(tmp_path, tmp_path.parent / (tmp_path.name + "-crash"))
        assert len(replay(image)) == 200
        idle_syncs = writer.stats.syncs
        await trio.sleep(0.1)
        assert writer.stats.syncs == idle_syncs  # nothing new, no fsync
        await writer.aclose()
    log.close()


@pytest.mark.parametrize("policy", ["interval", "never"])
async def test_commit_returns_once_the_records_are_in_the_os(tmp_path, tracker, policy):
    """What a server acknowledges after commit() survives the process dying, fsync or not."""
    log = open_log(tmp_path)
    writer = GroupCommitWriter(log, policy, interval_ms=60_000)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        fsyncs = tracker.file_fsyncs
        await writer.commit([entry("g", 0, 42)])
        with open_record_log(tmp_path, read_only=True) as reader:  # another reader: via the OS
            assert list(reader.replay()) == [entry("g", 0, 42)]
        assert tracker.file_fsyncs == fsyncs and writer.stats.syncs == 0
        await writer.aclose()
    log.close()


def test_interval_must_be_positive(tmp_path):
    with open_log(tmp_path) as log, pytest.raises(ValueError, match="interval_ms"):
        GroupCommitWriter(log, "interval", interval_ms=0)


async def test_never_policy_does_not_fsync(tmp_path, tracker):
    log = open_log(tmp_path)
    writer = GroupCommitWriter(log, "never")
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        before = tracker.file_fsyncs
        for i in range(50):
            await writer.commit([entry("g", i, i)])
        await writer.aclose()
    assert tracker.file_fsyncs == before and writer.stats.syncs == 0
    log.close()
    assert len(replay(tmp_path)) == 50


def test_commit_now_without_trio(tmp_path, tracker):
    log = open_log(tmp_path)
    writer = GroupCommitWriter(log, "always")
    for i in range(5):
        writer.commit_now([entry("g", i, i)])
    assert writer.stats.syncs == 5
    image = tracker.crash_image(tmp_path, tmp_path.parent / (tmp_path.name + "-crash"))
    assert len(replay(image)) == 5
    log.close()


async def test_after_aclose_commits_are_refused(tmp_path):
    log = open_log(tmp_path)
    writer = GroupCommitWriter(log)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        await writer.commit([entry("g", 0, 0)])
        await writer.aclose()
    with pytest.raises(StorageClosedError):
        await writer.commit([entry("g", 0, 1)])
    log.close()


async def test_cancelled_writer_releases_waiting_committers(tmp_path):
    log = open_log(tmp_path)
    writer = GroupCommitWriter(log)
    async with trio.open_nursery() as outer:
        async with trio.open_nursery() as writer_nursery:
            await writer_nursery.start(writer.run)
            writer_nursery.cancel_scope.cancel()
        with pytest.raises(StorageClosedError):
            await writer.commit([entry("g", 0, 1)])
        outer.cancel_scope.cancel()
    log.close()


async def test_compact_now_runs_between_flushes(tmp_path):
    log = open_log(tmp_path, segment_bytes=2000)
    writer = GroupCommitWriter(log)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        for burst in range(60):
            async with trio.open_nursery() as committers:
                for p in range(5):
                    committers.start_soon(writer.commit, [entry("g", p, burst)])
        stats = await writer.compact_now(tombstone_retention_ms=0)
        assert stats.records_after < stats.records_before
        assert stats.segments_after < stats.segments_before
        await writer.aclose()
    log.close()
    assert fold(replay(tmp_path)) == fold(entry("g", p, 59) for p in range(5))


async def test_no_compaction_starts_while_compactions_are_held(tmp_path):
    """Held, the segments stay as they are while commits and fsyncs go on; released, the
    periodic compaction and a waiting compact_now run again."""
    log = open_log(tmp_path, segment_bytes=2000)
    writer = GroupCommitWriter(log, "interval", interval_ms=5, compact_interval_ms=10,
                               tombstone_retention_ms=0)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        async with writer.compactions_held():
            segments = log.segments
            for i in range(600):
                await writer.commit([entry("g", i % 5, i)])
                if i % 100 == 0:
                    await trio.sleep(0.015)
            waiting = trio.Event()

            async def compact() -> None:
                await writer.compact_now(tombstone_retention_ms=0)
                waiting.set()

            nursery.start_soon(compact)
            await trio.sleep(0.05)
            assert writer.stats.compactions == 0 and not waiting.is_set()
            assert log.segments[:len(segments) - 1] == segments[:-1]  # none rewritten
            assert writer.stats.syncs >= 3
        with trio.fail_after(10):
            await waiting.wait()
        assert writer.stats.compactions >= 1
        await writer.aclose()
    log.close()
    assert fold(replay(tmp_path)) == fold(entry("g", i % 5, i) for i in range(600))


async def test_periodic_compaction_keeps_the_log_small(tmp_path):
    log = open_log(tmp_path, segment_bytes=2000)
    writer = GroupCommitWriter(log, "interval", interval_ms=5, compact_interval_ms=10,
                               tombstone_retention_ms=0)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        for i in range(2000):
            await writer.commit([entry("g", i % 5, i)])
            if i % 100 == 0:
                await trio.sleep(0.015)
        await trio.sleep(0.05)
        await writer.aclose()
    assert writer.stats.compactions >= 3 and writer.stats.syncs >= 3
    assert log.size_bytes < 5 * 2000
    log.close()
    assert fold(replay(tmp_path)) == fold(entry("g", i % 5, i) for i in range(2000))


async def next_compaction(writer: GroupCommitWriter) -> None:
    done = trio.Event()
    writer.on_compacted = lambda *_: done.set()
    with trio.fail_after(10):
        await done.wait()


async def test_the_dirty_ratio_compacts_long_before_an_interval(tmp_path):
    """Segments rolling under overwrites are compacted as soon as they outweigh the clean
    part: no interval passes here."""
    log = open_log(tmp_path, segment_bytes=2000)
    writer = GroupCommitWriter(log, "never", compact_interval_ms=3_600_000)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        for i in range(2000):
            await writer.commit([entry("g", i % 5, i)])
        while log.dirty_bytes > log.shape().clean_bytes:  # the last rolls' are under way
            await next_compaction(writer)
        await writer.aclose()
    assert writer.stats.compactions >= 3
    assert log.size_bytes < 5 * 2000
    log.close()
    assert fold(replay(tmp_path)) == fold(entry("g", i % 5, i) for i in range(2000))


async def test_the_cleaner_compacts_while_the_event_loop_is_busy(tmp_path):
    """Commits appended without the event loop ever getting back control are compacted
    as the dirty ratio calls for: the cleaner's thread waits for no turn of the loop."""
    log = open_log(tmp_path, segment_bytes=2000)
    writer = GroupCommitWriter(log, "never", compact_interval_ms=3_600_000)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        deadline = time.monotonic() + 10
        i = 0
        while writer.stats.compactions < 3:  # no await: the loop stays busy with commits
            assert time.monotonic() < deadline, f"{writer.stats.compactions} compactions"
            writer.commit_nowait([entry("g", i % 5, i)])
            i += 1
        await writer.aclose()
    log.close()
    assert fold(replay(tmp_path)) == fold(entry("g", n % 5, n) for n in range(i))


async def dirty_log_then_restart(tmp_path, *, compacts: bool, **options):
    """A log written by a writer that never compacted, reopened under a writer with
    `options` that is asked to check once (as the server does when ready); waits for the
    compaction if it `compacts`, else gives it time to (wrongly) start one."""
    log = open_log(tmp_path, segment_bytes=2000)
    for i in range(600):
        log.append([entry("g", i % 5, i)])
    log.sync()
    log.close()
    log = open_log(tmp_path, segment_bytes=2000)
    writer = GroupCommitWriter(log, "never", **{"compact_interval_ms": 3_600_000, **options})
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        writer.check_compaction()  # its compaction ends on the trio thread, after this
        if compacts:
            await next_compaction(writer)
        else:
            await trio.sleep(0.2)
        await writer.aclose()
    return log, writer


async def test_a_log_left_dirty_is_compacted_when_the_server_is_ready(tmp_path):
    log, writer = await dirty_log_then_restart(tmp_path, compacts=True)
    assert writer.stats.compactions == 1 and log.dirty_bytes == 0
    log.close()


async def test_a_log_dirty_below_the_ratio_waits(tmp_path):
    log, writer = await dirty_log_then_restart(tmp_path, compacts=False, min_cleanable_dirty_ratio=1.0)
    assert writer.stats.compactions == 0 and log.dirty_bytes > 0
    log.close()


async def test_records_younger_than_the_lag_wait_for_it(tmp_path):
    """min_compaction_lag_ms: nothing is compacted until the dirty records are that old;
    then the writer compacts without being woken by a write."""
    log = open_log(tmp_path, segment_bytes=2000)
    writer = GroupCommitWriter(log, "never", compact_interval_ms=3_600_000,
                               min_compaction_lag_ms=500)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        for i in range(200):
            await writer.commit([entry("g", i % 5, i)])
        assert log.dirty_bytes > 0
        await trio.sleep(0.1)
        assert writer.stats.compactions == 0
        await next_compaction(writer)
        await writer.aclose()
    log.close()


async def test_compaction_off_never_compacts(tmp_path):
    log, writer = await dirty_log_then_restart(tmp_path, compacts=False,
                                                compact_interval_ms=None)
    assert writer.stats.compactions == 0
    log.close()
