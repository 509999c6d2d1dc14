"""RecordLog: round trips, segment rolling, torn tails, corruption and repair."""

from __future__ import annotations

import logging
import os
import struct
from typing import TYPE_CHECKING

import pytest
from crc32c import crc32c
from msgspec.structs import replace

from kcsim.storage import (
    CorruptLogError,
    Record,
    RecordTypes,
    StorageError,
    UnsupportedRecordError,
)
from kcsim.storage.segment import (
    FRAME,
    MAX_BATCH_RECORDS,
    SEGMENT_HEADER_SIZE,
    decode_segment_header,
    encode_frames,
    frame_timestamp,
    segment_name,
)

from .helpers import (
    COUNTER,
    DOCUMENT,
    ENTRY,
    PAIR,
    TYPES,
    CounterValue,
    EntryKey,
    EntryValue,
    entry,
    fold,
    frame_starts,
    one_of_each_type,
    open_record_log,
)

if TYPE_CHECKING:
    from pathlib import Path


def write_log(path: Path, records: list[Record], *, segment_bytes: int = 1 << 20,
              batch: int = 1) -> list[Path]:
    """Append ``records`` in appends of ``batch`` (1: a plain frame per record), sync,
    close; returns the segment files."""
    with open_record_log(path, segment_bytes=segment_bytes) as log:
        for i in range(0, len(records), batch):
            log.append(records[i:i + batch])
        log.sync()
    return segment_files(path)


def segment_files(path: Path) -> list[Path]:
    return sorted(path.glob("*.log"))


def replay(path: Path, **options) -> list[Record]:
    with open_record_log(path, **options) as log:
        return list(log.replay())


def commits(n: int, start: int = 0) -> list[Record]:
    return [entry("group", i % 7, start + i) for i in range(n)]


