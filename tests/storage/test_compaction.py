"""Compaction: same final state as the full history, crash-safe swap, bounded size."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcsim.storage import Record, compact
from kcsim.storage.manifest import MANIFEST_NAME, TMP_SUFFIX
from kcsim.storage.segment import SEGMENT_HEADER_SIZE

from .helpers import (
    CounterKey,
    CounterValue,
    DocumentValue,
    EntryKey,
    EntryValue,
    NameKey,
    PairKey,
    PairValue,
    dir_size,
    entry,
    fold,
    open_record_log,
)

# NameKey("g") and CounterKey("g") encode to the same bytes: compaction must
# tell keys apart by type id too.
KEYS = [EntryKey("g", "bucket", p) for p in range(3)] + [
    NameKey("g"), CounterKey("g"), PairKey("t", 1)]


BATCH = 8  # the most records one append of the property test writes


def value_for(key, n: int):
    if isinstance(key, EntryKey):
        return EntryValue(n, note="m" * (n % 40))
    if isinstance(key, NameKey):
        return DocumentValue(b"\x01" * 16, n)
    if isinstance(key, CounterKey):
        return CounterValue(n)
    return PairValue([("v", n.to_bytes(2, "little"))])


def replay_dir(path: Path, segment_bytes: int = 300) -> list[Record]:
    with open_record_log(path, segment_bytes=segment_bytes) as log:
        return list(log.replay())


# -- the property ------------------------------------------------------------------

operations = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.integers(0, len(KEYS) - 1), st.integers(0, 1000)),
        st.tuples(st.just("delete"), st.integers(0, len(KEYS) - 1)),
        # one append of several records: a batch frame per run of one record type
        st.tuples(st.just("append"), st.lists(
            st.tuples(st.integers(0, len(KEYS) - 1), st.none() | st.integers(0, 1000)),
            min_size=2, max_size=BATCH)),
        st.tuples(st.just("tick"), st.integers(1, 50)),
        st.tuples(st.just("compact")),
        st.tuples(st.just("reopen")),
    ),
    max_size=120,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations, retention_ms=st.integers(0, 100), segment_bytes=st.sampled_from([120, 300, 4096]),
       passes=st.sampled_from([(None, None), (0.1, 300), (0.5, None)]))
def test_compaction_preserves_the_replayed_state(ops, retention_ms, segment_bytes, passes):
    """Whole compactions, and the broker's passes (only segments with at least that share
    of dead records, swapped in steps of about that many bytes), keep the state."""
    min_dead_share, step_bytes = passes
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp)
        log = open_record_log(path, segment_bytes=segment_bytes)
        history: list[Record] = []
        tombstone_written: dict = {}
        now = 1_000_000
        for op in ops:
            if op[0] in ("put", "delete"):
                key = KEYS[op[1]]
                record = Record(key, value_for(key, op[2]) if op[0] == "put" else None)
                log.append([record], timestamp_ms=now)
                history.append(record)
                if record.value is None:
                    tombstone_written[key] = now
            elif op[0] == "append":
                records = [Record(KEYS[i], None if n is None else value_for(KEYS[i], n))
                           for i, n in op[1]]
                log.append(records, timestamp_ms=now)
                history += records
                for record in records:
                    if record.value is None:
                        tombstone_written[record.key] = now
            elif op[0] == "tick":
                now += op[1]
            elif op[0] == "compact":
                stats = compact(log, tombstone_retention_ms=retention_ms, now_ms=now,
                                min_dead_share=min_dead_share, step_bytes=step_bytes)
                assert stats.records_after <= stats.records_before
                assert fold(log.replay()) == fold(history)
            else:
                log.close()
                log = open_record_log(path, segment_bytes=segment_bytes)
                assert fold(log.replay()) == fold(history)
        compact(log, tombstone_retention_ms=retention_ms, now_ms=now)
        log.sync()
        log.close()
        replayed = replay_dir(path, segment_bytes)
        assert fold(replayed) == fold(history)
        # at most one record per key in the closed segments, plus the active one's
        # (which may hold one batch bigger than a segment)
        active_records = segment_bytes // 30 + BATCH
        assert len(replayed) <= len(KEYS) + active_records
        # a tombstone that survives is one that has not expired yet (or sits in
        # the active segment, which compaction does not touch)
        assert all(
            r.value is not None or now - tombstone_written[r.key] <= retention_ms
            or r in replayed[-active_records:]
            for r in replayed
        )


def test_type_id_is_part_of_the_key(tmp_path):
    records = [
        Record(NameKey("g"), DocumentValue(b"", 1)),
        Record(CounterKey("g"), CounterValue(7)),
    ]
    with open_record_log(tmp_path, segment_bytes=100) as log:
        for r in records + [entry("g", 0, 1)] * 5:
            log.append([r])
        compact(log, tombstone_retention_ms=0)
        assert fold(log.replay()) == fold(records + [entry("g", 0, 1)])


def test_expired_tombstones_go_with_the_records_they_deleted(tmp_path):
    key = EntryKey("g", "bucket", 0)
    with open_record_log(tmp_path, segment_bytes=100) as log:
        log.append([Record(key, EntryValue(1))], timestamp_ms=0)
        log.append([Record(key, None)], timestamp_ms=10)
        log.append([entry("filler", i, i) for i in range(5)], timestamp_ms=20)
        stats = compact(log, tombstone_retention_ms=100, now_ms=50)
        assert Record(key, None) in list(log.replay())  # young tombstone kept
        assert stats.tombstones_dropped == 0
        stats = compact(log, tombstone_retention_ms=100, now_ms=500)
        assert stats.tombstones_dropped == 1
        assert all(r.key != key for r in log.replay())


def test_nothing_to_do_changes_no_file(tmp_path):
    with open_record_log(tmp_path, segment_bytes=200) as log:
        assert compact(log, tombstone_retention_ms=0).skipped  # no closed segment
        for i in range(20):
            log.append([entry("g", i % 5, i)])
        first = compact(log, tombstone_retention_ms=0)
        assert not first.skipped
        files = {p.name: p.stat().st_ino for p in tmp_path.iterdir()}
        assert compact(log, tombstone_retention_ms=0).skipped
        assert {p.name: p.stat().st_ino for p in tmp_path.iterdir()} == files


def test_log_size_stays_bounded_under_steady_overwrites(tmp_path):
    segment_bytes = 4096
    keys = 50
    history = []
    with open_record_log(tmp_path, segment_bytes=segment_bytes) as log:
        live_bytes = None
        for round_ in range(40):
            batch = [entry("group", i % keys, round_ * 1000 + i) for i in range(500)]
            for i in range(0, len(batch), 10):  # commits of 10 partitions: batch frames
                log.append(batch[i:i + 10])
            history += batch
            compact(log, tombstone_retention_ms=0)
            if live_bytes is None:
                live_bytes = sum(s.size - SEGMENT_HEADER_SIZE for s in log.segments[:-1])
            assert dir_size(tmp_path) <= live_bytes + 3 * segment_bytes, round_
        assert fold(log.replay()) == fold(history)
    assert dir_size(tmp_path) < len(history) * 40 / 20


def test_appends_during_compaction_are_kept(tmp_path):
    """The active segment is untouched, so a roll racing the swap loses nothing."""
    with open_record_log(tmp_path, segment_bytes=300) as log:
        history = [entry("g", i % 3, i) for i in range(60)]
        for record in history:
            log.append([record])
        inputs = log.closed_segments()
        from kcsim.storage import compaction
        original = compaction._swap

        def swap_with_appends(record_log, ins, outs):
            more = [entry("g", i % 3, 1000 + i) for i in range(30)]
            for record in more:
                record_log.append([record])  # rolls new segments while compaction runs
            history.extend(more)
            return original(record_log, ins, outs)

        compaction._swap = swap_with_appends
        try:
            compact(log, tombstone_retention_ms=0)
        finally:
            compaction._swap = original
        assert len(inputs) > 1
        assert fold(log.replay()) == fold(history)
    assert fold(replay_dir(tmp_path)) == fold(history)


def test_appends_syncs_and_compactions_from_several_threads(tmp_path):
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # interleave the threads as much as possible
    log = open_record_log(tmp_path, segment_bytes=400)
    stop = threading.Event()

    def repeat(action) -> None:
        while not stop.is_set():
            action()

    history = [entry("g", i % 9, i) for i in range(3000)]
    with ThreadPoolExecutor(2) as pool:
        workers = [pool.submit(repeat, log.sync),
                   pool.submit(repeat, lambda: compact(log, tombstone_retention_ms=0))]
        try:
            for record in history:
                log.append([record])
        finally:
            stop.set()
            sys.setswitchinterval(switch_interval)
        for worker in workers:
            worker.result()  # re-raises what went wrong in the worker
    assert fold(log.replay()) == fold(history)
    log.close()
    assert fold(replay_dir(tmp_path, 400)) == fold(history)


# -- crash safety --------------------------------------------------------------------


class SimulatedCrash(BaseException):
    """Stops the process 'mid-step'; BaseException so no cleanup handler catches it."""


FILE_STEPS = ("replace", "rename", "unlink", "fsync")


def build_history(path: Path) -> list[Record]:
    records = []
    with open_record_log(path, segment_bytes=300) as log:
        for i in range(200):
            record = entry("g", i % 23, i)
            if i % 11 == 0:
                record = Record(record.key, None)
            records.append(record)
            log.append([record], timestamp_ms=i)
        log.sync()
    return records


def crash_on_step(monkeypatch, n: int) -> list[str]:
    """Make the n-th file step (rename, unlink, fsync) raise SimulatedCrash."""
    calls: list[str] = []
    for name in FILE_STEPS:
        real = getattr(os, name)

        def step(*args, _real=real, _name=name, **kwargs):
            calls.append(_name)
            if len(calls) == n:
                raise SimulatedCrash(f"crash at step {n} ({_name})")
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, step)
    return calls


@pytest.mark.parametrize("retention_ms", [0, 10_000])
def test_a_crash_at_any_step_of_compaction_loses_nothing(tmp_path, monkeypatch, retention_ms):
    origin = tmp_path / "origin"
    history = build_history(origin)
    before = replay_dir(copy(origin, tmp_path / "before"))
    completed = copy(origin, tmp_path / "completed")
    with open_record_log(completed, segment_bytes=300) as log:
        list(log.replay())
        compact(log, tombstone_retention_ms=retention_ms, now_ms=200)
    after = replay_dir(completed)
    assert len([p for p in completed.iterdir() if p.suffix == ".log"]) > 2  # several outputs
    assert after != before and fold(after) == fold(before) == fold(history)

    outcomes = set()
    for n in range(1, 200):
        work = copy(origin, tmp_path / f"crash-{n}")
        log = open_record_log(work, segment_bytes=300)
        list(log.replay())
        calls = crash_on_step(monkeypatch, n)
        try:
            compact(log, tombstone_retention_ms=retention_ms, now_ms=200)
            crashed = False
        except SimulatedCrash:
            crashed = True
        finally:
            monkeypatch.undo()
            log.close()
        # start-up after the crash sees exactly the old or exactly the new log
        replayed = replay_dir(work)
        assert replayed in (before, after), f"step {n}: {calls}"
        outcomes.add("after" if replayed == after else "before")
        assert not [p for p in work.iterdir()
                    if p.name.endswith(TMP_SUFFIX) or p.name == MANIFEST_NAME]
        # and the recovered log compacts and appends normally
        with open_record_log(work, segment_bytes=300) as again:
            list(again.replay())
            compact(again, tombstone_retention_ms=retention_ms, now_ms=200)
            again.append([entry("late", 0, 1)])
            again.sync()
        assert fold(replay_dir(work)) == fold(history + [entry("late", 0, 1)])
        if not crashed:
            break
    else:
        pytest.fail("compaction never completed")
    assert outcomes == {"before", "after"}
    assert n > 5  # the crash points covered several steps


def test_read_only_open_sees_a_committed_compaction_before_its_roll_forward(tmp_path, monkeypatch):
    history = build_history(tmp_path)
    log = open_record_log(tmp_path, segment_bytes=300)
    list(log.replay())
    from kcsim.storage import manifest

    def crash_after_commit(directory, m):
        raise SimulatedCrash("after commit")

    monkeypatch.setattr(manifest, "roll_forward", crash_after_commit)
    from kcsim.storage import compaction
    monkeypatch.setattr(compaction, "roll_forward", crash_after_commit)
    with pytest.raises(SimulatedCrash):
        compact(log, tombstone_retention_ms=0, now_ms=200)
    monkeypatch.undo()
    log.close()
    assert (tmp_path / MANIFEST_NAME).exists()
    with open_record_log(tmp_path, read_only=True) as ro:
        assert fold(ro.replay()) == fold(history)
    assert (tmp_path / MANIFEST_NAME).exists()  # read-only changed nothing
    assert fold(replay_dir(tmp_path)) == fold(history)
    assert not (tmp_path / MANIFEST_NAME).exists()


def copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def test_compaction_keeps_the_newest_record_of_each_key_across_batch_frames(tmp_path):
    gone = EntryKey("g", "bucket", 3)
    history = [entry("g", p, 1) for p in range(4)]
    newer = [entry("g", p, 2) for p in range(2)] + [Record(gone, None)]
    fillers = [entry("filler", i % 2, i) for i in range(20)]
    with open_record_log(tmp_path, segment_bytes=300) as log:
        log.append(history, timestamp_ms=0)  # batch frames...
        log.append(newer, timestamp_ms=10)
        for record in fillers:  # ...then plain frames, rolling segments behind them
            log.append([record], timestamp_ms=30)
        history += newer + fillers
        closed = sum(s.end - s.base for s in log.closed_segments())
        first = compact(log, tombstone_retention_ms=100, now_ms=50)
        assert first.records_before == closed
        assert first.records_after < closed
        replayed = list(log.replay())
        assert fold(replayed) == fold(history)
        assert Record(gone, None) in replayed  # 40 ms old: kept, with its batch's age
        later = compact(log, tombstone_retention_ms=100, now_ms=500)
        assert later.tombstones_dropped == 1
        assert all(r.key != gone for r in log.replay())
        assert fold(log.replay()) == fold(history)
    assert fold(replay_dir(tmp_path)) == fold(history)
