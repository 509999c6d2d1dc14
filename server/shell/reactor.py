"""Many plaintext connections served in one pass per wake-up, without a task switch each.

A connection in its own task pays, for every request, a wake-up of that task: the
scheduler's pass, a `recv` and a `send` of its own, the timer re-armed and the
watchers told. When a thousand consumers each have one heartbeat in flight, that
per-wake-up cost is nearly all the cost. So a plaintext connection whose requests are
answered at once is not served by its task but by the reactor: one trio task around
an `epoll` set of such sockets (non-blocking, level-triggered).

A pass, each time the set has ready sockets:

1. for every ready socket: `recv` once, cut its complete frames and answer them
   through the request layer (`Server._answer_frames`, the same code a connection's
   task runs), gathering their answers and records;
2. once for the whole pass: the timer re-armed; each connection's records were
   appended as its answers were built (the frames its own task would write), and under
   `--fsync always` the pass waits once for all of them to be synced;
3. for every connection answered: its answers released to their requests and sent in
   one `send`;
4. once: the watchers told that the state may have changed.

A connection's task parks meanwhile (`serve`). Whatever a pass cannot finish at once
is handed back to the task, which goes on exactly as it would have without the reactor
(`Server._finish_batch`) and then returns the connection to the set:

- an answer that must wait (a long poll, a rebalance, a held request, a fault rule's
  delay) or that closes the connection, a protocol violation, or more than
  UNSENT_BOUND bytes of answers: the receive is handed over where it stands;
- a `send` the socket buffer could not take whole: the rest is handed over (the peer
  reads slowly: back-pressure as before);
- the peer's end of the stream, or a socket error: the task ends the connection.

So a connection's answers keep their order (a connection is in the set or in its
task, never both), a slow or stuck peer holds only itself back, and a bad frame ends
only its own connection. The idle reaper cancels a parked task as it cancels a
serving one. TLS connections stay in their tasks: their bytes need the TLS object.
"""

from __future__ import annotations

import logging
import select
from typing import TYPE_CHECKING, Any

import trio

from .socket_io import RECV_BYTES, UNSENT_BOUND, ConnectionAbort

if TYPE_CHECKING:
    import socket

    from ..requests import Reply
    from .server import Server, _Batch, _Connection
    from .socket_io import DirectSocket

log = logging.getLogger("kcsim.server")

AVAILABLE = hasattr(select, "epoll")
MAX_EVENTS = 1024  # ready sockets taken per pass; the rest come in the next one
FAIRNESS_PASSES = 32  # passes in a row before the reactor lets other tasks run


