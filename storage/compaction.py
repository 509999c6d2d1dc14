"""Compaction: keep the newest record per key in the closed segments.

One algorithm, Kafka's log cleaner, for two kinds of record: the coordinator's
typed frames in kcsim's record log (:func:`compact`) and the record batches of a
topic partition (:func:`clean_segments`, whose batch format the caller explains
through a :class:`BatchRecords`, since storage knows no wire format). Both map each
key to its newest record, then keep a record only if it is that newest one and not
a tombstone older than the retention (:func:`_expired`, the one rule).

The closed segments (all but the active one) are rewritten into new sealed
segments that keep, in log order, only the newest record of each
(type id, key) and drop tombstones written more than the retention ago (with
the older records of their key, which they already superseded). Plain frames
are copied verbatim, CRC and write timestamp included, so a tombstone keeps
its age across compactions; a surviving record of a batch frame is written as
a plain frame with the batch's timestamp. The outputs cover exactly the
position range of the inputs, so the segment chain stays gap-free.

The swap is crash-safe through the manifest (see ``storage.manifest``):
outputs are written under temporary names and fsynced, then the manifest is
committed, then files are moved. The active segment is never touched, so
appends may continue on another thread while this runs.

A whole compaction (``compact``'s default, and the Spark pipeline's) rewrites
every input and swaps once. The broker's own passes (``storage.writer``) are
cheaper and keep their progress: they read every input to find each key's
newest record, but rewrite only the inputs with at least
:data:`DEFAULT_MIN_DEAD_SHARE` of dead records (and short ones beside them),
and swap each run of those in steps of about :data:`DEFAULT_COMPACTION_STEP_BYTES`,
each step through its own manifest. A log whose live state sits in segments
nothing overwrites (a commit storm on a few keys) has only its dirty tail
rewritten, so a pass costs a read of the log and a write of what the storm left,
and a broker killed in the middle of a pass keeps the steps it finished.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
import mmap
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from crc32c import crc32c

from .errors import CorruptLogError, StorageError
from .fsutil import fsync_dir
from .manifest import (
    MANIFEST_NAME,
    CompactionManifest,
    commit_manifest,
    manifest_committed,
    roll_forward,
    temporary_name,
)
from .segment import (
    FRAME,
    FRAME_FLAG_BATCH,
    FRAME_FLAG_TOMBSTONE,
    FRAME_HEADER_SIZE,
    FRAME_PREFIX_SIZE,
    IDENTITY_OFFSET,
    NIL,
    SEGMENT_HEADER_SIZE,
    Segment,
    decode_raw_pairs,
    plain_frame_bytes,
    segment_name,
)
from .segment_writer import CompactedSegment, CompactedSegments

if TYPE_CHECKING:
    from collections.abc import Callable

    import msgspec

    from .log import RecordLog

log = logging.getLogger(__name__)

DEFAULT_TOMBSTONE_RETENTION_MS = 24 * 60 * 60 * 1000
# The broker's passes (storage.writer): a segment is rewritten once a tenth of its
# records are dead; a run of rewritten segments is swapped 8 MiB of inputs at a time.
DEFAULT_MIN_DEAD_SHARE = 0.1
DEFAULT_COMPACTION_STEP_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class CompactionStats:
    segments_before: int = 0
    segments_after: int = 0
    records_before: int = 0
    records_after: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    tombstones_dropped: int = 0
    duration_s: float = 0.0
    skipped: bool = True  # nothing to gain: no file was changed


def compact(record_log: RecordLog, *, tombstone_retention_ms: int,
            now_ms: int | None = None, segments: int | None = None,
            min_dead_share: float | None = None, step_bytes: int | None = None,
            on_step: Callable[[int], object] | None = None) -> CompactionStats:
    """Rewrite the closed segments of ``record_log``; returns what changed.

    ``segments`` limits it to that many leading closed segments (default: all).
    Safe to call while another thread appends. Two compactions of the same
    log at once are refused.

    By default every input is rewritten and swapped at once. With ``min_dead_share``
    only the inputs worth it are (:func:`rewrite_steps`), and each run of them is
    swapped in steps of about ``step_bytes`` of inputs, in log order; ``on_step`` is
    called with the position where each step's inputs end. Each step leaves a valid
    log on its own: a record it drops is superseded by a newer one, which is in the
    same step or still in place after it, and a tombstone past its retention goes
    only with the older records of its key, which are before it and all go (see
    :func:`rewrite_steps`). So a pass cut short keeps the steps it finished, and the
    log up to the position last given to ``on_step`` is compacted as a whole.
    """
    started = time.perf_counter()
    if now_ms is None:
        now_ms = time.time_ns() // 1_000_000
    if not record_log.compaction_lock.acquire(blocking=False):
        raise StorageError(f"a compaction of {record_log.directory} is already running")
    try:
        inputs = record_log.closed_segments()[:segments]
        if not inputs:
            return CompactionStats()
        expire_before_ms = now_ms - tombstone_retention_ms
        buffers = [_read_segment(segment) for segment in inputs]
        scan = _newest_per_key(inputs, buffers, expire_before_ms)
        records, size = sum(scan.counts), sum(segment.size for segment in inputs)
        stats = CompactionStats(len(inputs), len(inputs), records, records, size, size)
        steps = rewrite_steps([s.size for s in inputs], scan.counts, scan.kept_counts(),
                              scan.expiring, record_log.segment_bytes,
                              min_dead_share=min_dead_share, step_bytes=step_bytes)
        for first, last in steps:
            survivors = scan.survivors_of(first, last)
            stats = _compact_step(record_log, inputs[first:last], buffers[first:last],
                                  survivors, sum(scan.counts[first:last]),
                                  expire_before_ms, stats)
            if on_step is not None:
                on_step(inputs[last - 1].end)
        return _finish(stats, started)
    finally:
        record_log.compaction_lock.release()


def rewrite_steps(sizes: list[int], counts: list[int], kept: list[int],
                  expiring: set[int], segment_bytes: int, *,
                  min_dead_share: float | None,
                  step_bytes: int | None) -> list[tuple[int, int]]:
    """Which inputs a pass rewrites, as steps of (first, end) input indexes in log order.

    With ``min_dead_share`` None, all of them, in one step. Else an input is rewritten
    when at least that share of its ``counts[i]`` records go (``kept[i]`` stay, and
    some go), when it may hold a tombstone past its retention (``expiring``), or when
    it is smaller than half a segment and next to one rewritten (so the short last
    outputs of earlier passes merge instead of piling up). The others stay as they
    are: rewriting them would cost a pass as much as they weigh and gain little.
    While anything may expire, the share is 0: every input with a record that goes is
    rewritten, so none that stays holds a record an expired tombstone superseded.
    A run of rewritten inputs is cut into steps of at least ``step_bytes`` (the last
    may be smaller; None: a run is one step)."""
    n = len(sizes)
    if min_dead_share is None:
        return [(0, n)] if n else []
    share = 0.0 if expiring else min_dead_share
    rewrite = [i in expiring or (kept[i] < counts[i] and counts[i] - kept[i] >= share * counts[i])
               for i in range(n)]
    small = [size < segment_bytes // 2 for size in sizes]
    for order in (range(1, n), range(n - 2, -1, -1)):
        for i in order:
            beside = i - 1 if order.step > 0 else i + 1
            rewrite[i] = rewrite[i] or (small[i] and rewrite[beside])
    steps = []
    i = 0
    while i < n:
        if not rewrite[i]:
            i += 1
            continue
        first, size = i, 0
        while i < n and rewrite[i] and (step_bytes is None or size < step_bytes or i == first):
            size += sizes[i]
            i += 1
        steps.append((first, i))
    return steps


def _compact_step(record_log: RecordLog, inputs: list[Segment], buffers: list[mmap.mmap],
                  survivors: list[int], records_before: int, expire_before_ms: int,
                  stats: CompactionStats) -> CompactionStats:
    """Write the outputs of a run of inputs (of ``records_before`` records) and swap them
    in, unless nothing is gained; ``stats`` with this step's changes."""
    outputs, dropped = _plan_outputs(inputs, buffers, survivors, record_log.segment_bytes,
                                     expire_before_ms=expire_before_ms)
    records_after = sum(len(o.frames) for o in outputs)
    if records_after == records_before and len(outputs) >= len(inputs):
        return stats
    new_segments = _swap(record_log, inputs, outputs)
    record_log.swap_segments(inputs, new_segments)
    return dataclasses.replace(
        stats,
        segments_after=stats.segments_after - len(inputs) + len(outputs),
        records_after=stats.records_after + records_after - records_before,
        bytes_after=stats.bytes_after + sum(o.size for o in outputs)
        - sum(s.size for s in inputs),
        tombstones_dropped=stats.tombstones_dropped + dropped,
        skipped=False,
    )


