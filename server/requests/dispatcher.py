"""The broker: turns one request frame into one `Reply`.

Sans-socket: `Broker.process(frame, peer, now_ms)` decodes the frame, routes it
by API key (the one dispatch point: version checks happen here, once), calls
the handler and encodes its answer. The peer is the connection: the client's
host, the connection's number and the listener it came through (whose address
answers advertise). The shell owns the sockets, the clock, the timer and
durability; it hands `now_ms` in and makes each reply's records durable before
sending it.

It is also where tests steer requests: after decoding, the fault rules of the
request's API (if any) may answer it otherwise (`control.faults`), and every
answered request goes into the request log (`control.request_log`).

Containment, as Kafka's request handler does it: a request that cannot be
decoded is a protocol violation (its connection is closed); a handler or
encoder that raises answers that one request with UNKNOWN_SERVER_ERROR where
the API has an error field, or closes that one connection where no answer can
be built. Either way one line is logged and every other connection is served.
"""

from __future__ import annotations

import functools
import logging
import struct
import time
from typing import TYPE_CHECKING, Any, NamedTuple

import trio

from kcsim.coordinator import Outcome, TransactionCoordinator, TxnConfig
from kcsim.coordinator.records import ProducerIdBlockKey, TransactionKey
from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.headers import (
    API_VERSIONS_KEY,
    read_client_id,
    request_header_version,
    response_header_version,
)
from kcsim.protocol.primitives import DecodeError

from .context import AfterDurable, Durable, Pending, Released, Reply, RequestContext, reply
from .control.changes import Changes
from .control.clock import Clock
from .control.faults import Faults
from .control.fields import error_codes_of, groups_of, topics_of
from .control.names import ApiNames
from .control.request_log import LOG_KEEPS as _LOG_KEEPS
from .control.request_log import RequestDigest, RequestLog
from .error_answers import NoErrorAnswer, error_answer
from .handlers import load_handlers
from .handlers.groups import handle_group_request
from .handlers.txn_endings import settle
from .topic_records import TopicKey
from .topics import TopicRegistry

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from kcsim.coordinator import GroupCoordinator
    from kcsim.storage import Record

    from .config import Config
    from .context import Peer
    from .control.faults import Fault
    from .dispatch import Route
    from .listeners import Listener
    from .offsets_activation import Activation
    from .offsets_topic import OffsetsTopic

log = logging.getLogger("kcsim.broker")

_HEAD = struct.Struct(">hhi")
_SIZE_CORR = struct.Struct(">ii")
# A cache of answers is emptied when it grows past this: requests that differ only in
# their client id (or in garbage) cannot make it hold more.
_CACHE_BYTES = 2 * 1024 * 1024
_CACHE_ENTRY_BYTES = 200  # a dict slot and two bytes objects
TRANSACTION_KEYS = frozenset({TransactionKey, ProducerIdBlockKey})


class ProtocolViolation(Exception):
    """A request Kafka would answer by closing the connection."""


