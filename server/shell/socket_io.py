"""A connection's socket, read and written without a scheduler pass per call.

trio's socket methods yield to the scheduler after every call that did not
block, to stay fair to other tasks. A request/response server does not need a
yield there: when a receive would block it waits (and yields), and when a send
completes at once the next receive usually blocks. So this wrapper calls the
non-blocking socket directly and waits through trio only when the kernel says
it would block; a connection that never blocks still yields every
`FAIRNESS_CALLS` calls, which is also where cancellation reaches it.
"""

from __future__ import annotations

import socket

import trio

FAIRNESS_CALLS = 32
RECV_BYTES = 256 * 1024  # what one receive takes at most
UNSENT_BOUND = 1024 * 1024  # answers built but not sent, per connection


class ConnectionAbort(Exception):
    """End a connection without answering (the server is stopping)."""


class DirectSocket:
    """A connected non-blocking socket taken over from a trio stream."""

    __slots__ = ("_sock", "_unyielded")

    def __init__(self, stream: trio.SocketStream) -> None:
        self._sock = socket.socket(fileno=stream.socket.detach())
        self._sock.setblocking(False)
        self._unyielded = 0

    @property
    def raw(self) -> socket.socket:
        """The non-blocking socket itself, for the reactor's pass (`reactor`)."""
        return self._sock

    def peer_host(self) -> str:
        try:
            return str(self._sock.getpeername()[0])
        except OSError:
            return "unknown"

    async def receive(self, max_bytes: int) -> bytes:
        """Some bytes, or b"" once the peer closed its side."""
        sock = self._sock
        try:
            data = sock.recv(max_bytes)
        except BlockingIOError:
            pass
        else:
            self._unyielded += 1
            if self._unyielded >= FAIRNESS_CALLS:
                self._unyielded = 0
                await trio.lowlevel.checkpoint()
            return data
        while True:
            self._unyielded = 0
            await trio.lowlevel.wait_readable(sock)
            try:
                return sock.recv(max_bytes)
            except BlockingIOError:
                pass

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Send everything, waiting through trio only while the socket buffer is full."""
        sock = self._sock
        try:
            sent = sock.send(data)
        except BlockingIOError:
            sent = 0
        if sent == len(data):
            return  # the receive that follows yields often enough
        view = memoryview(data)[sent:]
        while view:
            self._unyielded = 0
            await trio.lowlevel.wait_writable(sock)
            try:
                view = view[sock.send(view):]
            except BlockingIOError:
                pass

    def close(self) -> None:
        trio.lowlevel.notify_closing(self._sock)
        self._sock.close()