def _finish(stats: CompactionStats, started: float) -> CompactionStats:
    stats = dataclasses.replace(stats, duration_s=time.perf_counter() - started)
    if not stats.skipped:
        log.info(
            "compacted %d segments (%d records, %d bytes) into %d (%d records, %d bytes), "
            "%d tombstones dropped, in %.3fs",
            stats.segments_before, stats.records_before, stats.bytes_before,
            stats.segments_after, stats.records_after, stats.bytes_after,
            stats.tombstones_dropped, stats.duration_s,
        )
    return stats


def _read_segment(segment: Segment) -> mmap.mmap:
    """Map a closed segment: the kernel pages it in and out, so compacting a
    large log does not need its whole size in memory."""
    with open(segment.path, "rb") as f:
        if os.fstat(f.fileno()).st_size < segment.size:
            raise CorruptLogError(segment.path, 0, "segment shrank while open")
        return mmap.mmap(f.fileno(), segment.size, access=mmap.ACCESS_READ)


# A record's location packs (segment index, record index, frame position, index
# in its batch) into one int that sorts in log order.
_SEGMENT_SHIFT = 128
_RECORD_SHIFT = 80
_POS_SHIFT = 32
_LOW32 = 0xFFFFFFFF
_LOW48 = (1 << 48) - 1


