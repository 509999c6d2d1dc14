"""What start-up makes of one record-log segment, decided in one place.

Start-up (``RecordLog``) scans each segment's frames and must then decide: is
the segment whole, does it end in a torn tail (only the newest segment can:
cut quietly, it is a write the crash interrupted), or is it damaged (refused,
or cut there by a repair)? :func:`judge_scan` is that decision and nothing
else: it changes no file, so the log acts on its verdict and readers that must
not touch a live server's files (the Spark pipeline) report it, and the two
cannot come to different answers.

A segment is judged alone, knowing only its :class:`SegmentPlace` in the chain
(a Spark worker reads one segment without the others).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import CorruptLogError, StorageError, UnsupportedRecordError
from .segment import find_valid_frame

if TYPE_CHECKING:
    from .segment import ScanResult, Segment


@dataclass(frozen=True)
class SegmentPlace:
    """Where one segment file sits in its log: all that judging it alone needs."""

    path: str
    base: int
    sealed_end: int | None
    next_path: str | None = None  # the following segment's file (None: this is the newest)
    next_base: int | None = None  # and the position it starts at

    @property
    def is_last(self) -> bool:
        return self.next_path is None

    @classmethod
    def of(cls, segment: Segment, following: Segment | None) -> SegmentPlace:
        """The place of one of a log's segments, followed by ``following``."""
        if following is None:
            return cls(segment.path, segment.base, segment.sealed_end)
        return cls(segment.path, segment.base, segment.sealed_end, following.path,
                   following.base)


@dataclass(frozen=True)
class SegmentDamage:
    """Where start-up stops trusting the log. It refuses to start with :meth:`error`;
    a repair cuts the log here instead: ``path`` from byte ``position`` on (the whole
    file from 0) and every later segment. An unsupported record is never cut: the
    log was written by a newer kcsim."""

    path: str
    position: int
    reason: str
    unsupported: bool = False

    def error(self) -> StorageError:
        if self.unsupported:
            return UnsupportedRecordError(self.path, self.position, self.reason)
        return CorruptLogError(self.path, self.position, self.reason)


@dataclass(frozen=True)
class SegmentVerdict:
    """What start-up makes of one segment's scan."""

    records: int  # in the valid frames
    valid_bytes: int  # header included: where the valid frames end
    file_bytes: int
    torn_tail: str | None = None  # why the bytes after valid_bytes are a torn tail to cut
    damage: SegmentDamage | None = None

    def raise_damage(self) -> None:
        """Raise what start-up would refuse to start with, if anything."""
        if self.damage is not None:
            raise self.damage.error()


def judge_scan(place: SegmentPlace, buf: bytes, scan: ScanResult) -> SegmentVerdict:
    """The verdict on a segment whose whole file is ``buf`` and whose frames gave ``scan``.

    The newest segment's invalid tail is torn when no valid frame follows it;
    anywhere else an invalid frame is damage, as is a segment holding more
    records than its sealed range or an unsealed one the next does not follow.
    """
    path = place.path

    def verdict(torn_tail: str | None = None,
                damage: SegmentDamage | None = None) -> SegmentVerdict:
        return SegmentVerdict(scan.count, scan.valid_end, len(buf), torn_tail, damage)

    if scan.unsupported:
        return verdict(damage=SegmentDamage(path, scan.valid_end, scan.problem or "", True))
    if place.sealed_end is not None and place.base + scan.count > place.sealed_end:
        return verdict(damage=SegmentDamage(
            path, 0, f"{scan.count} records exceed the sealed range "
                     f"[{place.base}, {place.sealed_end})"))
    if scan.problem is not None:
        if place.is_last and find_valid_frame(buf, scan.valid_end, len(buf)) is None:
            return verdict(torn_tail=scan.problem)
        return verdict(damage=SegmentDamage(path, scan.valid_end, scan.problem))
    if place.next_path is not None and place.next_base is not None and place.sealed_end is None:
        end = place.base + scan.count
        if place.next_base != end:
            return verdict(damage=SegmentDamage(place.next_path, 0,
                                                gap_reason(end, place.next_base)))
    return verdict()


def gap_reason(expected: int, found: int) -> str:
    what = "missing segment" if found > expected else "overlapping segment"
    return f"{what}: expected a segment starting at position {expected}, found {found}"
