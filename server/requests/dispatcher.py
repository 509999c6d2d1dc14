"""The dispatcher: turns one request frame into one `Answer`.

Sans-socket: `Dispatcher.process(frame, peer, now_ms)` decodes the frame, finds its
plan by API key and version (the one dispatch point: version checks happen here,
once), calls the handler with the broker state and encodes its answer
(`_serve`, the one place that does, for every request). The peer is the connection:
the client's host, the connection's number and the listener it came through (whose
address answers advertise). The shell owns the sockets, the clock, the timer and
durability; it hands `now_ms` in and makes each reply's records durable before
sending it.

It is also where tests steer requests: after decoding, the fault rules of the
request's API (if any) may answer it otherwise (`control.faults`), and every
answered request goes into the request log (`control.request_log`). Each request
served is counted, with its time and the error codes of its answer, for the
metrics (`metrics.requests`; plain dict increments, unless `--no-metrics`).

Containment, as Kafka's request handler does it: a request that cannot be
decoded is a protocol violation (its connection is closed); a handler or
encoder that raises answers that one request with UNKNOWN_SERVER_ERROR where
the API has an error field, or closes that one connection where no answer can
be built. Either way one line is logged and every other connection is served.
"""

from __future__ import annotations

import logging
import struct
from time import monotonic, perf_counter_ns
from typing import TYPE_CHECKING, Any

import trio

from kcsim.protocol.codecs import codec
from kcsim.protocol.error_answers import NoErrorAnswer, error_answer
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.headers import API_VERSIONS_KEY, read_client_id
from kcsim.protocol.named_groups import groups_of
from kcsim.protocol.oauthbearer import ValidatorOptions, parse_scope
from kcsim.protocol.primitives import DecodeError

from ..config import mechanisms, plain_users
from ..control.changes import Changes
from ..control.faults import Faults
from ..control.fields import error_codes_of, fetch_session_of, topics_of
from ..control.request_log import LOG_KEEPS as _LOG_KEEPS
from ..control.request_log import RequestDigest, RequestLog
from ..metrics import TIME_EVERY, EventCounts
from ..state.answers import Durable, Pending
from .access import ACCESS, served
from .context import RequestContext
from .placement import placed
from .plans import Plan
from .reply import Reply
from .routes import served as served_routes

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from kcsim.protocol.compiler import CountingEncoder

    from ..control.faults import Fault
    from ..metrics.registry import BrokerMetrics
    from ..offsets.activation import Activation
    from ..state.broker_state import BrokerState
    from .context import Peer
    from .reply import Answer

log = logging.getLogger("kcsim.broker")

_HEAD = struct.Struct(">hhi")
_SIZE_CORR = struct.Struct(">ii")
_new_tuple = tuple.__new__
_REPLY_TAIL = tuple(Reply._field_defaults[name] for name in Reply._fields[3:])  # after `released`


class ProtocolViolation(Exception):
    """A request Kafka would answer by closing the connection."""