def flip_bit(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x10
    path.write_bytes(bytes(data))


# -- round trips -------------------------------------------------------------------


def test_every_record_type_round_trips(tmp_path):
    records = one_of_each_type(1) + one_of_each_type(2)
    records += [Record(r.key, None) for r in one_of_each_type(3)]  # tombstones of every type
    write_log(tmp_path, records)
    assert replay(tmp_path) == records


def test_new_log_is_empty_and_created(tmp_path):
    path = tmp_path / "a" / "b"
    assert replay(path) == []
    assert [p.name for p in segment_files(path)] == [segment_name(0)]


def test_appends_after_reopen_follow_earlier_records(tmp_path):
    first, second = commits(30), commits(30, start=100)
    write_log(tmp_path, first)
    with open_record_log(tmp_path) as log:
        assert list(log.replay()) == first
        log.append(second)
        log.sync()
    assert replay(tmp_path) == first + second


def test_append_without_replay_validates_first(tmp_path):
    write_log(tmp_path, commits(5))
    with open_record_log(tmp_path) as log:
        log.append(commits(5, start=50))
    assert replay(tmp_path) == commits(5) + commits(5, start=50)


def test_segments_roll_at_the_configured_size_with_padded_base_names(tmp_path):
    records = commits(200)
    files = write_log(tmp_path, records, segment_bytes=1000)
    assert len(files) > 5
    bases = []
    for path in files:
        assert path.stat().st_size <= 1000
        header = decode_segment_header(path.read_bytes())
        assert not isinstance(header, str)
        bases.append(header[0])
        assert path.name == segment_name(header[0]) and len(path.stem) == 20
    assert bases[0] == 0 and bases == sorted(bases)
    assert replay(tmp_path) == records


def test_a_frame_bigger_than_a_segment_gets_a_segment_of_its_own(tmp_path):
    big = Record(EntryKey("g", "bucket", 0), EntryValue(1, note="x" * 5000))
    records = commits(3) + [big] + commits(3)
    write_log(tmp_path, records, segment_bytes=500, batch=100)
    assert replay(tmp_path) == records


def test_one_append_writes_a_batch_frame_per_run_of_one_record_type(tmp_path):
    tombstones = [Record(r.key, None) for r in commits(2, start=50)]
    records = commits(4) + tombstones + one_of_each_type(1)[1:3] + commits(3, start=10)
    with open_record_log(tmp_path) as log:
        log.append(records)
        log.sync()
    [path] = segment_files(tmp_path)
    # entries and their tombstones, a document, a counter, entries
    assert len(frame_starts(path)) == 4
    with open_record_log(tmp_path) as log:
        assert list(log.replay()) == records
        assert log.segments[-1].end == len(records)  # positions count records, not frames


def test_a_run_longer_than_a_batch_is_split(tmp_path):
    records = commits(MAX_BATCH_RECORDS + 5)
    [path] = write_log(tmp_path, records, batch=len(records))
    assert len(frame_starts(path)) == 2
    assert replay(tmp_path) == records


@pytest.mark.parametrize("cut", [1, 26, 60])
def test_a_torn_batch_frame_loses_the_whole_batch_and_nothing_before(tmp_path, caplog, cut):
    first, second = commits(5), commits(5, start=5)
    with open_record_log(tmp_path) as log:
        log.append(first)
        log.append(second)
        log.sync()
    [path] = segment_files(tmp_path)
    os.truncate(path, frame_starts(path)[-1] + cut)
    with caplog.at_level(logging.WARNING):
        assert replay(tmp_path) == first
    assert "torn tail" in caplog.text
    with open_record_log(tmp_path) as log:
        list(log.replay())
        assert log.segments[-1].end == len(first)
        log.append(commits(2, start=99))
        log.sync()
    assert replay(tmp_path) == first + commits(2, start=99)


@pytest.mark.parametrize("damage", ["pair array", "record count"])
def test_a_batch_frame_that_does_not_decode_is_located(tmp_path, damage):
    frame = bytearray(encode_frames(TYPES, commits(3), 0)[0][0])
    if damage == "pair array":
        frame[FRAME.size] = 0x91  # claims one pair, three follow
    else:
        struct.pack_into("<I", frame, FRAME.size - 6, 4)  # the header claims four records
    struct.pack_into("<I", frame, 4, crc32c(bytes(frame[8:])))  # a valid CRC over the damage
    [path] = write_log(tmp_path, commits(2))
    with open(path, "ab") as f:
        f.write(frame)
    with pytest.raises(CorruptLogError) as err:
        replay(tmp_path)
    assert err.value.position == frame_starts(path)[-1]
    assert "does not decode" in str(err.value)


def test_frames_carry_the_write_timestamp(tmp_path):
    with open_record_log(tmp_path) as log:
        log.append(commits(1), timestamp_ms=1_234_567)
        log.append(commits(3), timestamp_ms=1_234_568)  # one batch frame
        log.sync()
    data = segment_files(tmp_path)[0].read_bytes()
    assert [frame_timestamp(data, p) for p in frame_starts(segment_files(tmp_path)[0])] == [
        1_234_567, 1_234_568]


def test_records_of_the_wrong_shape_are_refused_before_anything_is_written(tmp_path):
    with open_record_log(tmp_path) as log:
        with pytest.raises(TypeError):
            log.append([entry("g", 0, 1), Record(EntryKey("g", "bucket", 0), CounterValue(1))])
        with pytest.raises(TypeError):
            log.append([Record("not a key", None)])
    assert replay(tmp_path) == []


def test_closed_and_read_only_logs_refuse_writes(tmp_path):
    log = open_record_log(tmp_path)
    log.close()
    with pytest.raises(StorageError):
        log.append(commits(1))
    with open_record_log(tmp_path, read_only=True) as ro, pytest.raises(StorageError):
        ro.append(commits(1))


# -- torn tails ----------------------------------------------------------------------


@pytest.mark.parametrize("cut", [1, 7, 8, 20, 26, 30])
def test_a_partial_last_frame_is_truncated_with_a_warning(tmp_path, caplog, cut):
    records = commits(20)
    [path] = write_log(tmp_path, records)
    last = frame_starts(path)[-1]
    os.truncate(path, last + cut)
    with caplog.at_level(logging.WARNING):
        assert replay(tmp_path) == records[:-1]
    assert "torn tail" in caplog.text and str(path) in caplog.text
    assert path.stat().st_size == last
    with open_record_log(tmp_path) as log:  # appends go right after the cut
        list(log.replay())
        log.append(commits(1, start=99))
        log.sync()
    assert replay(tmp_path) == records[:-1] + commits(1, start=99)


def test_flipped_bits_in_the_last_frame_are_a_torn_tail(tmp_path, caplog):
    records = commits(20)
    [path] = write_log(tmp_path, records)
    flip_bit(path, frame_starts(path)[-1] + 30)
    with caplog.at_level(logging.WARNING):
        assert replay(tmp_path) == records[:-1]
    assert "frame CRC mismatch" in caplog.text


def test_garbage_and_zeros_after_the_last_frame_are_cut(tmp_path):
    records = commits(10)
    [path] = write_log(tmp_path, records)
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(b"\0" * 4096 + b"\xc5garbage")
    assert replay(tmp_path) == records
    assert path.stat().st_size == size


def test_torn_header_of_a_fresh_last_segment_is_rewritten(tmp_path):
    records = commits(100)
    files = write_log(tmp_path, records, segment_bytes=1000)
    last = files[-1]
    os.truncate(last, 0)  # a crash right after the roll created the file
    kept = replay(tmp_path)
    assert kept == records[: len(kept)] and len(kept) < len(records)
    with open_record_log(tmp_path) as log:
        list(log.replay())
        log.append(commits(1, start=500))
        log.sync()
    assert replay(tmp_path) == kept + commits(1, start=500)


def test_read_only_open_ignores_a_torn_tail_without_cutting_it(tmp_path):
    records = commits(10)
    [path] = write_log(tmp_path, records)
    os.truncate(path, path.stat().st_size - 3)
    size = path.stat().st_size
    assert replay(tmp_path, read_only=True) == records[:-1]
    assert path.stat().st_size == size


# -- corruption before the tail --------------------------------------------------------


def test_a_bad_frame_followed_by_valid_ones_is_corruption(tmp_path):
    records = commits(20)
    [path] = write_log(tmp_path, records)
    bad = frame_starts(path)[5]
    flip_bit(path, bad + 30)
    with pytest.raises(CorruptLogError) as err:
        replay(tmp_path)
    assert err.value.path == str(path) and err.value.position == bad
    assert str(path) in str(err.value) and f"byte {bad}" in str(err.value)


def test_corrupt_length_in_the_middle_is_corruption(tmp_path):
    [path] = write_log(tmp_path, commits(20))
    bad = frame_starts(path)[3]
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, bad, 10_000_000)
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptLogError) as err:
        replay(tmp_path)
    assert err.value.position == bad


