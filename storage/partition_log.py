"""PartitionLog: the produced record batches of one topic partition, on disk.

Batches are stored verbatim (the bytes the producer sent), each in a frame that
also carries the offsets the broker assigned::

    length u32 | crc32c u32 | magic u8 | flags u8 | reserved u16
    | last_offset_delta i32 | base_offset i64 | max_timestamp i64 | batch bytes

``length`` counts the bytes after the CRC field, which the CRC covers. Offsets
are contiguous: a batch's base offset is the log end offset when it was
appended, so segment ``<base>.log`` starts exactly where the previous one ends
and a missing segment shows up as a hole.

An in-memory index (base offset and file position of every batch, in compact
arrays per segment) is rebuilt at open; a fetch from any offset is two
bisections and one pread per segment touched. Open CRC-checks the last
segment, cuts its torn tail and walks the frame headers of the others.
"""

from __future__ import annotations

import bisect
import logging
import mmap
import os
import shutil
import struct
import threading
from array import array
from dataclasses import dataclass, field
from typing import Self

from crc32c import crc32c

from .errors import CorruptLogError, OffsetOutOfRangeError, StorageError
from .fsutil import (
    fsync_dir,
    fsync_path,
    make_dirs_durably,
    replace_durably,
    write_file_durably,
)
from .segment import DEFAULT_SEGMENT_BYTES, SEGMENT_SUFFIX

LOG_START_FILE = "log-start-offset"
REWRITTEN_SUFFIX = ".rewritten"  # a rewrite being written beside the partition's directory
REPLACED_SUFFIX = ".replaced"  # the partition's directory, moved aside by a rewrite
CLEANED_SUFFIX = ".cleaned"  # a segment's cleaned copy, renamed over it once synced

FRAME = struct.Struct("<IIBBHiqq")
FRAME_SIZE = FRAME.size  # 32
_PREFIX_SIZE = 8
_HEADER_REST = struct.Struct("<BBHiqq")
_PREFIX = struct.Struct("<II")
_MAGIC = 0xB7
_MAGIC_BYTE = bytes([_MAGIC])
_MIN_LENGTH = FRAME_SIZE - _PREFIX_SIZE

log = logging.getLogger(__name__)


@dataclass(eq=False)
class _Segment:
    """One segment file and the index of the batches it holds."""

    base: int
    path: str
    size: int = 0
    bases: array[int] = field(default_factory=lambda: array("q"))
    positions: array[int] = field(default_factory=lambda: array("q"))
    end_offset: int = 0  # one past the last offset in this segment
    fd: int | None = None

    def open_fd(self, writable: bool) -> int:
        if self.fd is None:
            self.fd = os.open(self.path, os.O_RDWR if writable else os.O_RDONLY)
        return self.fd

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _segment_path(directory: str, base: int) -> str:
    return os.path.join(directory, f"{base:020d}{SEGMENT_SUFFIX}")