class Ended:
    """Handed to a connection's task: the peer closed its side (`error` None) or the socket
    failed."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class Unsent:
    """Handed to a connection's task: the rest of its answers, which the socket could not
    take at once."""

    __slots__ = ("rest",)

    def __init__(self, rest: memoryview) -> None:
        self.rest = rest


class Unfinished:
    """Handed to a connection's task: a receive answered up to `batch.pos`, and what stopped
    the pass there (a Reply that needs more, or None: see `Server._finish_batch`)."""

    __slots__ = ("data", "reply", "view")

    def __init__(self, data: bytes | bytearray, view: memoryview, reply: Reply | None) -> None:
        self.data = data
        self.view = view
        self.reply = reply


Handoff = Ended | Unsent | Unfinished


class Reactor:
    """The epoll set of parked connections, and the pass that serves them."""

    def __init__(self, server: Server) -> None:
        self._server = server
        self._epoll = select.epoll()
        self._parked: dict[int, tuple[socket.socket, _Connection]] = {}

    def close(self) -> None:
        self._epoll.close()

    async def serve(self, sock: DirectSocket, conn: _Connection) -> Handoff:
        """Park `conn`'s task while the reactor serves it; returns what the task must do."""
        raw = sock.raw
        fd = raw.fileno()
        entry = (raw, conn)
        conn.handoff = None
        self._parked[fd] = entry
        self._epoll.register(fd, select.EPOLLIN)
        try:
            await conn.lot.park()
        finally:
            if self._parked.get(fd) is entry:  # cancelled while parked (idle, stopping)
                self._release(fd)
        handoff = conn.handoff
        assert handoff is not None
        conn.handoff = None
        return handoff

    def _release(self, fd: int) -> None:
        del self._parked[fd]
        try:
            self._epoll.unregister(fd)
        except (OSError, ValueError):
            pass  # the socket is already closed

    def _hand(self, fd: int, conn: _Connection, handoff: Handoff) -> None:
        """Take `fd` out of the set and wake its task with `handoff`."""
        self._release(fd)
        conn.handoff = handoff
        conn.lot.unpark()

    async def run(self) -> None:
        """Serve the parked connections until cancelled.

        The set is polled again at once after a pass, without a scheduler pass between:
        a client with one request in flight usually has its next request there by the
        time its answer is sent, and waiting through trio for it would cost a wake-up per
        request. Every FAIRNESS_PASSES passes in a row, the reactor yields all the same."""
        epoll = self._epoll
        unyielded = 0
        while True:
            events = epoll.poll(0, MAX_EVENTS)
            if not events:
                unyielded = 0
                await trio.lowlevel.wait_readable(epoll)
                continue
            await self._pass(events)
            unyielded += 1
            if unyielded >= FAIRNESS_PASSES:
                unyielded = 0
                await trio.lowlevel.checkpoint()

    async def _pass(self, events: list[tuple[int, int]]) -> None:
        server = self._server
        broker = server.broker
        answer_frames = server._answer_frames
        durable_now = server._durable_now
        parked = self._parked
        now = server.clock.now_ms()
        handled = broker.handled
        records: list[Any] = []
        answered: list[tuple[int, tuple[socket.socket, _Connection], _Batch]] = []
        for fd, _ in events:
            entry = parked.get(fd)
            if entry is None:
                continue
            sock, conn = entry
            try:
                received = sock.recv(RECV_BYTES)
            except BlockingIOError:
                continue
            except OSError as exc:
                self._hand(fd, conn, Ended(exc))
                continue
            if not received:
                self._hand(fd, conn, Ended())
                continue
            conn.received += 1
            carry = conn.carry
            data: bytes | bytearray = received
            if carry:
                carry += received
                data = carry
            view = memoryview(data)
            batch = conn.batch
            batch.start(now, handled)
            try:
                reply = answer_frames(data, view, conn, batch)
            except Exception as exc:  # a bug in the shell: this connection ends, no other
                self._hand(fd, conn, Ended(exc))
                continue
            if (reply is not None or batch.violation is not None or batch.close
                    or batch.unsent > UNSENT_BOUND):
                self._hand(fd, conn, Unfinished(data, view, reply))
                continue
            conn.carry = bytearray(view[batch.pos:]) if batch.pos < len(data) else b""
            # Appended at once, each connection's as its task would (the same frames);
            # under --fsync always, gathered to wait once for the whole pass.
            try:
                if batch.records and (records or not durable_now(batch.records)):
                    records += batch.records
            except ConnectionAbort as exc:  # storage failed: the server is stopping
                self._hand(fd, conn, Ended(exc))
                continue
            if batch.out or batch.released:
                answered.append((fd, entry, batch))
        served = broker.handled != handled
        if served:
            server.timer.rearm()
        try:
            if records:
                await server._durable(records)  # fsync always: one wait for the whole pass
        except ConnectionAbort as exc:  # storage failed: the server is stopping
            for fd, entry, _batch in answered:
                if parked.get(fd) is entry:
                    self._hand(fd, entry[1], Ended(exc))
            return
        for fd, entry, batch in answered:
            answers = server._outgoing(batch)
            if not answers or parked.get(fd) is not entry:
                continue  # the connection ended while its records were made durable
            sock, conn = entry
            try:
                sent = sock.send(answers)
            except BlockingIOError:
                sent = 0
            except OSError as exc:
                self._hand(fd, conn, Ended(exc))
                continue
            if sent < len(answers):
                self._hand(fd, conn, Unsent(memoryview(answers)[sent:]))
        if served:
            broker.changes.notify()