def test_corrupt_middle_segment_raises_naming_file_and_position(tmp_path):
    records = commits(200)
    files = write_log(tmp_path, records, segment_bytes=1000)
    victim = files[2]
    bad = frame_starts(victim)[4]
    flip_bit(victim, bad + 28)
    with pytest.raises(CorruptLogError) as err:
        replay(tmp_path)
    assert (err.value.path, err.value.position) == (str(victim), bad)
    assert all(p.exists() for p in files)  # nothing was cut without repair


def test_repair_cuts_the_log_at_the_corruption(tmp_path, caplog):
    records = commits(200)
    files = write_log(tmp_path, records, segment_bytes=1000)
    victim = files[2]
    bad = frame_starts(victim)[4]
    flip_bit(victim, bad + 28)
    with caplog.at_level(logging.WARNING):
        kept = replay(tmp_path, repair=True)
    per_segment = len(frame_starts(files[0]))
    assert kept == records[: 2 * per_segment + 4]
    assert "repair" in caplog.text
    assert victim.stat().st_size == bad
    assert not any(p.exists() for p in files[4:])
    assert files[3].stat().st_size == SEGMENT_HEADER_SIZE  # a fresh active segment
    # the repaired log is clean and writable
    with open_record_log(tmp_path) as log:
        assert list(log.replay()) == kept
        log.append(commits(3, start=1000))
        log.sync()
    assert replay(tmp_path) == kept + commits(3, start=1000)


def test_a_missing_middle_segment_is_corruption(tmp_path):
    files = write_log(tmp_path, commits(200), segment_bytes=1000)
    files[3].unlink()
    with pytest.raises(CorruptLogError) as err:
        replay(tmp_path)
    assert err.value.path == str(files[4]) and "missing segment" in str(err.value)


