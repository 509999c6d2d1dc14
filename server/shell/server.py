"""The trio shell: listeners, one task per connection, the coordinators' timer.

The shell owns everything that is not pure: the sockets, the clock (`clock`,
which tests may advance, freeze and resume), the timer that ticks both
coordinators (`timer`), and durability. The request layer (`Server.broker`, a Dispatcher)
turns each request frame into an answer; the shell makes a reply's records durable
(one group commit for every answer it has in hand), then sends. After every batch that reached a handler
(answers from the response cache change nothing) and every tick it tells
waiting tests that the state may have changed.

Like a Kafka broker, a connection's requests are served in order: every
complete frame already received is processed, their responses are sent
together (so pipelined clients get one write), and a request whose answer
must wait (a long poll, a rebalance) holds the connection's later requests
behind it. Answers that only wait for their records to be durable do not:
the records of all of them are made durable in one group commit, then the
answers go out in order.

Nothing is read from a connection while its answers wait to be sent, and no
more than UNSENT_BOUND bytes of answers are built before they are sent: a
client that sends requests but never reads stalls its own connection (as Kafka
mutes its channel) instead of growing the server's memory.
"""

from __future__ import annotations

import errno
import logging
import os
import struct
from typing import TYPE_CHECKING, Any

import trio

from kcsim.storage import StorageError

from ..listeners import SASL_PROTOCOLS, TLS_PROTOCOLS
from ..maintenance import LogMaintenance
from ..requests import (
    Close,
    Peer,
    ProtocolViolation,
    Reply,
    Session,
    start_authentication,
    withdraw,
)
from ..tls import ANONYMOUS
from . import reactor as reactor_mod
from .nodes import NodeListeners
from .socket_io import RECV_BYTES as _RECV
from .socket_io import UNSENT_BOUND, ConnectionAbort, DirectSocket
from .timer import Timer
from .tls_stream import HandshakeFailed, TlsStream, handshake

if TYPE_CHECKING:
    from kcsim.coordinator import Outcome
    from kcsim.storage import Record

    from ..config import Config
    from ..durability import Durability
    from ..listeners import Listener, ListenerPlan
    from ..requests import Dispatcher
    from ..state.answers import Released
    from ..tls import Tls
    from .clock import Clock

log = logging.getLogger("kcsim.server")

_SIZE = struct.Struct(">i")

# accept(2) failing for want of descriptors or kernel memory: the server is full,
# not broken. Retry after a pause; say so at most once per ACCEPT_LOG_INTERVAL_S.
_ACCEPT_CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
ACCEPT_RETRY_S = 0.1
ACCEPT_LOG_INTERVAL_S = 1.0


