"""The clean/dirty split of a record log: counted as segments roll, kept across restarts."""

from __future__ import annotations

from kcsim.storage import compact
from kcsim.storage.cleaner_checkpoint import CHECKPOINT_NAME, CleanerCheckpoint, write_checkpoint

from .helpers import entry, open_record_log

SEGMENT_BYTES = 600


def fill(path, n: int, start: int = 0) -> None:
    """`n` overwrites of three keys, replayed first so the log is writable."""
    with open_record_log(path, segment_bytes=SEGMENT_BYTES) as log:
        list(log.replay())
        for i in range(start, start + n):
            log.append([entry("g", i % 3, i)], timestamp_ms=1000 + i)
        log.sync()


def reopened(path):
    log = open_record_log(path, segment_bytes=SEGMENT_BYTES)
    list(log.replay())
    return log


def compact_and_mark(log, now_ms: int = 5000) -> int:
    """Compact every closed segment and record them clean, as the writer does."""
    closed = log.closed_segments()
    compact(log, tombstone_retention_ms=0, now_ms=now_ms, segments=len(closed))
    log.mark_clean(closed[-1].end, now_ms)
    return closed[-1].end


def test_a_log_never_compacted_is_all_dirty(tmp_path):
    fill(tmp_path, 100)
    with reopened(tmp_path) as log:
        shape = log.shape()
        closed = log.segments[:-1]
        assert shape.clean_segments == 0 and shape.clean_bytes == 0
        assert shape.dirty_bytes == log.dirty_bytes == sum(s.size for s in closed) > 0
        assert shape.compacted_at_ms is None


def test_rolls_add_to_the_dirty_bytes_and_a_compaction_clears_them(tmp_path):
    with reopened(tmp_path) as log:
        before = log.dirty_bytes
        for i in range(100):
            log.append([entry("g", i % 3, i)], timestamp_ms=1000 + i)
        assert log.dirty_bytes > before
        newest = [d.newest_ms for d in log.shape().dirty]
        assert newest == sorted(newest) and newest[-1] <= 1099  # each segment's last record
        compact_and_mark(log)
        assert log.dirty_bytes == 0
        assert log.shape().clean_bytes == sum(s.size for s in log.segments[:-1])


def test_the_clean_end_survives_a_restart(tmp_path):
    fill(tmp_path, 100)
    with reopened(tmp_path) as log:
        clean_end = compact_and_mark(log, now_ms=7000)
        clean_bytes = log.shape().clean_bytes
    fill(tmp_path, 50, start=100)
    with reopened(tmp_path) as log:
        shape = log.shape()
        assert log.cleaner_checkpoint == CleanerCheckpoint(clean_end, 7000)
        assert shape.clean_bytes == clean_bytes and shape.compacted_at_ms == 7000
        assert shape.dirty_bytes == sum(s.size for s in log.segments[shape.clean_segments:-1])


def test_a_crash_before_the_checkpoint_leaves_the_log_dirtier_never_cleaner(tmp_path):
    fill(tmp_path, 100)
    with reopened(tmp_path) as log:
        compact(log, tombstone_retention_ms=0, segments=len(log.closed_segments()))
    with reopened(tmp_path) as log:  # the swap is done, the checkpoint was not written
        assert log.shape().clean_bytes == 0 and log.dirty_bytes > 0


def test_a_checkpoint_past_the_log_is_lowered_at_open(tmp_path):
    """As after --repair cut the log below it: positions past the cut are written anew."""
    fill(tmp_path, 30)
    write_checkpoint(str(tmp_path), CleanerCheckpoint(10_000, 5))
    with reopened(tmp_path) as log:
        closed = log.segments[:-1]
        assert log.cleaner_checkpoint.clean_end == closed[-1].end
        assert log.dirty_bytes == 0
    with reopened(tmp_path) as log:  # and the lowered one was written
        assert log.cleaner_checkpoint.clean_end == closed[-1].end


def test_an_unreadable_checkpoint_counts_the_log_as_dirty(tmp_path, caplog):
    fill(tmp_path, 100)
    (tmp_path / CHECKPOINT_NAME).write_bytes(b"{not json")
    with reopened(tmp_path) as log:
        assert log.shape().clean_bytes == 0 and log.dirty_bytes > 0
    assert "unreadable" in caplog.text


def test_a_read_only_log_counts_without_writing(tmp_path):
    fill(tmp_path, 100)
    with reopened(tmp_path) as log:
        compact_and_mark(log)
        expected = log.shape()
    with open_record_log(tmp_path, read_only=True) as log:
        assert log.shape() == expected