class _Plan:
    """Everything needed to serve one (api key, version), resolved once."""

    __slots__ = ("cache", "cache_bytes", "cache_listener", "cache_state", "caches", "decode",
                 "encode", "flexible_response", "header_version", "name", "route", "version",
                 "wire_key")

    def __init__(self, wire_key: int, route: Route, version: int) -> None:
        api = APIS[route.api_key]
        self.wire_key = wire_key
        self.route = route
        self.version = version
        self.name = api.name
        self.header_version = request_header_version(api, version)
        self.decode = codec(route.api_key, "request").decoder(version)
        self.encode = codec(route.api_key, "response").encoder(version)
        self.flexible_response = response_header_version(api, version) >= 1
        # Answers by listener (its address is in them), then by request bytes; `cache` is
        # the table of `cache_listener`, the listener last asked for (an identity test on
        # the hot path instead of hashing a key that names the listener).
        self.caches: dict[Listener, dict[bytes, bytes]] | None = (
            {} if route.cache_state is not None else None)
        self.cache: dict[bytes, bytes] = {}
        self.cache_listener: Listener | None = None
        self.cache_state: Any = None
        self.cache_bytes = 0  # what the caches hold, counted as _CACHE_ENTRY_BYTES + keys + answers

    def answers_for(self, listener: Listener) -> dict[bytes, bytes]:
        """The cached answers of `listener`, which becomes the one kept at hand."""
        assert self.caches is not None
        cache = self.caches.get(listener)
        if cache is None:
            cache = self.caches[listener] = {}
        self.cache, self.cache_listener = cache, listener
        return cache

    def forget_answers(self) -> None:
        assert self.caches is not None
        self.caches.clear()
        self.cache, self.cache_listener = {}, None
        self.cache_bytes = 0

    def read_request(self, frame: bytes) -> tuple[str | None, Any]:
        """(client id, request) of a request frame the request log kept."""
        client_id, pos = read_client_id(frame, self.header_version)
        return client_id, self.decode(frame, pos)[0]

    def read_response(self, frame: bytes | bytearray) -> Any:
        """The response of a response frame (size prefix included) the request log kept."""
        body = bytes(frame[9:] if self.flexible_response else frame[8:])
        return codec(self.route.api_key, "response").decode(body, self.version)


class _Wiring(NamedTuple):
    """The APIs a broker serves, by the key clients send: extension APIs sit on
    configurable keys."""

    routes: dict[int, Route]
    names: ApiNames
    group_apis: tuple[int, ...]  # the group APIs fault rules name as one (not ListGroups)


@functools.cache
def _wiring(extension_keys: tuple[tuple[int, int], ...]) -> _Wiring:
    """Made once per placement of the extension APIs (wire key, declared key): every
    broker of a process so configured serves the same routes."""
    from .config import DECLARED_EXTENSION_KEYS

    declared = load_handlers()
    routes = {k: r for k, r in declared.items() if k not in DECLARED_EXTENSION_KEYS}
    for wire, key in extension_keys:
        if key in declared:
            if wire in routes:
                raise ValueError(f"pause API key {wire} collides with a Kafka API key")
            routes[wire] = declared[key]
    names = ApiNames({wire: APIS[r.api_key].name for wire, r in routes.items()})
    group_apis = tuple(wire for wire, r in sorted(routes.items())
                       if r.fn is handle_group_request and APIS[r.api_key].name != "ListGroups")
    return _Wiring(routes, names, group_apis)


