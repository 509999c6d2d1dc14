"""RecordLog: an append-only, segmented log of typed records.

A log is opened with the RecordTypes it holds: appends encode and replay
decodes through them, and a frame of a type it does not declare is refused as
written by a newer kcsim (see ``storage.segment``).

Opening a log checks the segment headers and that the segments follow each
other without gaps; the frames themselves are CRC-checked by the first replay
in the same pass that decodes them (start-up reads every record exactly once).
Appending before a replay validates first. Either way a torn tail is cut with a
warning and earlier damage raises CorruptLogError naming the file and byte, or
with ``repair=True`` cuts the log there.

Once replayed, the log is safe to share between threads: appends, rolls and
the segment list are guarded by a lock that is never held across an fsync, so
an fsync running in a worker thread does not stall appends on the event-loop
thread. Replay itself is a start-up step and must not race appends.

The log also keeps its clean/dirty split for the compaction policy
(``storage.compaction_policy``): the clean end read back from the cleaner
checkpoint (``storage.cleaner_checkpoint``), and running byte counts of the
closed segments on either side of it, updated when a segment rolls and when a
compaction swaps segments, so that asking how dirty the log is costs no scan.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Self

import msgspec

from . import manifest
from .cleaner_checkpoint import CleanerCheckpoint, read_checkpoint, write_checkpoint
from .compaction_policy import DirtySegment, LogShape
from .errors import CorruptLogError, StorageError
from .fsutil import fsync_dir, fsync_path, make_dirs_durably
from .segment import (
    DEFAULT_SEGMENT_BYTES,
    MIN_SEGMENT_BYTES,
    SEGMENT_HEADER_SIZE,
    ScanResult,
    Segment,
    decode_frames,
    decode_segment_header,
    encode_frames,
    frame_records,
    iter_frame_bounds,
    scan_and_decode,
    scan_frames,
    segment_name,
)
from .segment_check import SegmentDamage, SegmentPlace, gap_reason, judge_scan
from .segment_reader import undecodable
from .segment_writer import SegmentWriter

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from .records import Record, RecordTypes

log = logging.getLogger(__name__)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class RecordLog:
    """Segmented record log under one directory. Use :meth:`open`."""

    def __init__(self, directory: str, types: RecordTypes, segments: list[Segment],
                 segment_bytes: int, *, repair: bool, read_only: bool) -> None:
        self._directory = directory
        self._types = types
        self._segments = segments
        self._segment_bytes = segment_bytes
        self._repair = repair
        self._read_only = read_only
        self._validated = 0  # how many leading segments have had their frames checked
        self._ready = False  # every segment validated and, if writable, the active one open
        self._startup_lock = threading.Lock()
        self._lock = threading.Lock()
        self.compaction_lock = threading.Lock()
        self._active: SegmentWriter | None = None  # the segment appends go to
        self._unsynced_paths: list[str] = []
        self._dir_dirty = False
        self._closed = False
        self._broken: BaseException | None = None
        self._checkpoint = read_checkpoint(directory)
        self._clean_segments = 0  # the leading closed segments a compaction wrote
        self._clean_bytes = 0
        # Bytes of the closed segments written since the last compaction (after the clean
        # ones): it changes when a segment rolls or a compaction ends, so reading it is free.
        self.dirty_bytes = 0
        self._newest_ms: dict[int, int] = {}  # base -> newest record's time, of dirty segments
        self._last_append_ms = 0

    # -- opening ------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, types: RecordTypes,
             segment_bytes: int = DEFAULT_SEGMENT_BYTES, repair: bool = False,
             read_only: bool = False) -> RecordLog:
        """Open (creating if needed) the log in ``path``, holding records of ``types``.

        ``repair=True`` cuts the log at the first corruption instead of raising.
        ``read_only=True`` changes nothing on disk (no repair, no torn-tail cut):
        for inspecting a log, possibly while a server appends to it.
        """
        directory = os.fspath(path)
        if segment_bytes < MIN_SEGMENT_BYTES:
            raise ValueError(f"segment_bytes={segment_bytes} is too small")
        if read_only:
            if repair:
                raise ValueError("repair needs a writable log")
            files = manifest.effective_segment_files(directory)
        else:
            make_dirs_durably(directory)
            manifest.finish_interrupted_compaction(directory)
            files = manifest.segment_files(directory)
        segments = _check_headers(directory, files, repair=repair, read_only=read_only)
        return cls(directory, types, segments, segment_bytes, repair=repair,
                   read_only=read_only)

    # -- reading ------------------------------------------------------------------

    def replay(self) -> Iterator[Record]:
        """Every record, oldest first (tombstones have value None).

        Meant for start-up, before appends: it validates frames as it goes, so
        CorruptLogError can surface after some records were yielded.
        """
        index = 0
        while True:
            with self._lock:
                if index >= len(self._segments):
                    break
                segment = self._segments[index]
                validated = index < self._validated
                size = segment.size
            buf = _read_file(segment.path, size)
            if validated:
                if len(buf) < size:
                    raise CorruptLogError(segment.path, len(buf), "segment shrank while open")
                try:
                    yield from decode_frames(self._types, buf, SEGMENT_HEADER_SIZE, size)
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    raise undecodable(self._types, segment.path, buf, size, exc) from exc
            else:
                try:
                    scan = yield from scan_and_decode(self._types, buf, SEGMENT_HEADER_SIZE,
                                                      len(buf))
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    raise undecodable(self._types, segment.path, buf, len(buf), exc) from exc
                self._accept_scan(index, buf, scan)
            index += 1
        self._ensure_ready()

    def _ensure_ready(self) -> None:
        """Check the frames no replay has seen yet, then open the active segment.

        Runs once; later calls (from any thread) return at once.
        """
        if self._ready:
            return
        with self._startup_lock:
            if self._ready:
                return
            if self._closed:
                raise StorageError(f"record log {self._directory} is closed")
            while self._validated < len(self._segments):
                segment = self._segments[self._validated]
                buf = _read_file(segment.path, None)
                scan = scan_frames(self._types, buf, SEGMENT_HEADER_SIZE, len(buf))
                self._accept_scan(self._validated, buf, scan)
            if not self._read_only:
                self._open_active_segment()
            self._settle_clean_end()
            self._ready = True

    def _settle_clean_end(self) -> None:
        """Count the clean and dirty bytes; a log cut (repaired) below its checkpoint
        lowers it first, since the positions past the cut will be written anew (a
        read-only log only counts: its last segment is the active one of a writer)."""
        closed = self._segments[:-1]
        fits = [s.end for s in closed if s.end <= self._checkpoint.clean_end]
        clean_end = fits[-1] if fits else 0
        if clean_end != self._checkpoint.clean_end and not self._read_only:
            log.warning("the cleaner checkpoint of %s said clean up to %d, the log has %d",
                        self._directory, self._checkpoint.clean_end, clean_end)
            self._checkpoint = CleanerCheckpoint(clean_end, self._checkpoint.compacted_at_ms)
            write_checkpoint(self._directory, self._checkpoint)
        with self._lock:
            self._recount()

    def _accept_scan(self, index: int, buf: bytes, scan: ScanResult) -> None:
        """Act on start-up's verdict on segment ``index``: cut a torn tail, refuse damage."""
        segment = self._segments[index]
        following = self._segments[index + 1] if index + 1 < len(self._segments) else None
        verdict = judge_scan(SegmentPlace.of(segment, following), buf, scan)
        damage = verdict.damage
        if damage is not None and damage.unsupported:
            raise damage.error()
        if damage is not None and damage.path == segment.path and damage.position == 0:
            self._cut_at(index, damage)  # nothing of this segment can be kept
            return
        segment.size, segment.count = verdict.valid_bytes, verdict.records
        if verdict.torn_tail is not None and not self._read_only:
            log.warning("truncating torn tail of %s at byte %d (%s, %d bytes dropped)",
                        segment.path, verdict.valid_bytes, verdict.torn_tail,
                        verdict.file_bytes - verdict.valid_bytes)
            _truncate(segment.path, verdict.valid_bytes)
        if damage is not None:
            self._cut_at(index if damage.path == segment.path else index + 1, damage)
        self._validated = index + 1

    def _cut_at(self, index: int, damage: SegmentDamage) -> None:
        """Damage in segment ``index``: raise, or when repairing cut the log at it
        (that segment from the damaged byte on, the whole of it from byte 0)."""
        if damage.position == 0:
            self._cut(index, damage.path, 0, damage.reason)
            return
        self._cut(index + 1, damage.path, damage.position, damage.reason)
        _truncate(damage.path, damage.position)

    def _cut(self, drop_from: int, path: str, position: int, reason: str) -> None:
        """Damage at ``position`` in ``path``: raise, or when repairing drop the
        segments from index ``drop_from`` on (the caller truncates ``path``)."""
        if not self._repair or self._read_only:
            raise CorruptLogError(path, position, reason)
        log.warning("repair: cutting the log at byte %d of %s (%s)", position, path, reason)
        with self._lock:
            dropped, self._segments[drop_from:] = self._segments[drop_from:], []
        for segment in dropped:
            log.warning("repair: deleting %s", segment.path)
            os.unlink(segment.path)
        fsync_dir(self._directory)

    def _open_active_segment(self) -> None:
        last = self._segments[-1] if self._segments else None
        if last is None or last.sealed_end is not None:
            with self._lock:
                self._create_segment(last.end if last else 0)
            self._sync_files()
            return
        self._active = SegmentWriter.reopen(last.path, last.base, last.size)

    def _create_segment(self, base: int) -> Segment:
        path = os.path.join(self._directory, segment_name(base))
        self._active = SegmentWriter.create(path, base)
        segment = Segment(base, path, SEGMENT_HEADER_SIZE, 0)
        self._segments.append(segment)
        self._validated = len(self._segments)
        self._dir_dirty = True
        return segment

    # -- writing ------------------------------------------------------------------

    def append(self, records: Sequence[Record], *, timestamp_ms: int | None = None) -> None:
        """Write records to the OS (no fsync); they replay after everything before them.

        ``timestamp_ms`` is the write time stored in each frame (defaults to now);
        compaction measures tombstone retention from it.
        """
        if not records:
            return
        if timestamp_ms is None:
            timestamp_ms = now_ms()
        frames = encode_frames(self._types, records, timestamp_ms)
        if not self._ready:
            self._ensure_ready()
        with self._lock:
            if self._closed or self._read_only or self._broken is not None:
                self._check_writable()
            self._last_append_ms = timestamp_ms
            try:
                active = self._segments[-1]
                if len(frames) == 1:  # records of one type: the usual append
                    frame, count = frames[0]
                    if active.count and active.size + len(frame) > self._segment_bytes:
                        active = self._roll()
                    self._write(active, frame, count)
                    return
                batch: list[bytes] = []
                batch_bytes = batch_records = 0
                for frame, count in frames:
                    full = active.size + batch_bytes + len(frame) > self._segment_bytes
                    if full and (active.count or batch):
                        self._write(active, b"".join(batch), batch_records)
                        batch, batch_bytes, batch_records = [], 0, 0
                        active = self._roll()
                    batch.append(frame)
                    batch_bytes += len(frame)
                    batch_records += count
                self._write(active, b"".join(batch), batch_records)
            except OSError as exc:
                self._broken = exc
                raise

    def _write(self, active: Segment, data: bytes, records: int) -> None:
        assert self._active is not None
        self._active.append(data)
        active.size += len(data)
        active.count += records

    def _roll(self) -> Segment:
        """Seal the active segment (recording its end) and start the next one."""
        assert self._active is not None
        old = self._segments[-1]
        end = old.base + old.count
        self._active.seal(end)
        old.sealed_end = end
        self._active.close()
        self._active = None
        self.dirty_bytes += old.size
        self._newest_ms[old.base] = self._last_append_ms
        self._unsynced_paths.append(old.path)
        return self._create_segment(end)

    def sync(self) -> None:
        """Fsync everything appended so far (and the directory after a roll)."""
        if self._read_only:
            return
        self._ensure_ready()
        self._sync_files()

    def _sync_files(self) -> None:
        with self._lock:
            self._check_writable()
            assert self._active is not None
            paths, self._unsynced_paths = self._unsynced_paths, []
            dir_dirty, self._dir_dirty = self._dir_dirty, False
            fd = os.dup(self._active.fileno())
        try:
            for path in paths:
                fsync_path(path)
            os.fsync(fd)
            if dir_dirty:
                fsync_dir(self._directory)
        except OSError as exc:
            self._broken = exc
            raise
        finally:
            os.close(fd)

    def _check_writable(self) -> None:
        if self._closed:
            raise StorageError(f"record log {self._directory} is closed")
        if self._read_only:
            raise StorageError(f"record log {self._directory} was opened read-only")
        if self._broken is not None:
            raise StorageError(
                f"record log {self._directory} failed earlier: {self._broken}"
            ) from self._broken

    def close(self) -> None:
        """Release the file descriptor; call :meth:`sync` first for durability."""
        with self._lock:
            if self._active is not None:
                self._active.close()
                self._active = None
            self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- introspection and compaction hooks ---------------------------------------

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def types(self) -> RecordTypes:
        return self._types

    @property
    def segment_bytes(self) -> int:
        return self._segment_bytes

    @property
    def segments(self) -> tuple[Segment, ...]:
        with self._lock:
            return tuple(self._segments)

    def places(self) -> list[SegmentPlace]:
        """Each segment's place in the chain: what a reader needs to judge it alone
        (``storage.segment_reader.judge_segment``), as start-up would."""
        segments = self.segments
        return [SegmentPlace.of(s, segments[i + 1] if i + 1 < len(segments) else None)
                for i, s in enumerate(segments)]

    def segment_mark(self) -> tuple[int, int, int]:
        """(base, file identity, record count) of the active segment: a point in the log
        that :meth:`records_after` can find again while that file is not rewritten."""
        with self._lock:
            active = self._segments[-1]
            base, path, count = active.base, active.path, active.count
        return base, os.stat(path).st_ino, count

    def records_after(self, mark: tuple[int, int, int]) -> list[Record] | None:
        """The records appended after `mark` (from :meth:`segment_mark`), in order; None when
        the log can no longer tell (the segment was compacted, cut or is gone). Call it
        after replay: it reads validated frames."""
        base, identity, count = mark
        with self._lock:
            start = next((i for i, s in enumerate(self._segments) if s.base == base), None)
            if start is None:
                return None
            segments = [(s.path, s.size, s.count) for s in self._segments[start:]]
        if segments[0][2] < count:
            return None
        try:
            if os.stat(segments[0][0]).st_ino != identity:
                return None
        except OSError:
            return None
        out: list[Record] = []
        for i, (path, size, _count) in enumerate(segments):
            buf = _read_file(path, size)
            pos = SEGMENT_HEADER_SIZE
            if i == 0:
                skipped = 0
                for frame_start, frame_end in iter_frame_bounds(buf, SEGMENT_HEADER_SIZE, size):
                    if skipped >= count:
                        pos = frame_start
                        break
                    skipped += frame_records(buf, frame_start)
                    pos = frame_end
                if skipped != count:
                    return None  # the mark falls inside a frame: not one this log wrote
            out += decode_frames(self._types, buf, pos, size)
        return out

    @property
    def end_position(self) -> int:
        """The position after the last record: it only grows, compaction keeps it."""
        with self._lock:
            return self._segments[-1].end if self._segments else 0

    @property
    def size_bytes(self) -> int:
        with self._lock:
            return sum(s.size for s in self._segments)

    def closed_segments(self) -> list[Segment]:
        """Validated segments that no longer receive appends (all but the active one)."""
        self._ensure_ready()
        with self._lock:
            self._check_writable()
            return list(self._segments[:-1])

    def mark_failed(self, exc: BaseException) -> None:
        """Refuse further writes: the files no longer match what this object knows."""
        with self._lock:
            self._broken = exc

    def swap_segments(self, old: list[Segment], new: list[Segment]) -> None:
        """Replace the run of closed segments ``old`` by ``new`` (after compaction moved
        files)."""
        with self._lock:
            start = next((i for i, s in enumerate(self._segments) if s is old[0]), -1)
            if start < 0 or self._segments[start:start + len(old)] != old:
                raise StorageError("segments changed under compaction")
            self._segments[start:start + len(old)] = new
            self._validated += len(new) - len(old)
            self._recount()

    # -- the clean/dirty split, for the compaction policy ----------------------------

    @property
    def cleaner_checkpoint(self) -> CleanerCheckpoint:
        return self._checkpoint

    def shape(self) -> LogShape:
        """The closed segments split at the clean end, each dirty one with the time of
        its newest record (the file's modification time for one closed before this open)."""
        self._ensure_ready()
        with self._lock:
            dirty = self._segments[self._clean_segments:-1]
            newest = dict(self._newest_ms)
            clean_segments, clean_bytes = self._clean_segments, self._clean_bytes
            checkpoint = self._checkpoint
        for segment in dirty:
            if segment.base not in newest:
                newest[segment.base] = _modified_ms(segment.path)
        with self._lock:
            for base, ms in newest.items():
                self._newest_ms.setdefault(base, ms)
        return LogShape(clean_segments, clean_bytes,
                        tuple(DirtySegment(s.size, newest[s.base]) for s in dirty),
                        checkpoint.compacted_at_ms)

    def mark_clean(self, clean_end: int, compacted_at_ms: int) -> None:
        """A compaction rewrote the closed segments up to position ``clean_end``: record
        them as clean, durably (blocking: call it off the event loop, after the swap)."""
        checkpoint = CleanerCheckpoint(clean_end, compacted_at_ms)
        write_checkpoint(self._directory, checkpoint)
        with self._lock:
            self._checkpoint = checkpoint
            self._recount()

    def _recount(self) -> None:
        """Clean and dirty bytes from the segment list (under the lock; after a change
        of the clean end or of the segments, never per append)."""
        closed = self._segments[:-1]
        clean_end = self._checkpoint.clean_end
        clean = 0
        while clean < len(closed) and closed[clean].end <= clean_end:
            clean += 1
        self._clean_segments = clean
        self._clean_bytes = sum(s.size for s in closed[:clean])
        self.dirty_bytes = sum(s.size for s in closed[clean:])
        live = {s.base for s in closed[clean:]}
        self._newest_ms = {b: ms for b, ms in self._newest_ms.items() if b in live}