@dataclass
class _Scan:
    """What a pass learned from reading its inputs."""

    survivors: list[int]  # locations of the newest record of each key, in log order
    counts: list[int]  # records per input
    expiring: set[int]  # inputs that may hold a tombstone past its retention

    def kept_counts(self) -> list[int]:
        """Survivors per input."""
        kept = [0] * len(self.counts)
        for location in self.survivors:
            kept[location >> _SEGMENT_SHIFT] += 1
        return kept

    def survivors_of(self, first: int, end: int) -> list[int]:
        """The survivors of inputs ``first``..``end``-1, located from input ``first``."""
        low = bisect.bisect_left(self.survivors, first << _SEGMENT_SHIFT)
        high = bisect.bisect_left(self.survivors, end << _SEGMENT_SHIFT, low)
        offset = first << _SEGMENT_SHIFT
        return [location - offset for location in self.survivors[low:high]]


def _newest_per_key(inputs: list[Segment], buffers: list[mmap.mmap],
                    expire_before_ms: int) -> _Scan:
    """The newest record of each key, and what each input holds.

    CRCs are checked again so that compaction never copies a frame damaged on
    disk since the log was opened.
    """
    newest: dict[bytes, int] = {}
    unpack = FRAME.unpack_from
    counts = []
    expiring = set()
    may_expire = FRAME_FLAG_TOMBSTONE | FRAME_FLAG_BATCH  # a batch may hold tombstones
    for segment_index, (segment, buf) in enumerate(zip(inputs, buffers)):
        view = memoryview(buf)
        pos, end, record_index = SEGMENT_HEADER_SIZE, segment.size, 0
        segment_bits = segment_index << _SEGMENT_SHIFT
        while pos < end:
            length, crc, _magic, flags, _version, ts, key_len, type_id = unpack(buf, pos)
            frame_end = pos + FRAME_PREFIX_SIZE + length
            if crc32c(view[pos + FRAME_PREFIX_SIZE:frame_end]) != crc:
                raise CorruptLogError(segment.path, pos, "frame CRC mismatch during compaction")
            if ts < expire_before_ms and flags & may_expire:
                expiring.add(segment_index)
            if flags & FRAME_FLAG_BATCH:
                type_bytes = type_id.to_bytes(2, "little")
                pairs = decode_raw_pairs(view[pos + FRAME_HEADER_SIZE:frame_end])
                for sub, (key, _value) in enumerate(pairs):
                    newest[type_bytes + bytes(key)] = (
                        segment_bits | ((record_index + sub) << _RECORD_SHIFT)
                        | (pos << _POS_SHIFT) | sub)
                record_index += key_len
            else:
                identity = buf[pos + IDENTITY_OFFSET:pos + FRAME_HEADER_SIZE + key_len]
                newest[identity] = (segment_bits | (record_index << _RECORD_SHIFT)
                                    | (pos << _POS_SHIFT))
                record_index += 1
            pos = frame_end
        counts.append(record_index)
    return _Scan(sorted(newest.values()), counts, expiring)


