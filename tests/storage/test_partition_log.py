"""PartitionLog: batches by offset, reopen, torn tails, prefix truncation."""

from __future__ import annotations

import logging
import os
import struct

import pytest

from kcsim.storage import CorruptLogError, OffsetOutOfRangeError, PartitionLog
from kcsim.storage.partition_log import FRAME_SIZE


def batch(base: int, count: int, size: int = 100) -> bytes:
    """Stand-in batch bytes: recognisable content of a given size."""
    head = f"batch {base}+{count};".encode()
    return (head * (size // len(head) + 1))[:size]


def fill(log: PartitionLog, batches: int, records_per_batch: int = 3, size: int = 100) -> list:
    written = []
    for _ in range(batches):
        base = log.log_end_offset
        data = batch(base, records_per_batch, size)
        log.append(base, records_per_batch - 1, data, 1000 + base)
        written.append((base, data))
    return written


def test_append_and_read_from_any_offset(tmp_path):
    with PartitionLog.open(tmp_path) as log:
        assert (log.log_start_offset, log.log_end_offset) == (0, 0)
        assert log.read(0, 1000) == []
        written = fill(log, 10)
        assert log.log_end_offset == 30
        assert log.read(0, 10_000) == written
        assert log.read(4, 10_000) == written[1:]  # 4 is inside the batch at 3
        assert log.read(29, 10_000) == written[-1:]
        assert log.read(30, 10_000) == []


def test_max_bytes_returns_at_least_one_batch(tmp_path):
    with PartitionLog.open(tmp_path) as log:
        written = fill(log, 10, size=100)
        assert log.read(0, 1) == written[:1]
        assert log.read(0, 250) == written[:2]
        assert log.read(6, 300) == written[2:5]


def test_out_of_range_and_bad_appends(tmp_path):
    with PartitionLog.open(tmp_path) as log:
        fill(log, 2)
        with pytest.raises(OffsetOutOfRangeError):
            log.read(7, 100)
        with pytest.raises(OffsetOutOfRangeError):
            log.read(-1, 100)
        with pytest.raises(ValueError, match="is not the log end offset"):
            log.append(3, 0, b"x", 0)  # not the log end offset
        with pytest.raises(ValueError, match="last_offset_delta must be"):
            log.append(6, -1, b"x", 0)


def test_segments_roll_and_reads_span_them(tmp_path):
    with PartitionLog.open(tmp_path, segment_bytes=1000) as log:
        written = fill(log, 50)
    files = sorted(tmp_path.glob("*.log"))
    assert len(files) > 5
    assert [int(p.stem) for p in files][:2] == [0, 3 * (1000 // (FRAME_SIZE + 100))]
    with PartitionLog.open(tmp_path, segment_bytes=1000) as log:
        assert log.log_end_offset == 150
        assert log.read(0, 1 << 20) == written
        assert log.read(40, 1 << 20) == written[13:]
        assert log.read(40, 500) == written[13:18]
        more = fill(log, 5)
    with PartitionLog.open(tmp_path, segment_bytes=1000) as log:
        assert log.read(0, 1 << 20) == written + more


def test_torn_tail_is_cut_at_open(tmp_path, caplog):
    with PartitionLog.open(tmp_path) as log:
        written = fill(log, 5)
        log.sync()
    [path] = tmp_path.glob("*.log")
    os.truncate(path, path.stat().st_size - 10)
    with caplog.at_level(logging.WARNING), PartitionLog.open(tmp_path) as log:
        assert log.log_end_offset == 12
        assert log.read(0, 1 << 20) == written[:4]
        log.append(12, 0, b"after", 5)
        assert log.read(12, 100) == [(12, b"after")]
    assert "torn tail" in caplog.text


def test_flipped_bit_in_last_batch_is_a_torn_tail_but_earlier_is_corruption(tmp_path):
    with PartitionLog.open(tmp_path) as log:
        fill(log, 5)
    [path] = tmp_path.glob("*.log")
    frame = FRAME_SIZE + 100
    data = bytearray(path.read_bytes())
    data[4 * frame + 50] ^= 1
    path.write_bytes(bytes(data))
    with PartitionLog.open(tmp_path) as log:
        assert log.log_end_offset == 12
        fill(log, 2)
    data = bytearray(path.read_bytes())
    data[1 * frame + 50] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptLogError) as err:
        PartitionLog.open(tmp_path)
    assert (err.value.path, err.value.position) == (str(path), frame)
    with PartitionLog.open(tmp_path, repair=True) as log:
        assert log.log_end_offset == 3


def test_missing_middle_segment_is_corruption(tmp_path):
    with PartitionLog.open(tmp_path, segment_bytes=1000) as log:
        fill(log, 50)
    files = sorted(tmp_path.glob("*.log"))
    files[2].unlink()
    with pytest.raises(CorruptLogError, match="missing segment"):
        PartitionLog.open(tmp_path, segment_bytes=1000)
    with PartitionLog.open(tmp_path, segment_bytes=1000, repair=True) as log:
        assert log.log_end_offset == int(files[2].stem)


def test_truncate_prefix_deletes_old_segments_and_survives_reopen(tmp_path):
    with PartitionLog.open(tmp_path, segment_bytes=1000) as log:
        written = fill(log, 50)
        before = len(list(tmp_path.glob("*.log")))
        log.truncate_prefix(61)
        assert log.log_start_offset == 61
        assert len(list(tmp_path.glob("*.log"))) < before
        with pytest.raises(OffsetOutOfRangeError):
            log.read(60, 100)
        assert log.read(61, 1 << 20) == written[20:]
    with PartitionLog.open(tmp_path, segment_bytes=1000) as log:
        assert (log.log_start_offset, log.log_end_offset) == (61, 150)
        assert log.read(61, 1 << 20) == written[20:]
        log.truncate_prefix(150)
        assert log.read(150, 100) == []
        assert [p.name for p in tmp_path.glob("*.log")] == [f"{150:020d}.log"]
        fill(log, 1)
    with PartitionLog.open(tmp_path, segment_bytes=1000) as log:
        assert (log.log_start_offset, log.log_end_offset) == (150, 153)


def test_delete_removes_the_partition(tmp_path):
    path = tmp_path / "topic-0"
    log = PartitionLog.open(path)
    fill(log, 3)
    log.delete()
    assert not path.exists()


def test_batches_are_stored_verbatim(tmp_path):
    payload = bytes(range(256)) * 4
    with PartitionLog.open(tmp_path) as log:
        log.append(0, 9, payload, 42)
    [path] = tmp_path.glob("*.log")
    data = path.read_bytes()
    assert data[FRAME_SIZE:] == payload
    assert struct.unpack_from("<iqq", data, 12) == (9, 0, 42)


@pytest.fixture
def fsynced(monkeypatch):
    """The paths os.fsync is called on, in order."""
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def test_a_log_opened_without_dir_syncs_makes_them_durable_at_its_first_sync(tmp_path, fsynced):
    """Created on an event loop, a partition waits for no disk: its new directories and
    first segment become durable with its data, at the next sync."""
    directory = tmp_path / "topic" / "0"
    log = PartitionLog.open(directory, sync_dirs=False)
    assert fsynced == []
    fill(log, 2)
    log.sync()
    assert {str(tmp_path), str(tmp_path / "topic"), str(directory)} <= set(fsynced)
    fsynced.clear()
    log.sync()
    assert str(tmp_path) not in fsynced  # once is enough
    log.close()
    with PartitionLog.open(directory) as again:
        assert again.log_end_offset == 6


def test_a_delete_without_a_dir_sync_waits_for_no_disk(tmp_path, fsynced):
    log = PartitionLog.open(tmp_path / "0", sync_dirs=False)
    fill(log, 1)
    log.delete(sync_dir=False)
    assert fsynced == []
    assert not (tmp_path / "0").exists()


def test_rewrite_keeps_offsets_moves_the_start_and_survives_reopen(tmp_path):
    log = PartitionLog.open(tmp_path / "p", segment_bytes=400)
    fill(log, 6)  # offsets 0..17, three per batch
    kept = [(9, 5, batch(9, 3), 9), (15, 2, batch(15, 3), 15)]  # 9..14 and 15..17
    log = log.rewrite(kept, 9)
    assert (log.log_start_offset, log.log_end_offset) == (9, 18)
    assert [b for _, b in log.read(12, 1 << 20)] == [batch(9, 3), batch(15, 3)]
    log.append(18, 0, batch(18, 1), 18)
    log.close()
    log = PartitionLog.open(tmp_path / "p", segment_bytes=400)
    assert (log.log_start_offset, log.log_end_offset) == (9, 19)
    assert [base for base, _ in log.read(9, 1 << 20)] == [9, 15, 18]
    log.close()


def test_a_rewrite_cut_short_by_a_crash_is_finished_or_undone(tmp_path):
    from kcsim.storage import recover_rewrite

    directory = tmp_path / "p"
    log = PartitionLog.open(directory)
    fill(log, 2)
    log.close()
    staged = PartitionLog.open(str(directory) + ".rewritten")  # written, not yet swapped in
    staged.close()
    recover_rewrite(str(directory))  # the old log stays
    assert not os.path.exists(str(directory) + ".rewritten")
    assert PartitionLog.open(directory).log_end_offset == 6

    os.rename(directory, str(directory) + ".replaced")  # moved aside, new one not in place
    fresh = PartitionLog.open(str(directory) + ".rewritten")
    fresh.close()
    recover_rewrite(str(directory))  # the rewritten log wins
    assert not os.path.exists(str(directory) + ".replaced")
    assert PartitionLog.open(directory).log_end_offset == 0


def test_a_closed_segment_is_replaced_whole_and_a_cut_short_cleaning_leaves_the_old(tmp_path):
    """What the log cleaner does to a segment: its cleaned copy, covering the same offsets,
    is renamed over it; a copy a crash left behind is removed at open, the old one stays."""
    segment_bytes = 3 * (FRAME_SIZE + 100)
    with PartitionLog.open(tmp_path, segment_bytes=segment_bytes) as log:
        written = fill(log, 5)
        (first, end, _size), *_rest = log.segment_ranges()
        assert (first, end) == (0, 9) and log.read_segment(0) == written[:3]
        kept = [(0, 5, b"cleaned 0..5", 1000), (6, 2, b"cleaned 6..8", 1006)]
        with pytest.raises(ValueError, match="do not end where the segment does"):
            log.replace_segment(0, kept[:1])
        assert not log.replace_segment(9, kept)  # the active one
        assert log.replace_segment(0, kept)
        assert log.read(0, 10_000) == [(0, b"cleaned 0..5"), (6, b"cleaned 6..8"), *written[3:]]
        assert log.read(4, 10) == [(0, b"cleaned 0..5")]
    segment_path = tmp_path / f"{0:020d}.log"
    (tmp_path / (segment_path.name + ".cleaned")).write_bytes(b"half written")
    with PartitionLog.open(tmp_path, segment_bytes=segment_bytes) as log:
        assert log.read(0, 10_000) == [(0, b"cleaned 0..5"), (6, b"cleaned 6..8"), *written[3:]]
        assert not (tmp_path / (segment_path.name + ".cleaned")).exists()
        log.truncate_prefix(9)
        assert not log.replace_segment(0, kept)  # retention took it meanwhile
        assert log.read_segment(0) == []
