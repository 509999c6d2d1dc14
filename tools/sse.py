"""Server-sent events (`text/event-stream`), read: a sans-IO parser and a thin HTTP reader.

:class:`SseParser` is fed bytes as they arrive, in any pieces, and returns the messages
they complete, as the HTML standard's event-stream interpretation says: lines end with
CR LF, LF or CR; a blank line ends a message; `data:` lines join with newlines; `id:`
and `event:` name it; lines starting with a colon are comments (keep-alives). It does
no I/O, so it is tested on canned bytes. :func:`read_stream` is the I/O around it, on
the standard library, for `kcsim events` tailing a broker's `/events/stream`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO


@dataclass(frozen=True)
class SseMessage:
    data: str
    event: str = "message"
    id: str | None = None


class SseParser:
    """Bytes in, complete messages out."""

    def __init__(self) -> None:
        self._pending = b""  # an unfinished line
        self._after_cr = False  # the last chunk ended with CR: an LF first is its pair
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self.last_id: str | None = None  # the id of the last message (the stream's position)

    def feed(self, chunk: bytes) -> list[SseMessage]:
        """The messages `chunk` completes (none until their blank line has arrived)."""
        if self._after_cr and chunk.startswith(b"\n"):  # the LF of a CR LF split in two
            chunk = chunk[1:]
        self._after_cr = chunk.endswith(b"\r")
        buffer = self._pending + chunk
        out: list[SseMessage] = []
        start = 0
        while True:
            lf, cr = buffer.find(b"\n", start), buffer.find(b"\r", start)
            if cr == -1 and lf == -1:
                break
            if cr != -1 and (lf == -1 or cr < lf):
                end, next_start = cr, cr + 2 if buffer[cr + 1:cr + 2] == b"\n" else cr + 1
            else:
                end, next_start = lf, lf + 1
            message = self._line(buffer[start:end].decode("utf-8", "replace"))
            if message is not None:
                out.append(message)
            start = next_start
        self._pending = buffer[start:]
        return out

    def _line(self, line: str) -> SseMessage | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None  # `retry` and unknown fields: nothing a reader here needs

    def _dispatch(self) -> SseMessage | None:
        data, event, self._data, self._event = self._data, self._event, [], ""
        if self._id is not None:
            self.last_id = self._id
        if not data:
            return None
        return SseMessage("\n".join(data), event or "message", self.last_id)


def read_stream(body: BinaryIO, parser: SseParser | None = None) -> Iterator[SseMessage]:
    """The messages of an open event-stream response, as they come, until it ends."""
    parser = parser or SseParser()
    read = getattr(body, "read1", body.read)
    while chunk := read(65536):
        yield from parser.feed(chunk)