def _plan_outputs(inputs: list[Segment], buffers: list[mmap.mmap], survivors: list[int],
                  segment_bytes: int, *, expire_before_ms: int,
                  ) -> tuple[list[CompactedSegment], int]:
    """Cut the surviving records into output segments covering the inputs' range
    (``CompactedSegments``: every record keeps a position inside its segment's range)."""
    cut = CompactedSegments(inputs[0].base, segment_bytes)
    outputs = []
    dropped = 0
    unpack = FRAME.unpack_from
    views = [memoryview(buf) for buf in buffers]
    batch_at: tuple[int, int] | None = None  # the batch frame whose pairs are decoded
    pairs: list[tuple[msgspec.Raw, msgspec.Raw]] = []
    for location in survivors:
        segment_index = location >> _SEGMENT_SHIFT
        record_index = (location >> _RECORD_SHIFT) & _LOW48
        pos = (location >> _POS_SHIFT) & _LOW48
        buf = buffers[segment_index]
        length, _crc, _magic, flags, version, timestamp, _key_len, type_id = unpack(buf, pos)
        frame_end = pos + FRAME_PREFIX_SIZE + length
        frame: memoryview | bytes
        if flags & FRAME_FLAG_BATCH:
            if batch_at != (segment_index, pos):
                batch_at = (segment_index, pos)
                pairs = decode_raw_pairs(views[segment_index][pos + FRAME_HEADER_SIZE:frame_end])
            key, value = pairs[location & _LOW32]
            tombstone = bytes(value) == NIL
            if _expired(tombstone, timestamp, expire_before_ms):
                dropped += 1
                continue
            frame = plain_frame_bytes(type_id, version, timestamp, bytes(key),
                                      None if tombstone else bytes(value))
        else:
            if _expired(flags & FRAME_FLAG_TOMBSTONE, timestamp, expire_before_ms):
                dropped += 1
                continue
            frame = views[segment_index][pos:frame_end]
        done = cut.add(frame, inputs[segment_index].base + record_index)
        if done is not None:
            outputs.append(done)
    outputs.append(cut.finish(inputs[-1].end))
    return outputs, dropped


def _expired(tombstone: object, timestamp: int, expire_before_ms: int) -> bool:
    """A tombstone written before the horizon has done its work (Kafka's
    delete.retention.ms): it and the records it superseded go."""
    return bool(tombstone) and timestamp < expire_before_ms


# -- record batches: a topic partition's segments ----------------------------------------

Batch = tuple[int, bytes]  # (base offset, batch bytes)
CleanedBatch = tuple[int, int, bytes, int]  # (base offset, last offset delta, bytes, max ts)


class BatchRecords(Protocol):
    """What the cleaner needs to know of a record batch format.

    The cleaner calls :meth:`records` for every batch of the range (first pass), then,
    in log order, :meth:`filtered` for every batch (second pass)."""

    def records(self, base: int, batch: bytes) -> list[tuple[bytes | None, bool, int]] | None:
        """(key, is a tombstone, timestamp) of each record of the batch, in order (called
        once for each batch, first pass); None when its records are not the newest of
        their keys whatever follows (aborted data, transaction markers): :meth:`filtered`
        alone decides their fate."""
        ...

    def filtered(self, base: int, batch: bytes, keep: list[bool] | None) -> CleanedBatch | None:
        """The batch with only the records ``keep`` marks (None: a batch `records` did not
        list); None when nothing of it needs to stay, not even its header."""
        ...

    def max_timestamp(self, batch: bytes) -> int:
        """The batch's largest timestamp."""
        ...

    def last_offset_delta(self, batch: bytes) -> int:
        """How many offsets past its base the batch covers."""
        ...

    def gap(self, base: int, last: int, max_timestamp: int) -> CleanedBatch:
        """A batch of no record covering offsets ``base``..``last``, which stands in for
        batches that went entirely (the largest of their timestamps is ``max_timestamp``,
        which retention judges the segment by): offsets stay where they were, segments
        gap-free."""
        ...


@dataclass
class CleanedSegments:
    """What :func:`clean_segments` made of each segment, and its counts."""

    segments: list[list[CleanedBatch]]
    changed: list[bool] = dataclasses.field(default_factory=list)  # per segment
    records_before: int = 0
    records_after: int = 0
    tombstones_dropped: int = 0


