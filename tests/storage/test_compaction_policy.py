"""The compaction policy: Kafka's dirty-ratio rule, the lag, the interval, as a table."""

from __future__ import annotations

import pytest

from kcsim.storage.compaction_policy import (
    CompactionPolicy,
    Decision,
    DirtySegment,
    LogShape,
    decide,
)

NOW = 1_000_000
DAY = 24 * 60 * 60 * 1000


def shape(clean: list[int], dirty: list[tuple[int, int]], compacted_at: int | None = NOW
          ) -> LogShape:
    """`clean` segment sizes; `dirty` (size, age in ms of the newest record) oldest first."""
    return LogShape(len(clean), sum(clean),
                    tuple(DirtySegment(size, NOW - age) for size, age in dirty), compacted_at)


CASES = [
    # (why, policy, shape, interval elapsed, decision)
    ("a log never compacted is all dirty: ratio 1 > 0.5",
     CompactionPolicy(), shape([], [(100, 0)]), False, Decision(1, "dirty ratio 1.00")),
    ("dirty more than half: compact clean and dirty",
     CompactionPolicy(), shape([100, 100], [(150, 0), (60, 0)]), False,
     Decision(4, "dirty ratio 0.51")),
    ("exactly half is not above the ratio",
     CompactionPolicy(), shape([100], [(100, 0)]), False, Decision(0, "")),
    ("less than half waits",
     CompactionPolicy(), shape([300], [(100, 0)]), False, Decision(0, "")),
    ("nothing dirty, nothing to do",
     CompactionPolicy(), shape([300], []), False, Decision(0, "")),
    ("no closed segment at all",
     CompactionPolicy(), shape([], []), True, Decision(0, "")),
    ("ratio 0: any dirty byte",
     CompactionPolicy(0.0), shape([10_000], [(1, 0)]), False, Decision(2, "dirty ratio 0.00")),
    ("ratio 1: never by the ratio",
     CompactionPolicy(1.0), shape([], [(100, 0)]), False, Decision(0, "")),
    ("the interval bounds how long a dirty log waits",
     CompactionPolicy(), shape([300], [(100, 0)]), True, Decision(2, "interval")),
    ("ratio 1 still compacts at the interval",
     CompactionPolicy(1.0), shape([], [(100, 0)]), True, Decision(1, "interval")),
    ("too young for the lag: not cleanable, look again when it comes of age",
     CompactionPolicy(min_compaction_lag_ms=1000), shape([], [(100, 400)]), False,
     Decision(0, "", NOW + 600)),
    ("the lag cuts the cleanable prefix at the first young segment",
     CompactionPolicy(min_compaction_lag_ms=1000),
     shape([100], [(100, 5000), (100, 1000), (100, 10), (100, 5000)]), False,
     Decision(3, "dirty ratio 0.67", NOW + 990)),
    ("only what is old enough counts toward the ratio",
     CompactionPolicy(min_compaction_lag_ms=1000), shape([300], [(100, 2000), (900, 0)]), False,
     Decision(0, "", NOW + 1000)),
    ("the interval compacts only what the lag allows",
     CompactionPolicy(min_compaction_lag_ms=1000), shape([300], [(100, 2000), (900, 0)]), True,
     Decision(2, "interval", NOW + 1000)),
    ("clean only, tombstones a retention old: recompact at the interval",
     CompactionPolicy(tombstone_retention_ms=DAY), shape([300], [], NOW - DAY), True,
     Decision(1, "tombstone retention")),
    ("clean only, tombstones younger than the retention",
     CompactionPolicy(tombstone_retention_ms=DAY), shape([300], [], NOW - DAY + 1), True,
     Decision(0, "")),
    ("tombstones never before the interval",
     CompactionPolicy(tombstone_retention_ms=0), shape([300], [], NOW - DAY), False,
     Decision(0, "")),
    ("no checkpoint: when the last compaction ran is not known",
     CompactionPolicy(), shape([300], [], None), True, Decision(1, "tombstone retention")),
]


@pytest.mark.parametrize(("policy", "log", "interval", "expected"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_decide(policy: CompactionPolicy, log: LogShape, interval: bool,
                expected: Decision) -> None:
    assert decide(policy, log, NOW, interval_elapsed=interval) == expected


@pytest.mark.parametrize("settings", [{"min_cleanable_dirty_ratio": 1.5},
                                      {"min_cleanable_dirty_ratio": -0.1},
                                      {"min_compaction_lag_ms": -1}])
def test_out_of_range_settings_are_refused(settings: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be"):
        CompactionPolicy(**settings)  # type: ignore[arg-type]