def _check_headers(directory: str, files: dict[int, str], *, repair: bool,
                   read_only: bool) -> list[Segment]:
    """Segments from their headers: names match, sealed ranges leave no gap.

    A partial header on the last segment (a crash while creating it) is
    rewritten; anything else wrong raises, or with ``repair`` cuts the log there.
    """
    segments: list[Segment] = []
    ordered = sorted(files.items())
    for index, (base, path) in enumerate(ordered):
        is_last = index == len(ordered) - 1
        with open(path, "rb") as f:
            head = f.read(SEGMENT_HEADER_SIZE)
            size = os.fstat(f.fileno()).st_size
        previous = segments[-1] if segments else None
        expected = 0 if previous is None else previous.sealed_end
        header = decode_segment_header(head)
        if isinstance(header, str):
            if is_last and size <= SEGMENT_HEADER_SIZE and expected in (None, base):
                segments.append(_restart_torn_segment(base, path, header, read_only))
                break
            problem = header
        elif header[0] != base:
            problem = f"header says base {header[0]}, file name says {base}"
        elif expected is not None and base != expected:
            problem = gap_reason(expected, base)
        else:
            segments.append(Segment(base, path, size, 0, header[1]))
            continue
        if not repair or read_only:
            raise CorruptLogError(path, 0, problem)
        log.warning("repair: cutting the log at byte 0 of %s (%s)", path, problem)
        for _, dropped in ordered[index:]:
            log.warning("repair: deleting %s", dropped)
            os.unlink(dropped)
        fsync_dir(directory)
        break
    return segments


def _restart_torn_segment(base: int, path: str, problem: str, read_only: bool) -> Segment:
    """A crash while creating a segment left a partial header: start it afresh."""
    if not read_only:
        log.warning("rewriting the torn header of %s (%s)", path, problem)
        writer = SegmentWriter.create(path, base, exclusive=False)
        try:
            writer.sync()
        finally:
            writer.close()
    return Segment(base, path, SEGMENT_HEADER_SIZE, 0)


def _modified_ms(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns // 1_000_000
    except FileNotFoundError:
        return 0  # compacted away meanwhile: its records are no longer dirty


def _read_file(path: str, size: int | None) -> bytes:
    with open(path, "rb") as f:
        return f.read() if size is None else f.read(size)


def _truncate(path: str, size: int) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)