def clean_segments(read: Callable[[int], list[Batch]], segments: list[tuple[int, int]],
                   kind: BatchRecords, *, expire_before_ms: int,
                   log_start: int = 0) -> CleanedSegments:
    """Kafka's cleaning of the closed segments ``segments`` ((base, end offset) each),
    whose batches ``read(base)`` returns: each key's newest record stays, older ones and
    tombstones written before ``expire_before_ms`` go. Each segment keeps its range of
    offsets; a run of batches that went entirely becomes one :meth:`BatchRecords.gap`.
    Batches wholly below ``log_start`` (gone for readers, their segment not yet) stay as
    they are."""
    # First pass: each key's newest record (its ordinal among the records listed, and
    # whether it is a tombstone past the horizon); how many records each batch lists.
    newest: dict[bytes, tuple[int, bool]] = {}
    # Per segment: the ordinal of its first record, and how many records each of its
    # batches at or above the log start lists (-1: none, not listed).
    plan: list[tuple[int, list[int]]] = []
    ordinal = 0
    for base, _end in segments:
        counts: list[int] = []
        plan.append((ordinal, counts))
        for batch_base, batch in read(base):
            if batch_base + kind.last_offset_delta(batch) < log_start:
                continue
            listed = kind.records(batch_base, batch)
            if listed is None:
                counts.append(-1)
                continue
            for key, tombstone, ts in listed:
                if key is not None:
                    newest[key] = (ordinal, _expired(tombstone, ts, expire_before_ms))
                ordinal += 1
            counts.append(len(listed))
    survivors = {o for o, expired in newest.values() if not expired}
    out = CleanedSegments([], records_before=ordinal, records_after=len(survivors),
                          tombstones_dropped=len(newest) - len(survivors))
    # Second pass: each batch with the records that survive (parsed again only by a kind
    # that must cut it, keeping some of its records).
    for (base, end), (ordinal, counts) in zip(segments, plan):
        cleaned: list[CleanedBatch] = []
        gap_from: int | None = None
        gap_ts = -1
        changed = False
        batches = read(base)
        if not batches and counts:  # gone since the first pass: nothing to put back
            out.segments.append(cleaned)
            out.changed.append(False)
            continue
        batch_index = 0
        for batch_base, batch in batches:
            last_delta = kind.last_offset_delta(batch)
            if batch_base + last_delta < log_start:
                cleaned.append((batch_base, last_delta, batch, kind.max_timestamp(batch)))
                continue
            count = counts[batch_index]
            batch_index += 1
            keep = None
            if count >= 0:
                keep = [o in survivors for o in range(ordinal, ordinal + count)]
                ordinal += count
            kept = kind.filtered(batch_base, batch, keep)
            if kept is None:
                if gap_from is None:
                    gap_from, gap_ts = batch_base, -1
                gap_ts = max(gap_ts, kind.max_timestamp(batch))
                changed = True
                continue
            changed = changed or kept[2] is not batch
            if gap_from is not None:
                cleaned.append(kind.gap(gap_from, batch_base - 1, gap_ts))
                gap_from = None
            cleaned.append(kept)
        if gap_from is not None:
            cleaned.append(kind.gap(gap_from, end - 1, gap_ts))
        out.segments.append(cleaned)
        out.changed.append(changed)
    return out


class CleanableLog(Protocol):
    """A partition's store as the cleaner uses it (:class:`PartitionLog`'s methods)."""

    def read_segment(self, base: int) -> list[Batch]: ...

    def replace_segment(self, base: int, batches: list[CleanedBatch]) -> bool: ...


def clean_partition(partition_log: CleanableLog, segments: list[tuple[int, int]],
                    kind: BatchRecords, *, expire_before_ms: int,
                    log_start: int = 0) -> CleanedSegments:
    """:func:`clean_segments` of a partition log's closed segments, each changed one put in
    place of the old (:meth:`PartitionLog.replace_segment`). Safe while the log is
    appended to; a segment removed meanwhile (retention, DeleteRecords) stays removed."""
    cleaned = clean_segments(partition_log.read_segment, segments, kind,
                             expire_before_ms=expire_before_ms, log_start=log_start)
    for (base, _end), batches, changed in zip(segments, cleaned.segments, cleaned.changed):
        if changed:
            partition_log.replace_segment(base, batches)
    return cleaned


def _swap(record_log: RecordLog, inputs: list[Segment],
          outputs: list[CompactedSegment]) -> list[Segment]:
    """Write the outputs, commit the manifest, move files; returns the new segments."""
    directory = record_log.directory
    new_segments = []
    try:
        for output in outputs:
            new_segments.append(output.write(directory, temporary=True))
        fsync_dir(directory)
        manifest = CompactionManifest(
            inputs=tuple(segment.name for segment in inputs),
            outputs=tuple(segment.name for segment in new_segments),
        )
        commit_manifest(directory, manifest)
    except OSError as exc:
        if manifest_committed(directory):
            record_log.mark_failed(exc)
        else:
            _discard_outputs(directory, outputs)
        raise
    try:
        roll_forward(directory, manifest)
    except OSError as exc:
        # The files are half swapped; the next open finishes the job.
        record_log.mark_failed(exc)
        raise
    return new_segments


def _discard_outputs(directory: str, outputs: list[CompactedSegment]) -> None:
    """Best effort removal of temporary outputs after a failure before the commit."""
    names = [temporary_name(segment_name(output.base)) for output in outputs]
    for name in names + [temporary_name(MANIFEST_NAME)]:
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:
            pass
