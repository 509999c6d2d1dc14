"""The trio shell: listener, one task per connection, the coordinator's timer.

Like a Kafka broker, a connection's requests are served in order: every
complete frame already received is processed, their responses are sent
together (so pipelined clients get one write), and a request whose answer
must wait (a long poll, a rebalance) holds the connection's later requests
behind it. Answers that only wait for their records to be durable do not:
the records of all of them are made durable in one group commit, then the
answers go out in order.
"""

from __future__ import annotations

import logging
import struct
import time
from typing import TYPE_CHECKING, Any

import trio

from .broker import Broker, ProtocolViolation
from .context import Durable
from .socket_io import DirectSocket

if TYPE_CHECKING:
    from .config import Config

log = logging.getLogger("kcsim.server")

_SIZE = struct.Struct(">i")
_RECV = 256 * 1024


class ConnectionAbort(Exception):
    """End a connection without answering (the server is stopping)."""


class Server:
    """A kcsim broker bound to a TCP port."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._epoch_ms = time.time() * 1000.0
        self._trio_start: float | None = None
        self.broker = Broker(config, clock_ms=self.now_ms)
        self.broker.wake_timer = self.wake_timer
        self.port: int | None = None
        self.connections = 0
        self._timer_scope: trio.CancelScope | None = None
        self._armed_ms: int | None = None  # the coordinator deadline the timer was last set for
        self._listeners: list[trio.SocketListener] = []
        self.durability: Any = None
        self.exit_code = 0
        self.stopped = trio.Event()
        self._cancel: trio.CancelScope | None = None
        self._open: set[_Connection] = set()
        self._persist_now: Any = None  # a synchronous persist when durability never waits

    def attach_durability(self, durability: Any) -> None:
        """Persist through the durable log's group-commit writer."""
        self.durability = durability
        self.broker.persist = self._persist
        if durability.writer.policy == "never":
            # Nothing to wait for: answers flush without a scheduler pass.
            self._persist_now = self._append_now

    async def _persist(self, records: list[Any]) -> None:
        from kcsim.storage import StorageError

        writer = self.durability.writer
        if writer.policy == "never":
            self._append_now(records)
            return
        try:
            await writer.commit(records)
        except StorageError as exc:
            self.fatal(exc)
            raise ConnectionAbort(f"storage failed: {exc}") from None

    def _append_now(self, records: list[Any]) -> None:
        from kcsim.storage import StorageError

        try:
            self.durability.writer.commit_now(records)
        except StorageError as exc:
            self.fatal(exc)
            raise ConnectionAbort(f"storage failed: {exc}") from None

    def fatal(self, exc: BaseException) -> None:
        """Stop serving: the disk no longer holds what we would acknowledge."""
        if self.exit_code == 0:
            log.critical("stopping: %s", exc)
            self.exit_code = 1
        self.stop()

    def stop(self) -> None:
        if self._cancel is not None:
            self._cancel.cancel()

    def now_ms(self) -> int:
        """Wall-clock milliseconds advanced by trio's clock (so MockClock drives time-outs)."""
        if self._trio_start is None:
            return int(time.time() * 1000)
        return int(self._epoch_ms + (trio.current_time() - self._trio_start) * 1000.0)

    async def serve(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Listen and serve until cancelled; reports the bound port through task_status."""
        self._trio_start = trio.current_time()
        self._epoch_ms = time.time() * 1000.0
        listeners = await trio.open_tcp_listeners(self.config.port, host=self.config.host)
        self._listeners = listeners
        self.port = listeners[0].socket.getsockname()[1]
        if self.config.advertised_port is None and self.config.port == 0:
            self.config.advertised_port = self.port
        log.info("kcsim listening on %s:%d", self.config.host, self.port)
        try:
            with trio.CancelScope() as cancel:
                self._cancel = cancel
                async with trio.open_nursery() as nursery:
                    if self.durability is not None:
                        await nursery.start(self.durability.writer.run)
                    if self.broker.groups is not None:
                        nursery.start_soon(self._timer)
                    nursery.start_soon(self._reap_idle)
                    task_status.started(self.port)
                    await trio.serve_listeners(self._connection, listeners,
                                               handler_nursery=nursery)
        finally:
            with trio.CancelScope(shield=True):
                await self._close_storage()
            self.stopped.set()

    async def _close_storage(self) -> None:
        for listener in self._listeners:
            await listener.aclose()
        self.broker.topics.close()
        if self.durability is not None:
            await self.durability.writer.aclose()
            self.durability.close()
            self.durability = None

    # -- timer --------------------------------------------------------------

    def wake_timer(self) -> None:
        """Re-arm the timer if the coordinator now has an earlier deadline."""
        scope = self._timer_scope
        if scope is None:
            return
        deadline = self.broker.groups.next_deadline()
        if deadline is not None and deadline != self._armed_ms:
            self._armed_ms = deadline
            at = self._to_trio(deadline)
            if at < scope.deadline:
                scope.deadline = at

    def _to_trio(self, ms: int) -> float:
        assert self._trio_start is not None
        return self._trio_start + (ms - self._epoch_ms) / 1000.0

    async def _timer(self) -> None:
        groups = self.broker.groups
        while True:
            deadline = groups.next_deadline()
            with trio.CancelScope() as scope:
                scope.deadline = self._to_trio(deadline) if deadline is not None else float("inf")
                self._armed_ms = deadline
                self._timer_scope = scope
                await trio.sleep_forever()
            self._timer_scope = None
            await self.broker.deliver(groups.tick(self.now_ms()))

    # -- connections --------------------------------------------------------

    async def _connection(self, stream: trio.SocketStream) -> None:
        if self.connections >= self.config.max_connections:
            log.warning("connection refused: %d connections already open", self.connections)
            await stream.aclose()
            return
        self.connections += 1
        sock = DirectSocket(stream)
        host = sock.peer_host()
        conn = _Connection(trio.current_time())
        self._open.add(conn)
        try:
            with conn.scope:
                await self._serve_stream(sock, host, conn)
            if conn.scope.cancelled_caught:
                log.info("closing connection from %s idle for %d ms", host,
                         self.config.idle_timeout_ms)
        except ProtocolViolation as exc:
            log.warning("closing connection from %s: %s", host, exc)
        except ConnectionAbort:
            pass
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            # The peer reset, vanished or timed out: this connection ends, no other.
            log.debug("connection from %s ended: %r", host, exc)
        finally:
            self._open.discard(conn)
            self.connections -= 1
            sock.close()

    async def _reap_idle(self) -> None:
        """Close connections idle longer than idle_timeout_ms (one task for all of them).

        Connections only count what they receive; the reaper notices which counts
        stood still since its last look, so a request costs no clock read."""
        idle_s = self.config.idle_timeout_ms / 1000.0
        period = min(max(idle_s / 4, 0.01), 1.0)
        while True:
            await trio.sleep(period)
            now = trio.current_time()
            for conn in list(self._open):
                if conn.received != conn.seen or conn.waiting:
                    conn.seen = conn.received
                    conn.quiet_since = now
                elif now - conn.quiet_since >= idle_s:
                    conn.scope.cancel()

    async def _serve_stream(self, stream: DirectSocket, host: str, conn: _Connection) -> None:
        broker = self.broker
        max_frame = self.config.max_frame_bytes
        unpack = _SIZE.unpack_from
        pending: bytes | bytearray = b""  # an incomplete frame carried over to the next receive
        while True:
            data = await stream.receive(_RECV)
            if not data:
                return
            conn.received += 1
            if pending:
                pending += data
                data = pending  # type: ignore[assignment]
            view = memoryview(data)
            pos = 0
            end = len(data)
            out: list[bytes | bytearray] = []
            records: list[Any] = []  # of answers in `out` not yet durable
            released: list[Any] = []
            violation: ProtocolViolation | None = None
            while end - pos >= 4:
                (size,) = unpack(data, pos)
                if size < 0 or size > max_frame:
                    violation = ProtocolViolation(
                        f"frame of {size} bytes is outside 0..{max_frame} (max_frame_bytes)")
                    break
                if end - pos - 4 < size:
                    break
                frame = view[pos + 4 : pos + 4 + size]
                pos += 4 + size
                try:
                    result = broker.process(frame, host)
                except ProtocolViolation as exc:
                    violation = exc
                    break
                if result is None:
                    continue
                kind = type(result)
                if kind is bytearray or kind is bytes:
                    out.append(result)  # type: ignore[arg-type]
                    continue
                if kind is Durable:
                    out.append(result.response)  # type: ignore[union-attr]
                    records += result.records  # type: ignore[union-attr]
                    if result.released:  # type: ignore[union-attr]
                        released += result.released  # type: ignore[union-attr]
                    continue
                await self._flush(stream, out, records, released)
                out, records, released = [], [], []
                conn.waiting = True
                try:
                    response = await result  # type: ignore[misc]
                finally:
                    conn.waiting = False
                if response is not None:
                    out.append(response)
            pending = bytearray(view[pos:]) if pos < end else b""
            if released or (records and self._persist_now is None):
                await self._flush(stream, out, records, released)
            else:  # the usual case, without a coroutine per batch
                if records:
                    self._persist_now(records)
                if out:
                    await stream.send_all(b"".join(out) if len(out) > 1 else out[0])
            if violation is not None:
                try:
                    raise violation
                finally:  # its traceback holds this frame: no cycle back through a local
                    violation = None

    async def _flush(self, stream: DirectSocket, out: list[bytes | bytearray], records: list[Any],
                     released: list[Any]) -> None:
        """Make the batch's records durable (one group commit), then answer in order."""
        if records:
            if self._persist_now is not None:
                self._persist_now(records)
            else:
                await self.broker.durable(records)
        if released:
            self.broker.release(released)
        if out:
            await stream.send_all(b"".join(out) if len(out) > 1 else out[0])


class _Connection:
    """What the idle reaper knows of a connection."""

    __slots__ = ("quiet_since", "received", "scope", "seen", "waiting")

    def __init__(self, now: float) -> None:
        self.scope = trio.CancelScope()
        self.received = 0  # receives so far
        self.seen = 0  # `received` when the reaper last saw it change
        self.quiet_since = now
        self.waiting = False  # a request is waiting for its answer: not idle
