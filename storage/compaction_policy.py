"""When to compact the record log: Kafka's log-cleaner rule, as a pure function.

The log is split at the clean end (``storage.cleaner_checkpoint``): the closed
segments before it were written by a compaction and are "clean"; the closed
segments after it are "dirty"; the active segment is never compacted and counts
as neither. A dirty segment is *cleanable* once its newest record is at least
``min_compaction_lag_ms`` old, counting from the oldest dirty segment on (the
cleaned range is always a prefix of the log, so the first one too young stops it).

The log is compacted, through its last cleanable segment, when

- the cleanable share ``cleanable / (clean + cleanable)`` bytes is above
  ``min_cleanable_dirty_ratio`` (Kafka's ``min.cleanable.dirty.ratio``: a log
  restarted in a loop compacts as soon as it is dirty enough, however short its
  lives), or
- a compaction interval has passed and anything is cleanable (so a dirty log
  waits at most one interval, the role of Kafka's ``max.compaction.lag.ms``), or
- a compaction interval has passed and the last compaction is a tombstone
  retention ago: the tombstones it kept may have expired.

Nothing here reads a clock or a file: the writer gives the shape of the log and
the time, and gets back what to compact and when the answer may change.
"""

from __future__ import annotations

from dataclasses import dataclass

from .compaction import DEFAULT_TOMBSTONE_RETENTION_MS

DEFAULT_MIN_CLEANABLE_DIRTY_RATIO = 0.5  # Kafka's log.cleaner.min.cleanable.ratio
DEFAULT_MIN_COMPACTION_LAG_MS = 0  # Kafka's log.cleaner.min.compaction.lag.ms


@dataclass(frozen=True)
class CompactionPolicy:
    min_cleanable_dirty_ratio: float = DEFAULT_MIN_CLEANABLE_DIRTY_RATIO
    min_compaction_lag_ms: int = DEFAULT_MIN_COMPACTION_LAG_MS
    tombstone_retention_ms: int = DEFAULT_TOMBSTONE_RETENTION_MS

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_cleanable_dirty_ratio <= 1.0:
            raise ValueError(f"min_cleanable_dirty_ratio must be from 0 to 1, "
                             f"not {self.min_cleanable_dirty_ratio!r}")
        if self.min_compaction_lag_ms < 0:
            raise ValueError(f"min_compaction_lag_ms must be >= 0, "
                             f"not {self.min_compaction_lag_ms!r}")


@dataclass(frozen=True)
class DirtySegment:
    size: int  # bytes
    newest_ms: int  # write time of its newest record


@dataclass(frozen=True)
class LogShape:
    """The closed segments of a log, split at its clean end."""

    clean_segments: int
    clean_bytes: int
    dirty: tuple[DirtySegment, ...]  # the closed segments after the clean end, oldest first
    compacted_at_ms: int | None  # when the last compaction ran, if one is known

    @property
    def dirty_bytes(self) -> int:
        return sum(segment.size for segment in self.dirty)


@dataclass(frozen=True)
class Decision:
    segments: int  # leading closed segments to compact now (0: none)
    reason: str  # why (empty when nothing is compacted)
    recheck_at_ms: int | None = None  # when a dirty segment too young to count comes of age


def decide(policy: CompactionPolicy, shape: LogShape, now_ms: int, *,
           interval_elapsed: bool) -> Decision:
    """What to compact now (see the module docstring for the rule)."""
    horizon = now_ms - policy.min_compaction_lag_ms
    cleanable = 0
    cleanable_bytes = 0
    recheck_at_ms = None
    for segment in shape.dirty:
        if segment.newest_ms > horizon:
            recheck_at_ms = segment.newest_ms + policy.min_compaction_lag_ms
            break
        cleanable += 1
        cleanable_bytes += segment.size
    through = shape.clean_segments + cleanable
    if cleanable:
        ratio = cleanable_bytes / (shape.clean_bytes + cleanable_bytes)
        if ratio > policy.min_cleanable_dirty_ratio:
            return Decision(through, f"dirty ratio {ratio:.2f}", recheck_at_ms)
        if interval_elapsed:
            return Decision(through, "interval", recheck_at_ms)
    if interval_elapsed and through and tombstones_may_expire(policy, shape, now_ms):
        return Decision(through, "tombstone retention", recheck_at_ms)
    return Decision(0, "", recheck_at_ms)


def tombstones_may_expire(policy: CompactionPolicy, shape: LogShape, now_ms: int) -> bool:
    """Tombstones the last compaction kept may have outlived their retention since."""
    return (shape.compacted_at_ms is None
            or now_ms - shape.compacted_at_ms >= policy.tombstone_retention_ms)