class Broker:
    """Shared state of one simulated broker and the request entry point."""

    def __init__(self, config: Config, topics: TopicRegistry | None = None,
                 groups: GroupCoordinator | None = None, clock: Clock | None = None) -> None:
        self.config = config
        self.topics = topics if topics is not None else TopicRegistry()
        self.groups = groups
        self.transactions = TransactionCoordinator(
            TxnConfig(config.transaction_max_timeout_ms), self.topics)
        self._recovered = False  # transactions left ending by a restart are finished once
        self.clock = clock if clock is not None else Clock()
        from .config import extension_keys

        wiring = _wiring(tuple(extension_keys(config).items()))
        self.routes = dict(wiring.routes)  # this broker's own: tests may swap a handler
        self._plans: dict[int, _Plan] = {}
        # Requests that reached a handler, a fault rule's action or the request log so far:
        # after a batch (or a held request) that moved it the shell re-arms its timer and
        # tells watchers; answers from the cache change nothing.
        self.handled = 0
        self.data_arrived = trio.lowlevel.ParkingLot()
        self.offsets_topic: OffsetsTopic | None = None  # __consumer_offsets, set by app.build
        self.offsets_activation: Activation | None = None  # its first read fills it
        # In memory (no writer): told of each run of records once applied, as the writer's
        # `on_durable` is on disk.
        self.on_durable: Callable[[Sequence[Record]], None] | None = None
        self.now_ms = int(time.time() * 1000)  # the time of the request being handled
        self.failures = 0  # requests answered UNKNOWN_SERVER_ERROR or closed by a failure
        # What tests steer and watch (kcsim.testing): change notices, fault rules, request log.
        self.changes = Changes()
        self.faults = Faults(wiring.names, self._served_versions, config.node_id,
                             wiring.group_apis, 10 if 10 in self.routes else None,
                             self.changes.notify)
        self.fault_index = self.faults.index  # API key -> rules; empty while none is installed
        self.request_log = RequestLog(config.kept_requests, wiring.names, self.topics.topic_name)
        # Without a log (size 0) nothing is copied or read for it on any request.
        self.keeps_log = config.kept_requests > 0
        self._log = self.request_log.append
        self._seq = self.request_log.next_seq

    def _served_versions(self, wire_key: int) -> tuple[int, int]:
        route = self.routes[wire_key]
        return route.min_version, route.max_version

    # -- request entry point ------------------------------------------------

    def plan(self, api_key: int, version: int) -> _Plan | None:
        key = (api_key << 16) | (version & 0xFFFF)
        plan = self._plans.get(key)
        if plan is None:
            route = self.routes.get(api_key)
            if route is None or not route.min_version <= version <= route.max_version:
                return None
            plan = self._plans[key] = _Plan(api_key, route, version)
        return plan

    def process(self, frame: bytes | memoryview, peer: Peer, now_ms: int) -> Reply:
        """Serve one request frame (size prefix excluded) from `peer` at `now_ms`."""
        if len(frame) < 8:
            raise ProtocolViolation(f"request of {len(frame)} bytes is shorter than a header")
        api_key, version, correlation_id = _HEAD.unpack_from(frame, 0)
        plan = self._plans.get((api_key << 16) | (version & 0xFFFF)) or self.plan(api_key, version)
        if plan is None:
            if api_key == API_VERSIONS_KEY:
                # Clients probe with their newest version: answer v0 with the table.
                return reply(self.api_versions_fallback(correlation_id))
            if api_key not in self.routes:
                raise ProtocolViolation(f"unknown API key {api_key}")
            route = self.routes[api_key]
            raise ProtocolViolation(
                f"unsupported version {version} of API key {api_key} "
                f"(served: {route.min_version}-{route.max_version})")
        faults = self.fault_index  # empty while no fault rule is installed
        key = None
        if plan.caches is not None and not (faults and api_key in faults):
            state = plan.route.cache_state(self)  # type: ignore[misc]
            if state != plan.cache_state:
                plan.forget_answers()
                plan.cache_state = state
            cache = plan.cache if peer.listener is plan.cache_listener else plan.answers_for(
                peer.listener)
            key = bytes(frame[8:])
            rest = cache.get(key)
            if rest is not None:
                answer = _SIZE_CORR.pack(len(rest) + 4, correlation_id) + rest
                if self.keeps_log:
                    self.handled += 1
                    self._log((self._seq(), plan, correlation_id, peer.id, now_ms, now_ms,
                               bytes(frame), answer, 0))
                return (answer, None, None, None, None, False)
        try:
            client_id, pos = read_client_id(frame, plan.header_version)
            request, end = plan.decode(frame, pos)
        except (DecodeError, struct.error, IndexError, ValueError, UnicodeDecodeError) as exc:
            raise ProtocolViolation(f"malformed {plan.name} v{version} request: {exc}") from None
        if end > len(frame):
            raise ProtocolViolation(f"{plan.name} v{version} request is truncated")
        self.handled += 1
        ctx = RequestContext(plan.route.api_key, version, correlation_id, client_id or "",
                             peer.host, peer.listener)
        self.now_ms = now_ms
        # What the request log keeps: the frame, or what tests ask of it when it is large.
        logged = ((bytes(frame) if len(frame) <= _LOG_KEEPS else self._digest(client_id, request))
                  if self.keeps_log else None)
        if faults:
            rules = faults.get(api_key)
            if rules is not None:
                fault = rules.pick(version, ctx.client_id, request, self.topics.topic_name)
                if fault is not None:
                    return self._faulted(plan, ctx, request, logged, fault, peer.id, now_ms)
        # `_serve`, inlined: one call less on every request.
        try:
            result = plan.route.fn(self, ctx, request)
            if result is None:
                if self.keeps_log:
                    self._log((self._seq(), plan, correlation_id, peer.id, now_ms, now_ms, logged,
                               None, 0))
                return reply(None)
            kind = type(result)
            if kind is Durable:
                encoded = self.encode_response(plan, correlation_id, result.response)
                if self.keeps_log:
                    self._log((self._seq(), plan, correlation_id, peer.id, now_ms, now_ms, logged,
                               encoded if len(encoded) <= _LOG_KEEPS else error_codes_of(result.response),
                               0))
                return (encoded, result.records, result.released, None, None, False)
            if kind is Pending:
                return reply(None, result.records, result.released,
                             self._finish(plan, ctx, request, result.answer, logged, peer.id,
                                          now_ms, 0),
                             result.abandon)
            encoded = self.encode_response(plan, correlation_id, result)
        except Exception as exc:  # a bug in one handler answers one request
            return reply(self._failed(plan, ctx, request, exc, logged, peer.id, now_ms))
        if self.keeps_log:
            self._log((self._seq(), plan, correlation_id, peer.id, now_ms, now_ms, logged,
                       encoded if len(encoded) <= _LOG_KEEPS else error_codes_of(result), 0))
        if key is not None and plan.route.cache_state(self) == plan.cache_state:  # type: ignore[misc]
            if plan.cache_bytes > _CACHE_BYTES:  # full: start again
                plan.forget_answers()
            rest = plan.answers_for(peer.listener)[key] = bytes(encoded[8:])
            plan.cache_bytes += _CACHE_ENTRY_BYTES + len(key) + len(rest)
        return (encoded, None, None, None, None, False)

    def _serve(self, plan: _Plan, ctx: RequestContext, request: Any, logged: Any,
               connection: int, received_ms: int, fault: int) -> Reply:
        """Call the handler and encode its answer: `process` does the same inline; this is
        the way on for a request a fault rule let through (after a delay, say)."""
        correlation_id = ctx.correlation_id
        try:
            result = plan.route.fn(self, ctx, request)
            if result is None:
                if self.keeps_log:
                    self._log((self._seq(), plan, correlation_id, connection, received_ms,
                               self.now_ms, logged, None, fault))
                return reply(None)
            kind = type(result)
            if kind is Durable:
                result, records, released = result.response, result.records, result.released
            elif kind is Pending:
                return reply(None, result.records, result.released,
                             self._finish(plan, ctx, request, result.answer, logged, connection,
                                          received_ms, fault),
                             result.abandon)
            else:
                records = released = None
            encoded = self.encode_response(plan, correlation_id, result)
        except Exception as exc:
            return reply(self._failed(plan, ctx, request, exc, logged, connection, received_ms))
        if self.keeps_log:
            self._log((self._seq(), plan, correlation_id, connection, received_ms, self.now_ms,
                       logged, encoded if len(encoded) <= _LOG_KEEPS else error_codes_of(result),
                       fault))
        return reply(encoded, records, released)

    def _digest(self, client_id: str | None, request: Any) -> RequestDigest:
        return RequestDigest(client_id, groups_of(request),
                             tuple(dict.fromkeys(t for t, _ in topics_of(
                                 request, self.topics.topic_name) if t)))

    async def _finish(self, plan: _Plan, ctx: RequestContext, request: Any,
                      answer: Awaitable[Any], logged: Any, connection: int, received_ms: int,
                      fault: int) -> bytearray | None:
        try:
            response = await answer
            encoded = None if response is None else self.encode_response(
                plan, ctx.correlation_id, response)
        except Exception as exc:
            return self._failed(plan, ctx, request, exc, logged, connection, received_ms)
        if self.keeps_log:
            self._log((self._seq(), plan, ctx.correlation_id, connection, received_ms,
                       self.clock.now_ms(), logged,
                       encoded if encoded is None or len(encoded) <= _LOG_KEEPS
                       else error_codes_of(response), fault))
        return encoded

    def _failed(self, plan: _Plan, ctx: RequestContext, request: Any, exc: Exception,
                logged: Any, connection: int, received_ms: int) -> bytearray:
        """Log one line for a request whose handling raised, and build its error answer."""
        self.failures += 1
        what = f"{plan.name} v{plan.version} from client {ctx.client_id!r} at {ctx.client_host}"
        log.error("%s failed: %s: %s", what, type(exc).__name__, exc)
        log.debug("%s failed", what, exc_info=exc)
        try:
            response = error_answer(self, plan.route.api_key, plan.version, request,
                                    ErrorCode.UNKNOWN_SERVER_ERROR)
            encoded = self.encode_response(plan, ctx.correlation_id, response)
        except NoErrorAnswer:
            raise ProtocolViolation(f"{what} failed and {plan.name} has no error field "
                                    "to answer it with") from None
        except Exception as again:
            raise ProtocolViolation(f"{what} failed, and so did its error answer: "
                                    f"{type(again).__name__}: {again}") from None
        if self.keeps_log:
            self._log((self._seq(), plan, ctx.correlation_id, connection, received_ms, self.now_ms,
                       logged, encoded, 0))
        return encoded

    # -- faults ---------------------------------------------------------------

    def _faulted(self, plan: _Plan, ctx: RequestContext, request: Any, logged: Any,
                 fault: Fault, connection: int, received_ms: int) -> Reply:
        """Answer a request a fault rule fired on: at once, or later (latency, hold, never)."""
        if fault.waits:
            return reply(None, pending=self._later(plan, ctx, request, logged, fault, connection,
                                                   received_ms))
        return self._act(plan, ctx, request, logged, fault, connection, received_ms)

    async def _later(self, plan: _Plan, ctx: RequestContext, request: Any, logged: Any,
                     fault: Fault, connection: int, received_ms: int) -> Reply:
        if fault.latency_s:
            await trio.sleep(fault.latency_s)
        if fault.hold:
            await self.faults.hold(fault)
        if fault.no_answer:
            await trio.sleep_forever()
        self.now_ms = self.clock.now_ms()
        return self._act(plan, ctx, request, logged, fault, connection, received_ms)

    def _act(self, plan: _Plan, ctx: RequestContext, request: Any, logged: Any, fault: Fault,
             connection: int, received_ms: int) -> Reply:
        """What the rule does once any wait is over: an error answer, a closed connection,
        or the request served as usual (closing the connection after, if the rule says so)."""
        self.handled += 1  # acted on (again, after a wait): the shell re-arms and notifies
        if fault.close == "before":
            if self.keeps_log:
                self._log((self._seq(), plan, ctx.correlation_id, connection, received_ms,
                           self.now_ms, logged, None, fault.id))
            return reply(None, close=True)
        if fault.error is not None:
            try:
                response = error_answer(self, plan.route.api_key, plan.version, request,
                                        fault.error)
            except NoErrorAnswer:
                raise ProtocolViolation(f"fault rule {fault.id}: {plan.name} has no error field; "
                                        "closing the connection instead") from None
            encoded = self.encode_response(plan, ctx.correlation_id, response)
            if self.keeps_log:
                self._log((self._seq(), plan, ctx.correlation_id, connection, received_ms,
                           self.now_ms, logged, encoded, fault.id))
            answer = reply(encoded)
        else:
            answer = self._serve(plan, ctx, request, logged, connection, received_ms, fault.id)
        if fault.close == "after":
            frame, records, released, pending, abandon, _ = answer
            return (frame, records, released, pending, abandon, True)
        return answer

    @staticmethod
    def encode_response(plan: _Plan, correlation_id: int, response: Any) -> bytearray:
        """The response frame, size prefix included (not copied into bytes: it is only sent)."""
        out = bytearray(_SIZE_CORR.pack(0, correlation_id))
        if plan.flexible_response:
            out += b"\x00"
        plan.encode(response, out)
        struct.pack_into(">i", out, 0, len(out) - 4)
        return out

    def api_versions_fallback(self, correlation_id: int) -> bytes:
        cls = codec(API_VERSIONS_KEY, "response").cls
        body = codec(API_VERSIONS_KEY, "response").encode(
            cls(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=self.advertised_versions(cls)), 0)
        return _SIZE_CORR.pack(len(body) + 4, correlation_id) + body

    def advertised_versions(self, cls: Any) -> list[Any]:
        return [
            cls.ApiVersion(api_key=wire, min_version=r.min_version, max_version=r.max_version)
            for wire, r in sorted(self.routes.items())
        ]

    # -- state changes ------------------------------------------------------

    def apply(self, record: Record) -> None:
        """The one path every durable change takes, live and at replay."""
        kind = type(record.key)
        if kind is TopicKey:
            self.topics.apply(record)
        elif kind in TRANSACTION_KEYS:
            self.transactions.apply(record)
        elif self.groups is not None:
            self.groups.apply(record)

    def apply_all(self, records: Sequence[Record]) -> None:
        """`apply` for each record, in order; runs of group records go to the coordinator in
        one call each, as live writes do (replay reads the log in such slices)."""
        groups = self.groups
        run = 0
        for i, record in enumerate(records):
            kind = type(record.key)
            if kind is TopicKey or kind in TRANSACTION_KEYS:
                if groups is not None and run < i:
                    groups.apply_all(records[run:i])
                self.apply(record)
                run = i + 1
        if groups is not None and run < len(records):
            groups.apply_all(records[run:] if run else records)
    # -- time: the coordinators' deadlines ------------------------------------

    def next_deadline(self) -> int | None:
        """The earliest time the shell should tick at (0: at once)."""
        if not self._recovered:
            return 0
        txn = self.transactions.deadlines.earliest_ms
        groups = self.groups.next_deadline() if self.groups is not None else None
        if txn is None or groups is None:
            return groups if txn is None else txn
        return min(txn, groups)

    def tick(self, now_ms: int) -> Outcome:
        """Fire what is due at `now_ms` in both coordinators: the groups' outcome, with the
        records of transactions that ended (timed out, or left ending by a restart) and,
        among the answers it releases once they are durable, the writing of their markers."""
        self.now_ms = now_ms
        outcome = self.groups.tick(now_ms) if self.groups is not None else Outcome()
        txn = self.transactions.tick(now_ms)
        if not self._recovered:
            self._recovered = True
            recovered = self.transactions.recover()
            for ending in recovered.endings:
                ending.position += len(txn.records)
            txn.records += recovered.records
            txn.endings += recovered.endings
        records, after = settle(self, txn, now_ms)
        outcome.records += records
        if after is not None:
            outcome.responses.append((AfterDurable(after), None))
        return outcome

    def change(self, records: list[Record], response: Any) -> Any:
        """Apply a handler's records, last thing before it returns, and answer once durable.

        Handlers of the broker's own state compute every record first and apply
        them here, so a handler that fails half-way has changed nothing."""
        if not records:
            return response
        for record in records:
            self.apply(record)
        return Durable(response, records, [])

    @staticmethod
    def release(responses: Released) -> None:
        """Hand answers to the requests waiting for them (and run the steps that waited for
        the same records to be durable)."""
        for token, response in responses:
            if type(token) is AfterDurable:
                token.step()
                continue
            token.response = response
            if token.waiter is not None:
                token.waiter.set()