class Dispatcher:
    """The request entry point of one broker (what the shell serves as `Server.broker`)."""

    def __init__(self, state: BrokerState) -> None:
        config = state.config
        self.state = state
        # What readers of the broker (tests, the controls) reach through it.
        self.config = config
        self.topics = state.topics
        self.groups = state.groups
        self.transactions = state.transactions
        self.data_arrived = state.data_arrived
        self.served = served_routes(config)
        self.routes = dict(self.served.routes)  # this broker's own: tests may swap a handler
        if state.topology is not None:  # several brokers: requests at the wrong node
            self.routes = placed(self.routes)
        self._plans: dict[int, Plan] = {}
        # Requests that reached a handler, a fault rule's action or the request log so far:
        # after a batch (or a held request) that moved it the shell re-arms its timer and
        # tells watchers; answers from the cache change nothing.
        self.handled = 0
        self.failures = 0  # requests answered UNKNOWN_SERVER_ERROR or closed by a failure
        # What tests steer and watch (kcsim.testing): change notices, fault rules, request log.
        self.changes = Changes()
        self.faults = Faults(self.served.names, self._served_versions, config.node_id,
                             self.served.group_apis, 10 if 10 in self.routes else None,
                             self.changes.notify)
        self.fault_index = self.faults.index  # API key -> rules; empty while none is installed
        self.request_log = RequestLog(config.kept_requests, self.served.names,
                                      self.topics.topic_name)
        # Without a log (size 0) nothing is copied or read for it on any request.
        self.keeps_log = config.kept_requests > 0
        self._log = self.request_log.append
        self._seq = self.request_log.next_seq
        # Requests, their time and errors (counted on their plans), and events by kind: read
        # by the metrics at scrape (`metrics`, made when first asked for).
        self.event_counts = EventCounts()
        self.counting_since = monotonic()
        self._counting = config.metrics
        if state.groups is not None:
            state.groups.events.listen(self.event_counts)
        self._metrics: BrokerMetrics | None = None
        # What SASL listeners' connections authenticate with (`authenticator.start`).
        self.sasl_mechanisms = mechanisms(config.sasl_enabled_mechanisms)
        self.sasl_plain_users = (plain_users(config.sasl_plain_users)
                                 if config.sasl_plain_users else {})
        # `--authorizer`: each request is checked (`access.py`) before its handler runs.
        self.authorizer = state.authorizer
        self.oauthbearer_options = ValidatorOptions(
            config.sasl_oauthbearer_principal_claim.strip(),
            config.sasl_oauthbearer_scope_claim.strip(),
            parse_scope(config.sasl_oauthbearer_required_scope or ""),
            config.sasl_oauthbearer_clock_skew_ms)

    @property
    def offsets_activation(self) -> Activation | None:
        return self.state.offsets_activation

    @offsets_activation.setter
    def offsets_activation(self, activation: Activation | None) -> None:
        self.state.offsets_activation = activation

    @property
    def metrics(self) -> BrokerMetrics:
        """This broker's Prometheus metrics (prometheus_client is loaded on first use)."""
        if self._metrics is None:
            from ..metrics.registry import BrokerMetrics

            self._metrics = BrokerMetrics(self.state, lambda: list(self._plans.values()),
                                          self.event_counts, self.counting_since)
        return self._metrics

    def _served_versions(self, wire_key: int) -> tuple[int, int]:
        route = self.routes[wire_key]
        return route.min_version, route.max_version

    def _now_ms(self) -> int:
        clock = self.state.clock
        assert clock is not None, "the broker is not served: it has no clock"
        return clock.now_ms()

    def log_answered(self, plan: Plan, correlation_id: int, connection: int, now_ms: int,
                     logged: Any, answer: bytes | bytearray) -> None:
        """Put a request answered outside `process` (the SASL exchange's) in the log."""
        if self.keeps_log:
            self.handled += 1
            self._log((self._seq(), plan, correlation_id, connection, now_ms, now_ms, logged,
                       answer if len(answer) <= _LOG_KEEPS else None, 0))

    # -- request entry point ------------------------------------------------

    def plan(self, api_key: int, version: int) -> Plan | None:
        key = (api_key << 16) | (version & 0xFFFF)
        plan = self._plans.get(key)
        if plan is None:
            route = self.routes.get(api_key)
            if route is None or not route.min_version <= version <= route.max_version:
                return None
            plan = self._plans[key] = Plan(api_key, route, version)
            if self.authorizer is not None and route.api_key in ACCESS:
                plan.cache_state_of = None  # answers depend on who asks
        return plan

    def process(self, frame: bytes | memoryview, peer: Peer, now_ms: int) -> Answer:
        """Serve one request frame (size prefix excluded) from `peer` at `now_ms`."""
        if len(frame) < 8:
            raise ProtocolViolation(f"request of {len(frame)} bytes is shorter than a header")
        api_key, version, correlation_id = _HEAD.unpack_from(frame, 0)
        plan = self._plans.get((api_key << 16) | (version & 0xFFFF)) or self.plan(api_key, version)
        if plan is None:
            return self._unserved(api_key, version, correlation_id)
        faults = self.fault_index  # empty while no fault rule is installed
        key = None
        cache_state_of = plan.cache_state_of
        if cache_state_of is not None and not (faults and api_key in faults):
            state = cache_state_of(self.state)
            if state != plan.cache_state:
                plan.forget_answers()
                plan.cache_state = state
            cache = plan.cache if peer.listener is plan.cache_listener else plan.answers_for(
                peer.listener)
            key = bytes(frame[8:])
            rest = cache.get(key)
            if rest is not None:
                answer = _SIZE_CORR.pack(len(rest) + 4, correlation_id) + rest
                if self._counting:
                    plan.served += 1
                if self.keeps_log:
                    self.handled += 1
                    self._log((self._seq(), plan, correlation_id, peer.id, now_ms, now_ms,
                               bytes(frame), answer, 0))
                return answer
        try:
            client_id, pos = read_client_id(frame, plan.header_version)
            request, end = plan.decode(frame, pos)
        except (DecodeError, struct.error, IndexError, ValueError, UnicodeDecodeError) as exc:
            raise ProtocolViolation(f"malformed {plan.name} v{version} request: {exc}") from None
        if end > len(frame):
            raise ProtocolViolation(f"{plan.name} v{version} request is truncated")
        self.handled += 1
        ctx = RequestContext(plan.route.api_key, version, correlation_id, client_id or "",
                             peer.host, peer.listener, peer.principal)
        self.state.now_ms = now_ms
        # What the request log keeps: the frame, or what tests ask of it when it is large.
        logged = ((bytes(frame) if len(frame) <= _LOG_KEEPS else self._digest(client_id, request))
                  if self.keeps_log else None)
        if faults:
            rules = faults.get(api_key)
            if rules is not None:
                fault = rules.pick(version, ctx.client_id, request, self.topics.topic_name)
                if fault is not None:
                    return self._faulted(plan, ctx, request, logged, fault, peer.id, now_ms)
        return self._serve(plan, ctx, request, logged, peer.id, now_ms, 0, key)

    def _serve(self, plan: Plan, ctx: RequestContext, request: Any, logged: Any,
               connection: int, received_ms: int, fault: int, key: bytes | None = None) -> Answer:
        """Call the handler and encode its answer: the one way every request is served,
        at once or once a fault rule let it through (after a delay, say). `key`: the
        request's bytes, when its answer may be cached."""
        state = self.state
        # One request in TIME_EVERY is timed (0: not this one).
        started = perf_counter_ns() if self._counting and not plan.served % TIME_EVERY else 0
        try:
            if self.authorizer is None:
                result = plan.route.fn(state, ctx, request)
            else:
                result = self._authorized(plan, ctx, request)
            if result is None:
                if self.keeps_log:
                    self._log((self._seq(), plan, ctx.correlation_id, connection, received_ms,
                               state.now_ms, logged, None, fault))
                if self._counting:
                    self._count(plan, started, None)
                return None
            kind = type(result)
            records = None
            if kind is Durable:
                response, records, released = result.response, result.records, result.released
            elif kind is Pending:
                return Reply(None, result.records, result.released,
                             self._finish(plan, ctx, request, result.answer, logged, connection,
                                          received_ms, fault, started),
                             result.abandon)
            else:
                response = result
            # Error codes below the top level are counted by the encoder as it writes them.
            encode_counting = plan.encode_counting if self._counting else None
            if encode_counting is None:
                encoded = self.encode_response(plan, ctx.correlation_id, response)
            else:
                encoded = self.encode_counted(plan, ctx.correlation_id, response, encode_counting)
        except Exception as exc:  # a bug in one handler answers one request
            return self._failed(plan, ctx, request, exc, logged, connection, received_ms, started)
        if self._counting:  # `_count`, inline: every request passes here
            plan.served += 1
            if started:
                plan.timed += 1
                plan.time_ns += perf_counter_ns() - started
            if encode_counting is None:
                counter = plan.count_errors
                if counter is None:  # one error code, at the top level
                    plan.error_fields += 1
                    if response.error_code:
                        self._count_error(plan, response.error_code)
                else:
                    plan.error_fields += counter(response, plan.errors)
        if self.keeps_log:
            self._log((self._seq(), plan, ctx.correlation_id, connection, received_ms,
                       state.now_ms, logged,
                       encoded if len(encoded) <= _LOG_KEEPS else error_codes_of(response), fault))
        if records is not None:  # Reply(encoded, records, released) without its Python __new__
            return _new_tuple(Reply, (encoded, records, released, *_REPLY_TAIL))
        if key is not None:  # a cacheable answer: kept unless the state moved meanwhile
            cache_state_of = plan.cache_state_of
            if cache_state_of is not None and cache_state_of(state) == plan.cache_state:
                plan.keep(ctx.listener, key, encoded)
        return encoded

    def _count(self, plan: Plan, started: int, response: Any) -> None:
        """Count one request answered (or dropped: `response` None), its time since
        `started` (perf_counter_ns; 0: not timed) and the error codes of its answer."""
        plan.served += 1
        if started:
            plan.timed += 1
            plan.time_ns += perf_counter_ns() - started
        if response is None:
            return
        counter = plan.count_errors
        if counter is None:
            plan.error_fields += 1
            if response.error_code:
                self._count_error(plan, response.error_code)
        else:
            plan.error_fields += counter(response, plan.errors)

    @staticmethod
    def _count_error(plan: Plan, code: int) -> None:
        plan.errors[code] = plan.errors.get(code, 0) + 1

    def _authorized(self, plan: Plan, ctx: RequestContext, request: Any) -> Any:
        """The handler's answer, as the authorizer lets the request through."""
        check = ACCESS.get(plan.route.api_key)
        if check is None:
            return plan.route.fn(self.state, ctx, request)
        assert self.authorizer is not None
        return served(check, self.authorizer, plan.route.fn, self.state, ctx, request)

    def _unserved(self, api_key: int, version: int, correlation_id: int) -> bytes:
        """A request of an API or version not served: ApiVersions answers (clients probe with
        their newest version), anything else closes the connection."""
        if api_key == API_VERSIONS_KEY:
            return self.api_versions_fallback(correlation_id)
        route = self.routes.get(api_key)
        if route is None:
            raise ProtocolViolation(f"unknown API key {api_key}")
        raise ProtocolViolation(
            f"unsupported version {version} of API key {api_key} "
            f"(served: {route.min_version}-{route.max_version})")

    def _digest(self, client_id: str | None, request: Any) -> RequestDigest:
        return RequestDigest(client_id, groups_of(request),
                             tuple(dict.fromkeys(t for t, _ in topics_of(
                                 request, self.topics.topic_name) if t)),
                             fetch_session_of(request))

    async def _finish(self, plan: Plan, ctx: RequestContext, request: Any,
                      answer: Awaitable[Any], logged: Any, connection: int, received_ms: int,
                      fault: int, started: int) -> bytearray | None:
        try:
            response = await answer
            encoded = None if response is None else self.encode_response(
                plan, ctx.correlation_id, response)
        except Exception as exc:
            return self._failed(plan, ctx, request, exc, logged, connection, received_ms,
                                started)
        if self._counting:
            self._count(plan, started, response)
        if self.keeps_log:
            self._log((self._seq(), plan, ctx.correlation_id, connection, received_ms,
                       self._now_ms(), logged,
                       encoded if encoded is None or len(encoded) <= _LOG_KEEPS
                       else error_codes_of(response), fault))
        return encoded

    def _failed(self, plan: Plan, ctx: RequestContext, request: Any, exc: Exception,
                logged: Any, connection: int, received_ms: int,
                started: int | None = None) -> bytearray:
        """Log one line for a request whose handling raised, and build its error answer."""
        self.failures += 1
        what = f"{plan.name} v{plan.version} from client {ctx.client_id!r} at {ctx.client_host}"
        log.error("%s failed: %s: %s", what, type(exc).__name__, exc)
        log.debug("%s failed", what, exc_info=exc)
        try:
            response = error_answer(plan.route.api_key, plan.version, request,
                                    ErrorCode.UNKNOWN_SERVER_ERROR)
            encoded = self.encode_response(plan, ctx.correlation_id, response)
        except NoErrorAnswer:
            raise ProtocolViolation(f"{what} failed and {plan.name} has no error field "
                                    "to answer it with") from None
        except Exception as again:
            raise ProtocolViolation(f"{what} failed, and so did its error answer: "
                                    f"{type(again).__name__}: {again}") from None
        if self.keeps_log:
            self._log((self._seq(), plan, ctx.correlation_id, connection, received_ms,
                       self.state.now_ms, logged, encoded, 0))
        if self._counting and started is not None:
            self._count(plan, started, response)
        return encoded

    # -- faults ---------------------------------------------------------------

    def _faulted(self, plan: Plan, ctx: RequestContext, request: Any, logged: Any,
                 fault: Fault, connection: int, received_ms: int) -> Answer:
        """Answer a request a fault rule fired on: at once, or later (latency, hold, never)."""
        if fault.waits:
            return Reply(None, pending=self._later(plan, ctx, request, logged, fault, connection,
                                                   received_ms))
        return self._act(plan, ctx, request, logged, fault, connection, received_ms)

    async def _later(self, plan: Plan, ctx: RequestContext, request: Any, logged: Any,
                     fault: Fault, connection: int, received_ms: int) -> Answer:
        if fault.latency_s:
            await trio.sleep(fault.latency_s)
        if fault.hold:
            await self.faults.hold(fault)
        if fault.no_answer:
            await trio.sleep_forever()
        self.state.now_ms = self._now_ms()
        return self._act(plan, ctx, request, logged, fault, connection, received_ms)

    def _act(self, plan: Plan, ctx: RequestContext, request: Any, logged: Any, fault: Fault,
             connection: int, received_ms: int) -> Answer:
        """What the rule does once any wait is over: an error answer, a closed connection,
        or the request served as usual (closing the connection after, if the rule says so)."""
        self.handled += 1  # acted on (again, after a wait): the shell re-arms and notifies
        if fault.close == "before":
            if self.keeps_log:
                self._log((self._seq(), plan, ctx.correlation_id, connection, received_ms,
                           self.state.now_ms, logged, None, fault.id))
            return Reply(None, close=True)
        answer: Answer
        if fault.error is not None:
            try:
                response = error_answer(plan.route.api_key, plan.version, request, fault.error)
            except NoErrorAnswer:
                raise ProtocolViolation(f"fault rule {fault.id}: {plan.name} has no error field; "
                                        "closing the connection instead") from None
            answer = self.encode_response(plan, ctx.correlation_id, response)
            if self.keeps_log:
                self._log((self._seq(), plan, ctx.correlation_id, connection, received_ms,
                           self.state.now_ms, logged, answer, fault.id))
        else:
            answer = self._serve(plan, ctx, request, logged, connection, received_ms, fault.id)
        if fault.close != "after":
            return answer
        if isinstance(answer, Reply):
            return answer._replace(close=True)
        return Reply(answer, close=True)

    @staticmethod
    def encode_response(plan: Plan, correlation_id: int, response: Any) -> bytearray:
        """The response frame, size prefix included (not copied into bytes: it is only sent)."""
        out = bytearray(plan.response_head)
        plan.encode(response, out)
        _SIZE_CORR.pack_into(out, 0, len(out) - 4, correlation_id)
        return out

    @staticmethod
    def encode_counted(plan: Plan, correlation_id: int, response: Any,
                       encode: CountingEncoder) -> bytearray:
        """`encode_response` by the plan's counting encoder: the answer's error codes
        counted into the plan as they are written."""
        out = bytearray(plan.response_head)
        plan.error_fields += encode(response, out, plan.errors)
        _SIZE_CORR.pack_into(out, 0, len(out) - 4, correlation_id)
        return out

    def api_versions_fallback(self, correlation_id: int) -> bytes:
        cls = codec(API_VERSIONS_KEY, "response").cls
        body = codec(API_VERSIONS_KEY, "response").encode(
            cls(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=self.served.advertised(cls)), 0)
        return _SIZE_CORR.pack(len(body) + 4, correlation_id) + body