class PartitionLog:
    """Append-only batches of one partition. Use :meth:`open`. Thread-safe."""

    def __init__(self, directory: str, segments: list[_Segment], log_start_offset: int,
                 segment_bytes: int) -> None:
        self._directory = directory
        self._segments = segments
        self._segment_bases = [s.base for s in segments]
        self._log_start_offset = log_start_offset
        self._segment_bytes = segment_bytes
        self._lock = threading.Lock()
        self._unsynced_paths: list[str] = []
        self._dir_dirty = False
        self._dirs_to_sync: list[str] = []  # created without a sync (open(sync_dirs=False))
        self._closed = False
        self._broken: BaseException | None = None
        segments[-1].open_fd(writable=True)

    # -- opening --------------------------------------------------------------------

    @classmethod
    def open(cls, directory: str | os.PathLike[str], *,
             segment_bytes: int = DEFAULT_SEGMENT_BYTES, repair: bool = False,
             sync_dirs: bool = True) -> PartitionLog:
        """Open (creating if needed) the partition log in ``directory``.

        With ``sync_dirs=False`` new directories and the first segment are made
        durable by the first :meth:`sync` instead of now: the batches appended
        are only durable from then on anyway, and a caller on an event loop
        should not wait for the disk.
        """
        directory = os.fspath(directory)
        if segment_bytes <= FRAME_SIZE:
            raise ValueError(f"segment_bytes={segment_bytes} is too small")
        created = _new_dirs(directory)
        if sync_dirs:
            make_dirs_durably(directory)
        else:
            os.makedirs(directory, exist_ok=True)
        checkpoint = _read_log_start(directory)
        for name in os.listdir(directory):
            if name.endswith(CLEANED_SUFFIX):  # a cleaning a crash cut short: the old stays
                os.unlink(os.path.join(directory, name))
        files = sorted(
            (int(name[: -len(SEGMENT_SUFFIX)]), os.path.join(directory, name))
            for name in os.listdir(directory)
            if name.endswith(SEGMENT_SUFFIX) and name[: -len(SEGMENT_SUFFIX)].isdigit()
        )
        segments = _load_segments(directory, files, checkpoint, repair)
        checkpoint = _read_log_start(directory)  # repair may have moved it
        if not segments or checkpoint > segments[-1].end_offset:
            # Nothing on disk (or less than the recorded start): start empty there.
            for segment in segments:
                os.unlink(segment.path)
            segments = [_create_segment(directory, checkpoint)]
            if sync_dirs:
                fsync_dir(directory)
            else:
                created.append(directory)
        log_start = max(checkpoint, segments[0].base)
        if len(segments) > 1 and segments[1].base <= log_start:
            while len(segments) > 1 and segments[1].base <= log_start:
                os.unlink(segments.pop(0).path)  # a prefix truncation cut short by a crash
            fsync_dir(directory)
        log = cls(directory, segments, log_start, segment_bytes)
        if not sync_dirs:  # each new directory's entry lives in its parent
            log._dirs_to_sync = sorted({os.path.dirname(d) for d in created} | set(created[-1:]))
        return log

    # -- offsets --------------------------------------------------------------------

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._segments[-1].end_offset

    @property
    def size_bytes(self) -> int:
        with self._lock:
            return sum(s.size for s in self._segments)

    @property
    def segment_bytes(self) -> int:
        return self._segment_bytes

    @segment_bytes.setter
    def segment_bytes(self, value: int) -> None:
        """The size at which appends roll to a new segment (a topic's segment.bytes), from
        the next roll on."""
        if value <= FRAME_SIZE:
            raise ValueError(f"segment_bytes={value} is too small")
        self._segment_bytes = value

    def segment_ranges(self) -> list[tuple[int, int, int]]:
        """(base offset, end offset, bytes) of every segment, oldest first; the last is the
        active one. What retention and the cleaner judge segments by."""
        with self._lock:
            return [(s.base, s.end_offset, s.size) for s in self._segments]

    # -- writing --------------------------------------------------------------------

    def append(self, base_offset: int, last_offset_delta: int, batch_bytes: bytes,
               max_timestamp: int) -> None:
        """Append one batch whose first offset is the current log end offset."""
        with self._lock:
            self._check_open()
            active = self._segments[-1]
            if base_offset != active.end_offset:
                raise ValueError(
                    f"batch base offset {base_offset} is not the log end offset "
                    f"{active.end_offset}"
                )
            if last_offset_delta < 0:
                raise ValueError(f"last_offset_delta must be >= 0, not {last_offset_delta}")
            rest = _HEADER_REST.pack(_MAGIC, 0, 0, last_offset_delta, base_offset, max_timestamp)
            crc = crc32c(batch_bytes, crc32c(rest))
            prefix = _PREFIX.pack(len(rest) + len(batch_bytes), crc)
            frame_size = FRAME_SIZE + len(batch_bytes)
            if active.size and active.size + frame_size > self._segment_bytes:
                try:
                    active = self._roll()
                except OSError as exc:
                    self._broken = exc
                    raise
            position = active.size
            try:
                _write_frame(active.open_fd(writable=True), [prefix, rest, batch_bytes],
                             frame_size, position)
            except OSError as exc:
                self._broken = exc
                raise
            active.size += frame_size
            active.bases.append(base_offset)
            active.positions.append(position)
            active.end_offset = base_offset + last_offset_delta + 1

    def roll(self) -> bool:
        """Close the active segment if it holds anything (Kafka rolls by segment.ms too);
        False when it is empty."""
        with self._lock:
            self._check_open()
            if not self._segments[-1].bases:
                return False
            self._roll()
            return True

    def _roll(self) -> _Segment:
        old = self._segments[-1]
        segment = _create_segment(self._directory, old.end_offset)
        segment.open_fd(writable=True)
        self._segments.append(segment)
        self._segment_bases.append(segment.base)
        self._unsynced_paths.append(old.path)
        self._dir_dirty = True
        return segment

    def sync(self) -> None:
        """Fsync appended batches (and the directory after a roll)."""
        with self._lock:
            self._check_open()
            paths, self._unsynced_paths = self._unsynced_paths, []
            dir_dirty, self._dir_dirty = self._dir_dirty, False
            dirs, self._dirs_to_sync = self._dirs_to_sync, []
            fd = os.dup(self._segments[-1].open_fd(writable=True))
        try:
            for path in paths:
                fsync_path(path)
            os.fsync(fd)
            if dir_dirty and self._directory not in dirs:
                fsync_dir(self._directory)
            for directory in dirs:
                fsync_dir(directory)
        finally:
            os.close(fd)

    # -- reading --------------------------------------------------------------------

    def read(self, from_offset: int, max_bytes: int) -> list[tuple[int, bytes]]:
        """(base offset, batch bytes) from the batch holding ``from_offset`` on.

        Like a Kafka fetch: the first batch is returned even if larger than
        ``max_bytes``; after it, batches are added while the total fits.
        Reading at the log end offset returns nothing.
        """
        with self._lock:
            self._check_open()
            if not self._log_start_offset <= from_offset <= self.log_end_offset:
                raise OffsetOutOfRangeError(from_offset, self._log_start_offset,
                                            self.log_end_offset)
            if from_offset == self.log_end_offset:
                return []
            result: list[tuple[int, bytes]] = []
            budget = max_bytes
            index = bisect.bisect_right(self._segment_bases, from_offset) - 1
            while index < len(self._segments):
                segment = self._segments[index]
                first = max(0, bisect.bisect_right(segment.bases, from_offset) - 1)
                budget = self._read_segment(segment, first, budget, result)
                if budget <= 0 and result:
                    break
                index += 1
            return result

    def _read_segment(self, segment: _Segment, first: int, budget: int,
                      result: list[tuple[int, bytes]]) -> int:
        positions, bases = segment.positions, segment.bases
        count = len(positions)
        if first >= count:
            return budget
        start = positions[first]
        stop = first
        end = start
        while stop < count:
            frame_end = positions[stop + 1] if stop + 1 < count else segment.size
            batch_size = frame_end - positions[stop] - FRAME_SIZE
            if batch_size > budget and (result or stop > first):
                budget = 0
                break
            budget -= batch_size
            end = frame_end
            stop += 1
        if stop == first:
            return budget
        data = os.pread(segment.open_fd(writable=segment is self._segments[-1]), end - start,
                        start)
        if len(data) < end - start:
            raise CorruptLogError(segment.path, start + len(data), "segment shrank while open")
        for i in range(first, stop):
            frame_start = positions[i] - start
            frame_end = positions[i + 1] - start if i + 1 < stop else end - start
            result.append((bases[i], data[frame_start + FRAME_SIZE:frame_end]))
        return budget

    # -- retention ------------------------------------------------------------------

    def truncate_prefix(self, new_start: int) -> None:
        """Make ``new_start`` the log start offset, deleting segments wholly before it."""
        with self._lock:
            self._check_open()
            if new_start <= self._log_start_offset:
                return
            if new_start > self.log_end_offset:
                raise OffsetOutOfRangeError(new_start, self._log_start_offset,
                                            self.log_end_offset)
            _write_log_start(self._directory, new_start)
            self._log_start_offset = new_start
            if new_start == self.log_end_offset and self._segments[-1].bases:
                self._roll()
            while len(self._segments) > 1 and self._segments[1].base <= new_start:
                segment = self._segments.pop(0)
                self._segment_bases.pop(0)
                segment.close()
                os.unlink(segment.path)
            fsync_dir(self._directory)
            self._dir_dirty = False

    def read_segment(self, base: int) -> list[tuple[int, bytes]]:
        """Every (base offset, batch bytes) of the closed segment starting at ``base`` (what
        the cleaner reads: closed segments change only by :meth:`replace_segment`); none
        once it is gone (retention or DeleteRecords removed it)."""
        with self._lock:
            self._check_open()
            segment = self._closed_segment(base)
            result: list[tuple[int, bytes]] = []
            if segment is None:
                return result
            self._read_segment(segment, 0, segment.size + 1, result)
            return result

    def replace_segment(self, base: int, batches: list[tuple[int, int, bytes, int]]) -> bool:
        """Put ``batches`` (base offset, last offset delta, bytes, max timestamp; covering
        exactly the segment's offsets) in place of the closed segment starting at ``base``:
        what the cleaner keeps of it. The new file is written and synced beside the old
        one, then renamed over it, so a crash leaves one or the other whole. False when
        the segment is gone meanwhile (retention or DeleteRecords removed it)."""
        with self._lock:
            self._check_open()
            segment = self._closed_segment(base)
            if segment is None:
                return False
            end = segment.end_offset
        if _covered_to(batches, base) != end:
            raise ValueError(f"batches from {base} do not end where the segment does, at {end}")
        staged = _Segment(base, segment.path + CLEANED_SUFFIX, end_offset=base)
        fd = os.open(staged.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            for batch_base, last_delta, batch, max_ts in batches:
                rest = _HEADER_REST.pack(_MAGIC, 0, 0, last_delta, batch_base, max_ts)
                prefix = _PREFIX.pack(len(rest) + len(batch), crc32c(batch, crc32c(rest)))
                _write_frame(fd, [prefix, rest, batch], FRAME_SIZE + len(batch), staged.size)
                staged.bases.append(batch_base)
                staged.positions.append(staged.size)
                staged.size += FRAME_SIZE + len(batch)
            os.fsync(fd)
        finally:
            os.close(fd)
        staged.end_offset = end
        with self._lock:
            self._check_open()
            if self._closed_segment(base) is None:
                os.unlink(staged.path)
                return False
            index = bisect.bisect_left(self._segment_bases, base)
            old = self._segments[index]
            os.rename(staged.path, old.path)
            fsync_dir(self._directory)
            old.close()
            staged.path = old.path
            self._segments[index] = staged
            return True

    def _closed_segment(self, base: int) -> _Segment | None:
        index = bisect.bisect_left(self._segment_bases, base)
        if index >= len(self._segments) - 1 or self._segments[index].base != base:
            return None
        return self._segments[index]

    def rewrite(self, batches: list[tuple[int, int, bytes, int]], log_start: int) -> PartitionLog:
        """Replace every batch by `batches` ((base offset, last offset delta, bytes, max
        timestamp), following each other from `log_start` to this log's end offset): what
        compaction keeps. Crash-safe: the new log is written and synced beside this one,
        then put in its place by renames (:func:`recover_rewrite` finishes a swap a crash
        cut short). Returns the new log; this one is closed."""
        with self._lock:
            self._check_open()
            end = self.log_end_offset
        expected = _covered_to(batches, log_start)
        if expected != end or not self._log_start_offset <= log_start <= end:
            raise ValueError(f"batches cover {log_start}..{expected}, the log ends at {end}")
        staged = self._directory + REWRITTEN_SUFFIX
        shutil.rmtree(staged, ignore_errors=True)
        make_dirs_durably(staged)
        _write_log_start(staged, log_start)
        fresh = PartitionLog.open(staged, segment_bytes=self._segment_bytes)
        for base, last_delta, batch, max_ts in batches:
            fresh.append(base, last_delta, batch, max_ts)
        fresh.sync()
        fresh.close()
        self.close()
        replaced = self._directory + REPLACED_SUFFIX
        os.rename(self._directory, replaced)
        os.rename(staged, self._directory)
        fsync_dir(os.path.dirname(os.path.abspath(self._directory)))
        shutil.rmtree(replaced, ignore_errors=True)
        return PartitionLog.open(self._directory, segment_bytes=self._segment_bytes)

    def delete(self, sync_dir: bool = True) -> None:
        """Remove the partition's files (topic deletion); the object is closed.

        ``sync_dir=False`` leaves the removal undurable: for a caller that sweeps
        leftovers of deleted topics at start-up and should not wait for the disk.
        """
        self.close()
        shutil.rmtree(self._directory, ignore_errors=True)
        if sync_dir:
            fsync_dir(os.path.dirname(os.path.abspath(self._directory)))

    def close(self) -> None:
        with self._lock:
            for segment in self._segments:
                segment.close()
            self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"partition log {self._directory} is closed")
        if self._broken is not None:
            raise StorageError(
                f"partition log {self._directory} failed earlier: {self._broken}"
            ) from self._broken


