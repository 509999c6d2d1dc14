"""Storage's public segment API: a segment judged alone gets start-up's verdict, its
records are the replay's, and segments written for compaction are the log's own bytes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from kcsim.storage import (
    CompactedSegments,
    Record,
    RecordLog,
    RecordTypes,
    StorageError,
    judge_segment,
)

from .helpers import (
    COUNTER,
    DOCUMENT,
    ENTRY,
    PAIR,
    TYPES,
    CounterKey,
    entry,
    frame_starts,
    one_of_each_type,
    open_record_log,
)

if TYPE_CHECKING:
    from pathlib import Path

HEADER = 32


def write_log(path: Path, appends: list[list[Record]], segment_bytes: int = 400) -> list[Path]:
    with open_record_log(path, segment_bytes=segment_bytes) as log:
        for n, records in enumerate(appends):
            log.append(records, timestamp_ms=1000 + n)
        log.sync()
    return sorted(path.glob("*.log"))


def history(n: int = 60) -> list[list[Record]]:
    """Plain frames, batch frames and a tombstone, over several segments."""
    appends: list[list[Record]] = [[entry("g", i % 5, i)] for i in range(n)]
    appends[10] = one_of_each_type(3)
    appends[20] = [entry("b", i, 100 + i) for i in range(4)]  # one batch frame
    appends[30] = [Record(CounterKey("gone"), None)]
    return appends


def files_of(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def verdicts(path: Path, types: RecordTypes = TYPES) -> list:
    with RecordLog.open(path, types=types, read_only=True) as log:
        return [judge_segment(place, types).verdict for place in log.places()]


def start_up_error(path: Path, types: RecordTypes = TYPES) -> StorageError:
    with pytest.raises(StorageError) as err, RecordLog.open(path, types=types) as log:
        list(log.replay())
    return err.value


def first_damage(path: Path, types: RecordTypes = TYPES) -> StorageError:
    damaged = [v.damage for v in verdicts(path, types) if v.damage is not None]
    assert damaged, "the judge found nothing"
    return damaged[0].error()


def test_records_read_segment_by_segment_are_the_replay_with_positions_and_times(tmp_path):
    appends = history()
    files = write_log(tmp_path, appends)
    assert len(files) > 2
    with RecordLog.open(tmp_path, types=TYPES, read_only=True) as log:
        replayed = list(log.replay())
        read = [row for place in log.places() for row in judge_segment(place, TYPES).records()]
    assert [record for _, _, record in read] == replayed
    assert [position for position, _, _ in read] == list(range(len(replayed)))
    times = [1000 + n for n, records in enumerate(appends) for _ in records]
    assert [timestamp for _, timestamp, _ in read] == times


def test_wanted_types_are_read_alone_at_their_log_positions(tmp_path):
    write_log(tmp_path, history())
    with RecordLog.open(tmp_path, types=TYPES, read_only=True) as log:
        replayed = list(log.replay())
        places = log.places()
    wanted = {COUNTER.id, PAIR.id}
    read = [(p, r) for place in places for p, _, r in judge_segment(place, TYPES).records(wanted)]
    expected = [(p, r) for p, r in enumerate(replayed)
                if type(r.key) in (COUNTER.key, PAIR.key)]
    assert read == expected and len(read) == 3


def test_raw_records_are_the_encoded_keys_and_values(tmp_path):
    write_log(tmp_path, history())
    import msgspec

    with RecordLog.open(tmp_path, types=TYPES, read_only=True) as log:
        replayed = list(log.replay())
        raw = [row for place in log.places() for row in judge_segment(place, TYPES).raw_records()]
    by_id = {t.id: t for t in (ENTRY, DOCUMENT, COUNTER, PAIR)}
    decoded = [Record(msgspec.msgpack.decode(key, type=by_id[type_id].key),
                      None if value is None else msgspec.msgpack.decode(
                          value, type=by_id[type_id].value))
               for _, _, type_id, _, key, value in raw]
    assert decoded == replayed
    assert [row[0] for row in raw] == list(range(len(replayed)))
    assert [row[3] for row in raw if row[2] == DOCUMENT.id] == [DOCUMENT.version]


def test_a_whole_log_has_no_verdict_against_it(tmp_path):
    write_log(tmp_path, history())
    found = verdicts(tmp_path)
    assert all(v.damage is None and v.torn_tail is None for v in found)
    assert all(v.valid_bytes == v.file_bytes for v in found)


def test_a_torn_tail_is_judged_where_start_up_cuts_it_and_left_in_place(tmp_path):
    files = write_log(tmp_path, history())
    with open(files[-1], "ab") as f:
        f.write(b"\x40\x00\x00\x00\x12\x34")
    before = files_of(tmp_path)
    *whole, last = verdicts(tmp_path)
    assert files_of(tmp_path) == before  # judging changed nothing
    assert all(v.torn_tail is None and v.damage is None for v in whole)
    assert last.torn_tail == "partial frame" and last.damage is None
    assert last.file_bytes == len(before[files[-1].name])
    with open_record_log(tmp_path) as log:  # what a server's start does
        list(log.replay())
    assert files[-1].stat().st_size == last.valid_bytes


def test_damage_before_the_tail_is_the_error_start_up_refuses_with(tmp_path):
    files = write_log(tmp_path, history())
    victim = files[1]
    bad = frame_starts(victim)[1]
    data = bytearray(victim.read_bytes())
    data[bad + 28] ^= 0x10
    victim.write_bytes(bytes(data))
    judged, refused = first_damage(tmp_path), start_up_error(tmp_path)
    assert type(judged) is type(refused)
    assert (judged.path, judged.position, judged.reason) == (refused.path, refused.position,
                                                             refused.reason) == (
        str(victim), bad, "frame CRC mismatch")


def test_a_missing_segment_after_an_unsealed_one_is_judged_as_start_up_finds_it(tmp_path):
    files = write_log(tmp_path, history())
    data = bytearray(files[1].read_bytes())
    with RecordLog.open(tmp_path, types=TYPES, read_only=True) as log:
        base = log.places()[1].base
    from kcsim.storage.segment import encode_segment_header

    data[:HEADER] = encode_segment_header(base, None)  # unsealed: only its count says its end
    files[1].write_bytes(bytes(data))
    files[2].unlink()
    judged, refused = first_damage(tmp_path), start_up_error(tmp_path)
    assert (judged.path, judged.position, judged.reason) == (refused.path, refused.position,
                                                             refused.reason)
    assert judged.path == str(files[3]) and "missing segment" in judged.reason


def test_records_of_a_type_this_kcsim_does_not_read_are_refused_as_start_up_refuses(tmp_path):
    write_log(tmp_path, history())
    older = RecordTypes([ENTRY, DOCUMENT, PAIR])  # no counter records
    judged, refused = first_damage(tmp_path, older), start_up_error(tmp_path, older)
    assert type(judged) is type(refused) and type(judged).__name__ == "UnsupportedRecordError"
    assert (judged.path, judged.position, judged.reason) == (refused.path, refused.position,
                                                             refused.reason)


def test_a_compaction_writes_the_frames_of_a_sealed_segment_as_the_log_wrote_them(tmp_path):
    """The same frames cut and written for compaction make the log's own file, byte for
    byte: one writer of the segment format."""
    files = write_log(tmp_path / "log", history())
    with RecordLog.open(tmp_path / "log", types=TYPES, read_only=True) as log:
        places = log.places()
    out = tmp_path / "out"
    out.mkdir()
    for place in places[:-1]:  # the sealed ones
        judged = judge_segment(place, TYPES)
        cut = CompactedSegments(place.base, segment_bytes=1 << 20)
        for frame in judged.frames():
            assert cut.add(judged.buf[frame.start:frame.end], frame.position) is None
        assert place.sealed_end is not None
        written = cut.finish(place.sealed_end).write(str(out), temporary=False)
        assert (written.base, written.end) == (place.base, place.sealed_end)
    assert files_of(out) == {p.name: p.read_bytes() for p in files[:-1]}


def test_compacted_segments_cut_at_the_size_and_chain_without_gaps(tmp_path):
    frames = [(bytes(100), position) for position in range(0, 40, 2)]  # 20 frames, 2 apart
    cut = CompactedSegments(0, segment_bytes=HEADER + 350)  # three frames a segment
    done = [segment for frame, position in frames if (segment := cut.add(frame, position))]
    done.append(cut.finish(45))
    assert [len(s.frames) for s in done] == [3] * 6 + [2]
    assert [s.base for s in done] == list(range(0, 40, 6))
    assert [s.end for s in done] == [s.base for s in done[1:]] + [45]
    assert all(s.size <= HEADER + 350 for s in done)
