"""A broker's compaction pass: only the segments worth it are rewritten, in steps that
each leave a valid log, so a pass cut short keeps what it finished."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from kcsim.storage import Record, compact
from kcsim.storage.compaction import rewrite_steps

from .helpers import entry, fold, open_record_log

if TYPE_CHECKING:
    from pathlib import Path


class Killed(BaseException):
    """The process dies between two steps of a pass."""


def segment_files(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.glob("*.log"))}


def write(path: Path, records: list[Record], *, segment_bytes: int = 300,
          timestamp_ms: int = 100) -> None:
    with open_record_log(path, segment_bytes=segment_bytes) as log:
        for record in records:
            log.append([record], timestamp_ms=timestamp_ms)
        log.sync()


def replayed(path: Path) -> list[Record]:
    with open_record_log(path, segment_bytes=300) as log:
        return list(log.replay())


def test_a_segment_with_few_dead_records_is_not_rewritten(tmp_path: Path) -> None:
    live = [entry("live", p, 1) for p in range(40)]  # several segments, one overwritten key
    storm = [entry("storm", 0, n) for n in range(40)]  # all dead but the last
    write(tmp_path, [entry("storm", 0, -1), *live, *storm])
    before = segment_files(tmp_path)
    with open_record_log(tmp_path, segment_bytes=300) as log:
        list(log.replay())
        stats = compact(log, tombstone_retention_ms=10_000, now_ms=200, min_dead_share=0.5)
    after = segment_files(tmp_path)
    kept = [name for name, data in before.items() if after.get(name) == data]
    first = min(before)
    assert first in kept  # one dead record of many: left as it was
    assert len(kept) >= 3 and not stats.skipped
    assert stats.records_after < stats.records_before - 30  # the storm's dead records went
    assert fold(replayed(tmp_path)) == fold([entry("storm", 0, -1), *live, *storm])


def test_an_expired_tombstone_goes_only_with_every_record_it_superseded(tmp_path: Path) -> None:
    """A segment holding the deleted key's older record is rewritten too, whatever its
    share of dead records: else the record would come back once its tombstone went."""
    history = [entry("gone", 0, 1), *[entry("live", p, 1) for p in range(30)],
               Record(entry("gone", 0, 0).key, None)]
    write(tmp_path, [*history, *[entry("filler", 0, n) for n in range(10)]])
    with open_record_log(tmp_path, segment_bytes=300) as log:
        list(log.replay())
        stats = compact(log, tombstone_retention_ms=0, now_ms=10_000, min_dead_share=0.9)
    records = replayed(tmp_path)
    assert stats.tombstones_dropped == 1
    assert all(r.key != entry("gone", 0, 0).key for r in records)


def test_a_pass_killed_half_way_keeps_its_finished_steps(tmp_path: Path) -> None:
    history = [entry("g", n % 5, n) for n in range(120)]  # mostly dead, many segments
    write(tmp_path, history)
    size = sum(p.stat().st_size for p in tmp_path.glob("*.log"))
    ends: list[int] = []

    def step_done(end: int) -> None:
        ends.append(end)
        if len(ends) == 2:
            raise Killed

    with open_record_log(tmp_path, segment_bytes=300) as log:
        list(log.replay())
        with pytest.raises(Killed):
            compact(log, tombstone_retention_ms=10_000, now_ms=200, min_dead_share=0.1,
                    step_bytes=600, on_step=step_done)
    records = replayed(tmp_path)
    assert fold(records) == fold(history)
    assert len(records) < len(history)  # two steps' dead records are gone for good
    assert sum(p.stat().st_size for p in tmp_path.glob("*.log")) < size
    # and the rest compacts on the next pass, from where the pass was cut
    with open_record_log(tmp_path, segment_bytes=300) as log:
        list(log.replay())
        compact(log, tombstone_retention_ms=10_000, now_ms=200, min_dead_share=0.1,
                step_bytes=600)
    assert fold(replayed(tmp_path)) == fold(history)
    assert len(replayed(tmp_path)) <= 5 + 300 // 30  # the keys, and the active segment's


@pytest.mark.parametrize(("dead", "expiring", "steps"), [
    ([0, 0, 0, 0], set(), []),  # nothing dead: nothing rewritten
    ([5, 0, 0, 9], set(), [(0, 1), (3, 4)]),  # runs of worthwhile segments
    ([1, 0, 5, 5], set(), [(2, 4)]),  # one dead record of ten: not worth it
    ([1, 0, 0, 0], {2}, [(0, 1), (2, 3)]),  # a tombstone may expire: every dead one goes
])
def test_the_segments_a_pass_rewrites(dead: list[int], expiring: set[int],
                                      steps: list[tuple[int, int]]) -> None:
    counts = [10] * 4
    kept = [c - d for c, d in zip(counts, dead)]
    assert rewrite_steps([1000] * 4, counts, kept, expiring, 1000, min_dead_share=0.2,
                         step_bytes=None) == steps


def test_a_short_segment_beside_a_rewritten_one_is_merged_into_it() -> None:
    sizes = [1000, 300, 1000, 200, 1000]
    kept = [10, 10, 5, 10, 10]
    assert rewrite_steps(sizes, [10] * 5, kept, set(), 1000, min_dead_share=0.2,
                         step_bytes=None) == [(1, 4)]


def test_a_run_is_swapped_in_steps_of_about_step_bytes() -> None:
    sizes = [400] * 5
    assert rewrite_steps(sizes, [10] * 5, [0] * 5, set(), 1000, min_dead_share=0.2,
                         step_bytes=700) == [(0, 2), (2, 4), (4, 5)]
    assert rewrite_steps(sizes, [10] * 5, [0] * 5, set(), 1000, min_dead_share=None,
                         step_bytes=700) == [(0, 5)]