def _covered_to(batches: list[tuple[int, int, bytes, int]], start: int) -> int:
    """Where `batches` (base offset, last offset delta, ...) end, each following the one
    before from `start`; ValueError for one that does not."""
    expected = start
    for base, last_delta, _batch, _ts in batches:
        if base != expected:
            raise ValueError(f"batch at {base} does not follow {expected}")
        expected = base + last_delta + 1
    return expected


def _write_frame(fd: int, parts: list[bytes], frame_size: int, position: int) -> None:
    """Write a whole frame at ``position``, or nothing (a partial frame is cut off)."""
    try:
        written = os.pwritev(fd, parts, position)
        if written < frame_size:
            rest = memoryview(b"".join(parts))[written:]
            at = position + written
            while rest:
                n = os.pwrite(fd, rest, at)
                rest, at = rest[n:], at + n
    except OSError:
        os.ftruncate(fd, position)
        raise


# -- open-time helpers --------------------------------------------------------------


def _new_dirs(directory: str) -> list[str]:
    """The directories creating ``directory`` would add, outermost first."""
    missing = []
    current = os.path.abspath(directory)
    while not os.path.isdir(current):
        missing.append(current)
        current = os.path.dirname(current)
    return missing[::-1]


def _create_segment(directory: str, base: int) -> _Segment:
    path = _segment_path(directory, base)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    os.close(fd)
    return _Segment(base, path, end_offset=base)