def test_repair_cuts_at_a_missing_segment(tmp_path):
    records = commits(200)
    files = write_log(tmp_path, records, segment_bytes=1000)
    files[3].unlink()
    kept = replay(tmp_path, repair=True)
    assert kept == records[: sum(len(frame_starts(p)) for p in files[:3])]
    assert replay(tmp_path) == kept


def test_a_missing_first_segment_is_corruption(tmp_path):
    files = write_log(tmp_path, commits(200), segment_bytes=1000)
    files[0].unlink()
    with pytest.raises(CorruptLogError, match="missing segment"):
        replay(tmp_path)


def test_a_missing_segment_before_an_unsealed_one_is_found_by_counting(tmp_path):
    """A crash between writing a segment and sealing its header leaves no end to
    compare with; the frame count gives it."""
    files = write_log(tmp_path, commits(200), segment_bytes=1000)
    data = bytearray(files[1].read_bytes())
    base = decode_segment_header(bytes(data))[0]
    from kcsim.storage.segment import encode_segment_header
    data[:SEGMENT_HEADER_SIZE] = encode_segment_header(base, None)
    files[1].write_bytes(bytes(data))
    assert len(replay(tmp_path, read_only=True)) == 200  # unsealed but complete: fine
    files[2].unlink()
    with pytest.raises(CorruptLogError, match="missing segment"):
        replay(tmp_path)


def test_a_damaged_segment_header_is_corruption(tmp_path):
    files = write_log(tmp_path, commits(200), segment_bytes=1000)
    flip_bit(files[1], 10)
    with pytest.raises(CorruptLogError) as err:
        replay(tmp_path)
    assert err.value.path == str(files[1]) and err.value.position == 0


def test_records_from_a_newer_kcsim_are_refused_not_cut(tmp_path):
    [path] = write_log(tmp_path, commits(3))
    frame = bytearray(encode_frames(TYPES, commits(1), 0)[0][0])
    struct.pack_into("<H", frame, FRAME.size - 2, 999)  # unknown type id
    from crc32c import crc32c
    struct.pack_into("<I", frame, 4, crc32c(bytes(frame[8:])))
    with open(path, "ab") as f:
        f.write(bytes(frame))
    size = path.stat().st_size
    with pytest.raises(UnsupportedRecordError, match="unknown record type 999"):
        replay(tmp_path)
    with pytest.raises(UnsupportedRecordError):
        replay(tmp_path, repair=True)
    assert path.stat().st_size == size


def test_a_type_the_log_was_not_opened_with_is_refused_not_cut(tmp_path):
    [path] = write_log(tmp_path, one_of_each_type(1))
    size = path.stat().st_size
    without_pairs = RecordTypes([ENTRY, DOCUMENT, COUNTER])
    with pytest.raises(UnsupportedRecordError, match=f"unknown record type {PAIR.id}"):
        replay(tmp_path, types=without_pairs)
    assert path.stat().st_size == size
    assert replay(tmp_path) == one_of_each_type(1)


def test_a_value_version_newer_than_declared_is_refused(tmp_path):
    write_log(tmp_path, one_of_each_type(1))
    older = RecordTypes([ENTRY, replace(DOCUMENT, version=0), COUNTER, PAIR])
    with pytest.raises(UnsupportedRecordError,
                       match=f"record type {DOCUMENT.id} version 1 is newer"):
        replay(tmp_path, types=older)


def test_values_of_an_older_version_still_replay(tmp_path):
    older = RecordTypes([ENTRY, replace(DOCUMENT, version=0), COUNTER, PAIR])
    with open_record_log(tmp_path, types=older) as log:
        log.append(one_of_each_type(1))
        log.sync()
    assert replay(tmp_path) == one_of_each_type(1)


def test_replay_folds_to_the_same_state_after_reopen(tmp_path):
    records = [entry("g", i % 5, i) for i in range(50)]
    records += [Record(records[0].key, None)]
    write_log(tmp_path, records, segment_bytes=700)
    assert fold(replay(tmp_path)) == fold(records)
