"""Writing record-log segment files: the one place their bytes are put on disk.

The log writes its active segment through a :class:`SegmentWriter` (a header
saying "open", frames appended as records commit, the header rewritten with
the segment's end when it rolls), and both compactors, the embedded one and
the Spark pipeline's, write their outputs through one (a sealed header, the
surviving frames, an fsync). Start-up reads every segment with one scan, so
the format has one writer as it has one reader.

The compactors also cut their output the same way, through
:class:`CompactedSegments`: a new segment begins when the next frame would
take the current one past the segment size, and begins at that frame's
position; the first begins at the first input's base and the last ends at the
last input's end, so the outputs cover exactly the inputs' range and the
chain of segments stays gap-free. Both compactors therefore give the same
files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Self, TypeAlias

from .fsutil import write_all
from .manifest import temporary_name
from .segment import SEGMENT_HEADER_SIZE, Segment, encode_segment_header, segment_name

if TYPE_CHECKING:
    from collections.abc import Iterable

    Buffer: TypeAlias = bytes | memoryview

_WRITE_CHUNK = 1 << 20  # frames are joined into writes of about this size


class SegmentWriter:
    """One segment file open for writing: its header, then frames in order.

    :attr:`size` counts the bytes written, header included. A failed append is
    cut back off the file where the OS lets it (disk full), so no partial frame
    stays behind for the next append to follow.
    """

    __slots__ = ("_fd", "base", "path", "size")

    def __init__(self, path: str, base: int, fd: int, size: int) -> None:
        self.path = path
        self.base = base
        self._fd = fd
        self.size = size

    @classmethod
    def create(cls, path: str, base: int, *, sealed_end: int | None = None,
               exclusive: bool = True) -> Self:
        """A new segment starting at ``base``: open (appends follow) unless ``sealed_end``
        is given. ``exclusive`` refuses an existing file, else it is replaced."""
        flags = os.O_RDWR | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
        fd = os.open(path, flags, 0o644)
        try:
            write_all(fd, encode_segment_header(base, sealed_end))
        except BaseException:
            os.close(fd)
            raise
        return cls(path, base, fd, SEGMENT_HEADER_SIZE)

    @classmethod
    def reopen(cls, path: str, base: int, size: int) -> Self:
        """The open segment at ``path``, appending after its ``size`` valid bytes."""
        fd = os.open(path, os.O_RDWR)
        os.lseek(fd, size, os.SEEK_SET)
        return cls(path, base, fd, size)

    def append(self, data: Buffer) -> None:
        try:
            write_all(self._fd, data)
        except OSError:
            os.ftruncate(self._fd, self.size)
            os.lseek(self._fd, self.size, os.SEEK_SET)
            raise
        self.size += len(data)

    def append_all(self, frames: Iterable[Buffer]) -> None:
        """Append many frames with few writes."""
        chunk: list[Buffer] = []
        chunk_bytes = 0
        for frame in frames:
            chunk.append(frame)
            chunk_bytes += len(frame)
            if chunk_bytes >= _WRITE_CHUNK:
                self.append(b"".join(chunk))
                chunk, chunk_bytes = [], 0
        if chunk:
            self.append(b"".join(chunk))

    def seal(self, end: int) -> None:
        """Record in the header that the segment ends at position ``end``: it takes no
        more appends, and a missing segment after it shows even once compaction has
        removed records from it."""
        os.pwrite(self._fd, encode_segment_header(self.base, end), 0)

    def fileno(self) -> int:
        return self._fd

    def sync(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


@dataclass
class CompactedSegment:
    """One output segment of a compaction, cut but not yet written."""

    base: int
    frames: list[Buffer] = field(default_factory=list)
    size: int = SEGMENT_HEADER_SIZE  # header included
    end: int = 0  # known once the next segment begins or the cut finishes

    def write(self, directory: str, *, temporary: bool) -> Segment:
        """Write it sealed and fsynced into ``directory`` (under its temporary name, for a
        swap through the manifest, when ``temporary``); the segment it will be."""
        final = os.path.join(directory, segment_name(self.base))
        writer = SegmentWriter.create(temporary_name(final) if temporary else final, self.base,
                                      sealed_end=self.end, exclusive=False)
        try:
            writer.append_all(self.frames)
            writer.sync()
        finally:
            writer.close()
        return Segment(self.base, final, self.size, len(self.frames), self.end)


class CompactedSegments:
    """Cuts a compaction's surviving frames, given in log order, into output segments.

    :meth:`add` returns each segment as soon as it is complete, so a caller
    streaming more frames than memory holds writes them as they come; the
    frames are held as given (views into the inputs stay views).
    """

    def __init__(self, base: int, segment_bytes: int) -> None:
        self.segment_bytes = segment_bytes
        self._current = CompactedSegment(base)

    def add(self, frame: Buffer, position: int) -> CompactedSegment | None:
        """Place the frame of the record at ``position``; the segment it closed, if any."""
        current = self._current
        size = len(frame)
        done = None
        if current.frames and current.size + size > self.segment_bytes:
            current.end = position
            done, current = current, CompactedSegment(position)
            self._current = current
        current.frames.append(frame)
        current.size += size
        return done

    def finish(self, end: int) -> CompactedSegment:
        """The last segment, ending at ``end`` (where the last input ends)."""
        self._current.end = end
        return self._current