def recover_rewrite(directory: str) -> None:
    """Finish or undo a :meth:`PartitionLog.rewrite` a crash cut short: the rewritten log
    wins once the old one was moved aside, else the old one stays."""
    staged, replaced = directory + REWRITTEN_SUFFIX, directory + REPLACED_SUFFIX
    if os.path.isdir(replaced):
        if not os.path.isdir(directory) and os.path.isdir(staged):
            os.rename(staged, directory)
        shutil.rmtree(replaced, ignore_errors=True)
    shutil.rmtree(staged, ignore_errors=True)


def _read_log_start(directory: str) -> int:
    try:
        with open(os.path.join(directory, LOG_START_FILE), "rb") as f:
            return int(f.read().decode().strip())
    except FileNotFoundError:
        return 0


def _write_log_start(directory: str, offset: int) -> None:
    path = os.path.join(directory, LOG_START_FILE)
    write_file_durably(path + ".tmp", f"{offset}\n".encode())
    replace_durably(path + ".tmp", path)


def _load_segments(directory: str, files: list[tuple[int, str]], log_start: int,
                   repair: bool) -> list[_Segment]:
    """Index every segment; cut a torn tail; refuse (or with repair, cut) other damage."""
    if files and files[0][0] > log_start:
        first_base, first_path = files[0]
        reason = (f"missing segment: the log starts at offset {log_start} "
                  f"but its first segment at {first_base}")
        if not repair:
            raise CorruptLogError(first_path, 0, reason)
        log.warning("repair: %s; the log now starts at offset %d", reason, first_base)
        _write_log_start(directory, first_base)
    segments: list[_Segment] = []
    for index, (base, path) in enumerate(files):
        is_last = index == len(files) - 1
        segment = _Segment(base, path, end_offset=base)
        if segments and base != segments[-1].end_offset:
            expected = segments[-1].end_offset
            what = "missing segment" if base > expected else "overlapping segment"
            problem_at, problem = 0, f"{what}: expected offset {expected}, found {base}"
            keep = False
        else:
            damage = _index_segment(segment, check_crc=is_last)
            if damage is None:
                segments.append(segment)
                continue
            problem_at, problem = damage
            keep = True
            if is_last and not _valid_frame_follows(path, problem_at):
                log.warning("truncating torn tail of %s at byte %d (%s, %d bytes dropped)",
                            path, problem_at, problem, os.path.getsize(path) - problem_at)
                _truncate(path, problem_at)
                segments.append(segment)
                continue
        if not repair:
            raise CorruptLogError(path, problem_at, problem)
        log.warning("repair: cutting the partition log at byte %d of %s (%s)",
                    problem_at, path, problem)
        if keep:
            _truncate(path, problem_at)
            segments.append(segment)
        for _, dropped_path in files[index + keep:]:
            log.warning("repair: deleting %s", dropped_path)
            os.unlink(dropped_path)
        fsync_dir(directory)
        break
    return segments