class Server:
    """A kcsim broker bound to a TCP port."""

    def __init__(self, config: Config, broker: Dispatcher, clock: Clock,
                 durability: Durability | None = None, tls: Tls | None = None) -> None:
        self.config = config
        self.broker = broker  # the request layer's face: `process`, and what tests steer
        self.state = broker.state  # what the timer ticks and answers are released by
        self.clock = clock  # one clock: the state reads it for long polls
        self.durability = durability
        # Records go through the writer; its policy alone decides whether to wait.
        self._writer = durability.writer if durability is not None else None
        self.port: int | None = None  # the first listener's, once bound
        self.advertised: tuple[Listener, ...] = ()  # each listener's address for clients, once bound
        self.connections = 0
        self.timer = Timer(self.state, clock, self._durable, broker.changes.notify)
        # Retention and the log cleaner, on their own timer by the same clock.
        self.maintenance = LogMaintenance(self.state, clock, broker.changes.notify)
        self._listeners: list[trio.SocketListener] = []
        self.exit_code = 0
        self.stopped = trio.Event()
        self._cancel: trio.CancelScope | None = None
        self._open: set[_Connection] = set()
        self._accepted = 0
        self._nursery: trio.Nursery | None = None
        self.tls = tls  # the SSL listeners' context and generated CA (None: no SSL listener)
        self._tls_listeners = frozenset(
            p.name for p in config.listener_plans if p.protocol in TLS_PROTOCOLS)
        self._sasl_listeners = frozenset(
            p.name for p in config.listener_plans if p.protocol in SASL_PROTOCOLS)
        # Plaintext connections answered at once are served in passes (`reactor`).
        self.reactor: reactor_mod.Reactor | None = None
        self._nodes = NodeListeners(self.state.topology)  # with --brokers N: each node's

    @property
    def ssl_ca_file(self) -> str | None:
        """The CA kcsim made for its SSL listeners (PEM), for clients to trust."""
        return None if self.tls is None else self.tls.ca_file

    # -- durability: the one way an answer waits for its records ----------------

    def _durable_now(self, records: list[Record]) -> bool:
        """Hand records to the writer; True when they are already durable as the
        fsync policy defines it (nothing to wait for), False when `_durable` must wait."""
        writer = self._writer
        if writer is None:
            on_durable = self.state.on_durable
            if on_durable is not None and records:
                on_durable(records)
            return True
        try:
            return writer.commit_nowait(records)
        except StorageError as exc:
            self.fatal(exc)
            raise ConnectionAbort(f"storage failed: {exc}") from None

    def record(self, records: list[Record]) -> None:
        """Records made outside any request (a test control's SCRAM user): applied, and
        handed to the writer as an answer's are: written to the OS before this returns
        (--fsync interval or never), or by the writer's next group commit (always)."""
        for record in records:
            self.state.apply(record)
        if not self._durable_now(records) and self._nursery is not None:
            self._nursery.start_soon(self._commit, records)

    async def _commit(self, records: list[Record]) -> None:
        """The writer's group commit of records no answer waits for."""
        assert self._writer is not None
        try:
            await self._writer.commit(records)
        except StorageError as exc:
            self.fatal(exc)

    async def _durable(self, records: list[Record]) -> None:
        """Return once records are durable: the group commit every answer goes through."""
        if not records or self._durable_now(records):
            return
        assert self._writer is not None
        try:
            await self._writer.commit(records)
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
        """The broker's time (see `clock`): what every deadline is measured against."""
        return self.clock.now_ms()

    async def _bind(self) -> list[tuple[trio.SocketListener, Listener]]:
        """Open every listener's sockets, each node's when there are several; each socket
        is paired with the address it advertises."""
        bound = []
        advertised = []
        topology = self.state.topology
        nodes = enumerate(self.config.node_ids) if topology is not None else [(0, -1)]
        for index, node in nodes:
            for plan in self.config.listener_plans:
                node_bound = await self._bind_plan(plan.for_node(index), node)
                advertised.append(node_bound[0][1])
                bound += node_bound
        self.advertised = tuple(advertised)
        self.port = bound[0][0].socket.getsockname()[1]
        return bound

    async def _bind_plan(self, plan: ListenerPlan,
                         node: int) -> list[tuple[trio.SocketListener, Listener]]:
        sockets = await trio.open_tcp_listeners(plan.port, host=plan.host or None)
        self._listeners += sockets
        port = sockets[0].socket.getsockname()[1]
        address = plan.advertise(port, node)
        if node >= 0:
            self._nodes.bound(node, address, sockets)
            log.info("node %d listening on %s:%d as %s, advertised as %s:%d", node,
                     plan.host or "*", port, plan.name, address.host, address.port)
        else:
            log.info("kcsim listening on %s:%d as %s, advertised as %s:%d", plan.host or "*",
                     port, plan.name, address.host, address.port)
        return [(sock, address) for sock in sockets]

    async def serve(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Listen and serve until cancelled; reports the first bound port through task_status."""
        try:
            bound = await self._bind()
            with trio.CancelScope() as cancel:
                self._cancel = cancel
                async with trio.open_nursery() as nursery:
                    self._nursery = nursery
                    self.clock.start(self._clock_changed)
                    if self._writer is not None:
                        await nursery.start(self._writer.run)
                    # The first tick, before the first request: groups read back from the
                    # log start their timers, transactions a restart left ending finish.
                    await self.timer.tick()
                    nursery.start_soon(self.timer.run)
                    nursery.start_soon(self._reap_idle)
                    nursery.start_soon(self.maintenance.run)
                    if self.state.offsets_topic is not None:
                        nursery.start_soon(self.state.offsets_topic.run_compactions)
                    if reactor_mod.AVAILABLE and self.config.batch_connections:
                        self.reactor = reactor_mod.Reactor(self)
                        nursery.start_soon(self.reactor.run)
                    for listener, address in bound:
                        self._start_accepting(listener, address, nursery)
                    task_status.started(self.port)
                    if self._writer is not None:  # ready: a log left dirty is compacted now
                        self._writer.check_compaction()
        finally:
            self._nursery = None
            if self.reactor is not None:
                self.reactor.close()
                self.reactor = None
            self.clock.stop()
            with trio.CancelScope(shield=True):
                await self._close_storage()
            self.stopped.set()

    async def _close_storage(self) -> None:
        for listener in self._listeners:
            await listener.aclose()
        if self.tls is not None:
            self.tls.close()
        durability = self.durability
        if durability is not None:
            await durability.writer.aclose()
            durability.writer.on_durable = None
            if durability.writer.failure is None and durability.checkpointer is not None:
                try:  # __consumer_offsets holds every record: the next start reads nothing
                    durability.checkpointer.write(sync=True)
                except (OSError, StorageError) as exc:
                    log.warning("could not checkpoint __consumer_offsets: %s", exc)
        self.state.topics.close()
        if durability is not None:
            durability.close()
            self.durability = None

    # -- the clock moved --------------------------------------------------------

    def _clock_changed(self) -> None:
        """A test advanced, froze or resumed the clock: fire every deadline now due (in
        order, each at its own time), re-arm the timer, wake long polls to look again."""
        if self._nursery is not None:
            outcome = self.timer.due()
            try:
                durable = self._durable_now(outcome.records) if outcome.records else True
            except ConnectionAbort:  # storage failed: the server is stopping
                return
            if durable:
                self.state.release(outcome.responses)
            else:
                self._nursery.start_soon(self._release_when_durable, outcome)
            self.timer.rearm(force=True)
            self.maintenance.rearm()
        self.state.data_arrived.unpark_all()
        self.broker.changes.notify()

    async def _release_when_durable(self, outcome: Outcome) -> None:
        assert self._writer is not None
        try:
            await self._writer.commit(outcome.records)
        except StorageError as exc:
            self.fatal(exc)
            return
        self.state.release(outcome.responses)
        self.broker.changes.notify()

    # -- nodes, when this kcsim plays several brokers ----------------------------

    def _start_accepting(self, listener: trio.SocketListener, address: Listener,
                         nursery: trio.Nursery) -> None:
        if address.node < 0:
            nursery.start_soon(self._accept, listener, address, nursery)
        else:
            nursery.start_soon(self._accept_for_node, listener, address, nursery)

    async def _accept_for_node(self, listener: trio.SocketListener, address: Listener,
                               nursery: trio.Nursery) -> None:
        with self._nodes.scope(address.node):
            try:
                await self._accept(listener, address, nursery)
            except trio.ClosedResourceError:  # the node stopped under it
                return

    def stop_node(self, node: int) -> None:
        """The node goes down: its leaderships move (the topology), its listeners close and
        its connections drop, as a broker's would."""
        topology = self.state.topology
        if topology is None:
            raise ValueError("one broker: there is no node to stop (--brokers)")
        topology.stop(node, self.clock.now_ms())
        for sock in self._nodes.close(node):
            self._listeners.remove(sock)
            sock.socket.close()
        for conn in list(self._open):
            if conn.listener.node == node:
                conn.scope.cancel()
        self.broker.changes.notify()

    def start_node(self, node: int) -> None:
        """The node is back: its listeners bound again on the same ports, its preferred
        leaderships back to it."""
        topology = self.state.topology
        if topology is None or self._nursery is None:
            raise ValueError("one broker, or not served: there is no node to start")
        if topology.is_live(node):
            return
        for sock, address in self._nodes.rebind(node):
            self._listeners.append(sock)
            self._start_accepting(sock, address, self._nursery)
        topology.start(node, self.clock.now_ms())
        self.broker.changes.notify()

    # -- connections --------------------------------------------------------

    async def _accept(self, listener: trio.SocketListener, address: Listener,
                      nursery: trio.Nursery) -> None:
        """Start a task per accepted connection, which remembers the listener it came
        through; when descriptors run out, keep serving the open connections and
        accept again once some close."""
        failed = 0  # accepts failed since the last one that worked
        logged_at = -ACCEPT_LOG_INTERVAL_S
        while True:
            try:
                stream = await listener.accept()
            except OSError as exc:
                if exc.errno not in _ACCEPT_CAPACITY_ERRNOS:
                    raise
                failed += 1
                now = trio.current_time()
                if now - logged_at >= ACCEPT_LOG_INTERVAL_S:
                    logged_at = now
                    log.warning("cannot accept connections: %s (%d connections open); "
                                "retrying every %d ms", os.strerror(exc.errno), self.connections,
                                ACCEPT_RETRY_S * 1000)
                await trio.sleep(ACCEPT_RETRY_S)
                continue
            if failed:
                log.info("accepting connections again after %d failed attempts", failed)
                failed = 0
            nursery.start_soon(self._connection, stream, address)

    async def _connection(self, stream: trio.SocketStream, address: Listener) -> None:
        limit = self.config.max_connections
        if limit and self.connections >= limit:
            log.warning("connection refused: %d connections already open", self.connections)
            await stream.aclose()
            return
        self.connections += 1
        self._accepted += 1
        sock: DirectSocket | TlsStream
        principal = ANONYMOUS
        if address.name in self._tls_listeners:
            tls = await self._handshake(stream, address)
            if tls is None:
                return
            sock, principal = tls, tls.principal
            host = _peer_host(stream)
        else:
            sock = DirectSocket(stream)
            host = sock.peer_host()
        conn = _Connection(host, self._accepted, address, trio.current_time(), principal)
        self._open.add(conn)
        if address.node >= 0 and not self._nodes.live(address.node):
            conn.scope.cancel()  # accepted as its node stopped: it drops with the others
        try:
            with conn.scope:
                carry: bytes | bytearray = b""
                if address.name in self._sasl_listeners:
                    authenticated = await self._authenticate(sock, conn)
                    if authenticated is None:
                        return
                    principal = conn.principal
                    carry = authenticated
                if principal != ANONYMOUS and self.broker.keeps_log:
                    self.broker.request_log.connected(conn.id, principal)
                if (self.reactor is not None and isinstance(sock, DirectSocket) and not carry
                        and conn.session is None):
                    await self._serve_parked(sock, conn)
                else:
                    await self._serve_stream(sock, conn, carry)
            if conn.scope.cancelled_caught:
                log.info("closing connection from %s idle for %d ms", host,
                         self.config.idle_timeout_ms)
        except ProtocolViolation as exc:
            log.warning("closing connection from %s: %s", host, exc)
        except ConnectionAbort as exc:
            if str(exc):
                log.debug("closing connection %d from %s: %s", conn.id, host, exc)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            # The peer reset, vanished or timed out: this connection ends, no other.
            log.debug("connection from %s ended: %r", host, exc)
        except Exception as exc:  # a bug in the shell: this connection ends, no other
            log.error("closing connection from %s after an internal error: %s: %s", host,
                      type(exc).__name__, exc)
            log.debug("internal error on a connection from %s", host, exc_info=exc)
        finally:
            self._open.discard(conn)
            self.connections -= 1
            sock.close()
            if principal != ANONYMOUS:
                self.broker.request_log.disconnected(conn.id)

    async def _authenticate(self, sock: DirectSocket | TlsStream,
                            conn: _Connection) -> bytes | bytearray | None:
        """A SASL listener's connection until it has authenticated: its frames go to its
        authenticator (`requests/authenticator.py`), which answers them. Returns what was
        received after the last frame of the exchange (b"" usually), with the principal
        in `conn.principal`; None once the connection failed and is to be closed: after
        Kafka's failed-authentication delay (real time) and the answer Kafka sends, if any."""
        authenticator = start_authentication(self.broker, conn)
        limit = self.config.sasl_server_max_receive_size
        data = bytearray()
        while True:
            while len(data) >= 4:
                (size,) = _SIZE.unpack_from(data, 0)
                if size < 0 or size > limit:
                    await self._refuse_authentication(
                        sock, conn, None, f"SASL frame of {size} bytes is outside 0..{limit} "
                        "(sasl_server_max_receive_size)")
                    return None
                if len(data) - 4 < size:
                    break
                frame = bytes(data[4:4 + size])
                del data[:4 + size]
                step = authenticator.receive(frame, self.clock.now_ms())
                if step.close is not None:
                    await self._refuse_authentication(
                        sock, conn, step.answer, step.reason,
                        delayed=step.close is Close.AFTER_DELAY)
                    return None
                if step.answer:
                    await sock.send_all(step.answer)
                if authenticator.principal is not None:
                    conn.principal = authenticator.principal
                    if authenticator.session_expires_ms is not None:
                        conn.session = Session(self.broker, authenticator)
                    log.debug("connection %d from %s authenticated as %s with SASL/%s",
                              conn.id, conn.host, conn.principal, authenticator.mechanism_name)
                    return data
            received = await sock.receive(_RECV)
            if not received:
                return None
            conn.received += 1
            data += received

    async def _refuse_authentication(self, sock: DirectSocket | TlsStream, conn: _Connection,
                                     answer: bytes | bytearray | None, reason: str, *,
                                     delayed: bool = True) -> None:
        """As Kafka ends a connection that failed to authenticate: the answer, if any, goes
        out after connection_failed_authentication_delay_ms, then the connection closes."""
        log.info("closing connection %d from %s on %s listener %s: %s", conn.id, conn.host,
                 "SASL", conn.listener.name, reason)
        if delayed and self.config.connection_failed_authentication_delay_ms:
            await trio.sleep(self.config.connection_failed_authentication_delay_ms / 1000)
        if answer:
            await sock.send_all(answer)

    async def _handshake(self, stream: trio.SocketStream, address: Listener) -> TlsStream | None:
        """An SSL listener's connection once its TLS handshake is done; None (the connection
        closed, and one line logged) when it fails or does not finish in time."""
        assert self.tls is not None
        try:
            return await handshake(stream, self.tls.context,
                                   self.config.ssl_handshake_timeout_ms / 1000)
        except HandshakeFailed as exc:
            log.warning("closing connection from %s on %s listener %s: %s", _peer_host(stream),
                        "SSL" if address.name not in self._sasl_listeners else "SASL_SSL",
                        address.name, exc)
            stream.socket.close()
            self.connections -= 1
            return None
        except BaseException:
            stream.socket.close()
            self.connections -= 1
            raise

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

    async def _serve_stream(self, stream: DirectSocket | TlsStream, conn: _Connection,
                            carry: bytes | bytearray = b"") -> None:
        """A connection's requests, in order, until it closes, in its own task. Each
        receive is a batch (`_finish_batch`); an incomplete frame is carried over to the
        next receive (`carry`: what came before, after a SASL exchange)."""
        batch = _Batch()
        data: bytes | bytearray = bytearray(carry)
        while True:
            if data:  # frames received with the end of a SASL exchange: answered now
                carry = b""
            else:
                received = await stream.receive(_RECV)
                if not received:
                    return
                conn.received += 1
                data = received
                if carry:
                    carry += received
                    data = carry
            view = memoryview(data)
            batch.start(self.clock.now_ms(), self.broker.handled)
            reply = self._answer_frames(data, view, conn, batch)
            carry = await self._finish_batch(stream, conn, batch, data, view, reply)
            data = b""

    async def _serve_parked(self, sock: DirectSocket, conn: _Connection) -> None:
        """A plaintext connection's requests, in order, until it closes: served by the
        reactor's passes while they are answered at once, by this task whenever the reactor
        hands it something to finish (see `reactor`)."""
        reactor = self.reactor
        assert reactor is not None
        while True:
            handoff = await reactor.serve(sock, conn)
            kind = type(handoff)
            if kind is reactor_mod.Unfinished:
                assert isinstance(handoff, reactor_mod.Unfinished)
                conn.carry = await self._finish_batch(sock, conn, conn.batch, handoff.data,
                                                      handoff.view, handoff.reply)
            elif kind is reactor_mod.Unsent:
                assert isinstance(handoff, reactor_mod.Unsent)
                await sock.send_all(handoff.rest)
            else:
                assert isinstance(handoff, reactor_mod.Ended)
                if handoff.error is not None:
                    try:
                        raise handoff.error
                    finally:
                        del handoff  # its error's traceback holds this frame: no cycle
                return

    async def _finish_batch(self, stream: DirectSocket | TlsStream, conn: _Connection,
                            batch: _Batch, data: bytes | bytearray, view: memoryview,
                            reply: Reply | None) -> bytes | bytearray:
        """Answer the rest of one receive's frames, `_answer_frames` having cut them up to
        `batch.pos` and returned `reply`: wait for what must wait (`_take`), make the
        answers' records durable in one group commit and send the answers in one write.
        Returns the incomplete frame left at the end, for the next receive."""
        broker = self.broker
        rearm = self.timer.rearm
        while True:
            if reply is not None:
                await self._take(reply, stream, conn, batch)
                if batch.violation is None and not batch.close:
                    reply = self._answer_frames(data, view, conn, batch)
                    continue
            elif batch.unsent > UNSENT_BOUND and batch.violation is None:
                rearm()  # send before answering more: a peer not reading stalls here
                await self._flush(stream, batch)
                batch.sent()
                reply = self._answer_frames(data, view, conn, batch)
                continue
            break
        carry = bytearray(view[batch.pos:]) if batch.pos < len(data) else b""
        # A batch answered from the cache alone, or that only waited for an answer,
        # changed nothing: no timer to re-arm, no watcher to tell.
        served = broker.handled != batch.handled
        if served:
            rearm()
        if batch.records and not self._durable_now(batch.records):
            await self._flush(stream, batch)  # the writer waits: fsync always
        else:  # the usual case, without a coroutine per batch
            answers = self._outgoing(batch)
            if answers:
                await stream.send_all(answers)
        if served:
            broker.changes.notify()
        if batch.violation is not None or batch.close:
            self._end_batch(batch)
        return carry

    def _answer_frames(self, data: bytes | bytearray, view: memoryview, conn: _Connection,
                       batch: _Batch) -> Reply | None:
        """Cut the complete frames of `data` from `batch.pos` on and answer them, gathering
        the answers that are only a frame (the usual case). Returns a Reply that needs more
        (`_take`), or None: no complete frame left, a protocol violation (`batch.violation`),
        or UNSENT_BOUND bytes of answers built and not sent."""
        session = conn.session  # a SASL session that expires: it sees each frame first
        process = self.broker.process if session is None else session.process
        max_frame = self.config.max_frame_bytes
        now = batch.now
        out = batch.out
        unsent = batch.unsent
        pos = batch.pos
        end = len(data)
        try:
            while end - pos >= 4 and unsent <= UNSENT_BOUND:
                (size,) = _SIZE.unpack_from(data, pos)
                if size < 0 or size > max_frame:
                    batch.violation = ProtocolViolation(
                        f"frame of {size} bytes is outside 0..{max_frame} (max_frame_bytes)")
                    return None
                if end - pos - 4 < size:
                    return None
                frame = view[pos + 4 : pos + 4 + size]
                pos += 4 + size
                try:
                    answer = process(frame, conn, now)
                except ProtocolViolation as exc:
                    batch.violation = exc
                    return None
                if isinstance(answer, Reply):
                    if answer.pending is not None or answer.close:
                        return answer
                    # An answer with records (a commit): gathered here, as `_take` would.
                    if answer.records:
                        batch.records += answer.records
                    if answer.released:
                        batch.released += answer.released
                    answer = answer.frame
                if answer is not None:
                    out.append(answer)
                    unsent += len(answer)
            return None
        finally:
            batch.pos = pos
            batch.unsent = unsent

    async def _take(self, reply: Reply, stream: DirectSocket | TlsStream, conn: _Connection,
                    batch: _Batch) -> None:
        """An answer with more than a frame: its records and released answers join the
        batch's; an answer that must wait (a long poll, a rebalance, a held request) is
        awaited once everything before it is sent, and the connection's later requests
        wait behind it."""
        while True:
            if reply.records:
                batch.records += reply.records
            if reply.released:
                batch.released += reply.released
            if reply.pending is None:
                batch.add(reply.frame)
                batch.close = reply.close
                return
            self.timer.rearm()
            if batch.out or batch.records or batch.released:
                try:
                    await self._flush(stream, batch)
                except BaseException:
                    withdraw(reply)
                    raise
                batch.sent()
            self.broker.changes.notify()  # the request changed the state before it parked
            batch.handled = self.broker.handled
            conn.waiting = True
            try:
                later = await reply.pending
            except ProtocolViolation as exc:
                batch.violation = exc
                return
            finally:
                conn.waiting = False
            batch.now = self.clock.now_ms()
            if not isinstance(later, Reply):
                batch.add(later)
                return
            reply = later  # a held request's Reply, served now

    @staticmethod
    def _end_batch(batch: _Batch) -> None:
        """End the connection after its answers if a request broke the protocol or a fault
        rule closes it."""
        violation = batch.violation
        if violation is not None:
            batch.violation = None  # its traceback holds this frame: no cycle through it
            try:
                raise violation
            finally:
                del violation  # nor through this frame's local
        if batch.close:
            raise ConnectionAbort("its answer closes it (a fault rule, an expired session)")

    async def _flush(self, stream: DirectSocket | TlsStream, batch: _Batch) -> None:
        """Make the batch's records durable (one group commit), then answer in order."""
        await self._durable(batch.records)
        data = self._outgoing(batch)
        if data:
            await stream.send_all(data)

    def _outgoing(self, batch: _Batch) -> bytes | bytearray | None:
        """Once the batch's records are durable: hand the answers they completed to their
        requests, and join the batch's own answers into one write."""
        if batch.released:
            self.state.release(batch.released)
        out = batch.out
        if not out:
            return None
        return b"".join(out) if len(out) > 1 else out[0]


def _peer_host(stream: trio.SocketStream) -> str:
    try:
        return str(stream.socket.getpeername()[0])
    except OSError:
        return "unknown"


class _Batch:
    """The answers of one receive's frames, gathered for one group commit and one write,
    and where answering them stands."""

    __slots__ = ("close", "handled", "now", "out", "pos", "records", "released", "unsent",
                 "violation")

    def __init__(self) -> None:
        self.violation: ProtocolViolation | None = None
        self.close = False  # a fault rule closes the connection after what is in `out`
        self.start(0, 0)

    def start(self, now: int, handled: int) -> None:
        self.now = now  # the clock, read once per batch (and after each wait)
        self.handled = handled  # requests the broker handled before this batch (or park)
        self.pos = 0  # where the next frame starts
        self.out: list[bytes | bytearray] = []
        self.unsent = 0  # bytes in `out`
        self.records: list[Record] = []  # of answers in `out`, not yet durable
        self.released: Released = []

    def sent(self) -> None:
        """What was gathered is durable and sent: gather anew."""
        self.out, self.records, self.released = [], [], []
        self.unsent = 0

    def add(self, frame: bytes | bytearray | None) -> None:
        if frame is not None:
            self.out.append(frame)
            self.unsent += len(frame)


class _Connection(Peer):
    """A connection as the broker sees it (host, number) and what the idle reaper knows."""

    __slots__ = ("batch", "carry", "handoff", "lot", "quiet_since", "received", "scope", "seen",
                 "session", "waiting")

    def __init__(self, host: str, connection_id: int, listener: Listener, now: float,
                 principal: str) -> None:
        super().__init__(host, connection_id, listener, principal)
        self.scope = trio.CancelScope()
        self.received = 0  # receives so far
        self.seen = 0  # `received` when the reaper last saw it change
        self.quiet_since = now
        self.waiting = False  # a request is waiting for its answer: not idle
        self.session: Session | None = None  # a SASL session that expires (re-authentication)
        # While the reactor serves it (`reactor`): its batch, the incomplete frame carried
        # over, where its task parks, and what the reactor hands the task.
        self.batch = _Batch()
        self.carry: bytes | bytearray = b""
        self.lot = trio.lowlevel.ParkingLot()
        self.handoff: reactor_mod.Handoff | None = None