def _index_segment(segment: _Segment, *, check_crc: bool) -> tuple[int, str] | None:
    """Fill the segment's index; returns (byte position, reason) of the first bad frame."""
    with open(segment.path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            return _walk_frames(segment, buf, size, check_crc)


def _walk_frames(segment: _Segment, buf: mmap.mmap | bytes, size: int,
                 check_crc: bool) -> tuple[int, str] | None:
    unpack = FRAME.unpack_from
    bases, positions = segment.bases, segment.positions
    pos, next_offset = 0, segment.base
    view = memoryview(buf)
    try:
        while pos < size:
            if size - pos < FRAME_SIZE:
                return pos, "partial frame"
            length, crc, magic, _flags, _reserved, delta, base_offset, _ts = unpack(buf, pos)
            frame_end = pos + _PREFIX_SIZE + length
            if magic != _MAGIC or length < _MIN_LENGTH or delta < 0:
                return pos, "bad frame header"
            if frame_end > size:
                return pos, "frame runs past the end of the file"
            if check_crc and crc32c(view[pos + _PREFIX_SIZE:frame_end]) != crc:
                return pos, "frame CRC mismatch"
            if base_offset != next_offset:
                return pos, f"batch base offset {base_offset}, expected {next_offset}"
            bases.append(base_offset)
            positions.append(pos)
            next_offset = base_offset + delta + 1
            pos = frame_end
        return None
    finally:
        view.release()
        segment.size = pos
        segment.end_offset = next_offset


def _valid_frame_follows(path: str, start: int) -> bool:
    """Whether any CRC-valid frame starts after ``start`` (damage, not a torn tail)."""
    with open(path, "rb") as f:
        f.seek(start)
        buf = f.read()
    search_from = 1 + _PREFIX_SIZE
    while True:
        magic_at = buf.find(_MAGIC_BYTE, search_from)
        if magic_at < 0:
            return False
        candidate = magic_at - _PREFIX_SIZE
        if len(buf) - candidate >= FRAME_SIZE:
            length, crc = _PREFIX.unpack_from(buf, candidate)
            frame_end = candidate + _PREFIX_SIZE + length
            if length >= _MIN_LENGTH and frame_end <= len(buf) and \
                    crc32c(buf[candidate + _PREFIX_SIZE:frame_end]) == crc:
                return True
        search_from = magic_at + 1


def _truncate(path: str, size: int) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


# -- reading beside a live server ------------------------------------------------------


@dataclass(frozen=True)
class SegmentBatches:
    """One segment file's valid batches, read without changing anything on disk."""

    batches: list[tuple[int, bytes]]  # (base offset, batch bytes), in offset order
    end_offset: int  # one past the last offset of the valid batches
    valid_bytes: int
    file_bytes: int
    damage: tuple[int, str] | None  # (byte position, reason) of the first invalid frame
    torn: bool  # the damage is a torn tail: no valid frame follows it


def read_segment_batches(path: str, base: int) -> SegmentBatches:
    """Every CRC-checked batch of the segment file ``path`` whose first offset is ``base``.

    The frames are walked as :meth:`PartitionLog.open` walks them; the caller
    decides what damage means (a torn tail of the newest segment is what an
    open would cut).
    """
    segment = _Segment(base, path, end_offset=base)
    with open(path, "rb") as f:
        buf = f.read()
    damage = _walk_frames(segment, buf, len(buf), check_crc=True) if buf else None
    positions = segment.positions
    batches = []
    for i, position in enumerate(positions):
        frame_end = positions[i + 1] if i + 1 < len(positions) else segment.size
        batches.append((segment.bases[i], buf[position + FRAME_SIZE:frame_end]))
    torn = damage is not None and not _valid_frame_follows(path, damage[0])
    return SegmentBatches(batches, segment.end_offset, segment.size, len(buf), damage, torn)


def read_log_start_offset(directory: str) -> int:
    """The partition's log start offset as recorded on disk (0 if never truncated)."""
    return _read_log_start(directory)
