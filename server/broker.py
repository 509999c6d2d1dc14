"""The broker: turns one request frame into one `Reply`.

Sans-socket and clock-free: `Broker.process(frame, host, now_ms, listener)`
decodes the frame, routes it by API key (the one dispatch point: version checks happen
here, once), calls the handler and encodes its answer. The shell owns the
sockets, the clock, the timer and durability; it hands `now_ms` in and makes
each reply's records durable before sending it.

Containment, as Kafka's request handler does it: a request that cannot be
decoded is a protocol violation (its connection is closed); a handler or
encoder that raises answers that one request with UNKNOWN_SERVER_ERROR where
the API has an error field, or closes that one connection where no answer can
be built. Either way one line is logged and every other connection is served.
"""

from __future__ import annotations

import logging
import struct
import time
from typing import TYPE_CHECKING, Any

import trio

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

from .context import Durable, Pending, Released, Reply, RequestContext
from .error_answers import NoErrorAnswer, error_answer
from .handlers import load_handlers
from .topic_records import TopicKey
from .topics import TopicRegistry

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from kcsim.coordinator import GroupCoordinator
    from kcsim.storage import Record

    from .config import Config
    from .dispatch import Route
    from .listeners import Listener

log = logging.getLogger("kcsim.broker")

_HEAD = struct.Struct(">hhi")
_SIZE_CORR = struct.Struct(">ii")
_CACHE_LIMIT = 4096


class ProtocolViolation(Exception):
    """A request Kafka would answer by closing the connection."""


class _Plan:
    """Everything needed to serve one (api key, version), resolved once."""

    __slots__ = ("cache", "cache_state", "decode", "encode", "flexible_response",
                 "header_version", "name", "route", "version")

    def __init__(self, route: Route, version: int) -> None:
        api = APIS[route.api_key]
        self.route = route
        self.version = version
        self.name = api.name
        self.header_version = request_header_version(api, version)
        self.decode = codec(route.api_key, "request").decoder(version)
        self.encode = codec(route.api_key, "response").encoder(version)
        self.flexible_response = response_header_version(api, version) >= 1
        # by listener (its address is in answers) and request bytes
        self.cache: dict[tuple[Listener, bytes], bytes] | None = (
            {} if route.cache_state is not None else None)
        self.cache_state: Any = None


class Broker:
    """Shared state of one simulated broker and the request entry point."""

    def __init__(self, config: Config, topics: TopicRegistry | None = None,
                 groups: GroupCoordinator | None = None) -> None:
        self.config = config
        self.topics = topics if topics is not None else TopicRegistry()
        self.groups = groups
        self.routes = self._wire_routes(load_handlers())
        self._plans: dict[int, _Plan] = {}
        self.request_counts: dict[int, int] = {}
        self.data_arrived = trio.lowlevel.ParkingLot()
        self.now_ms = int(time.time() * 1000)  # the time of the request being handled
        self.failures = 0  # requests answered UNKNOWN_SERVER_ERROR or closed by a failure

    def _wire_routes(self, declared: dict[int, Route]) -> dict[int, Route]:
        """Routes by the key clients send: extension APIs sit on configurable keys."""
        from .config import DECLARED_EXTENSION_KEYS, extension_keys

        routes = {k: r for k, r in declared.items() if k not in DECLARED_EXTENSION_KEYS}
        for wire, key in extension_keys(self.config).items():
            if key in declared:
                if wire in routes:
                    raise ValueError(f"pause API key {wire} collides with a Kafka API key")
                routes[wire] = declared[key]
        return routes

    # -- request entry point ------------------------------------------------

    def plan(self, api_key: int, version: int) -> _Plan | None:
        key = (api_key << 16) | (version & 0xFFFF)
        plan = self._plans.get(key)
        if plan is None:
            route = self.routes.get(api_key)
            if route is None or not route.min_version <= version <= route.max_version:
                return None
            plan = self._plans[key] = _Plan(route, version)
        return plan

    def process(self, frame: bytes | memoryview, host: str, now_ms: int,
                listener: Listener) -> Reply:
        """Serve one request frame (size prefix excluded) at `now_ms`, from a client at
        `host` connected through `listener` (the address that listener advertises)."""
        if len(frame) < 8:
            raise ProtocolViolation(f"request of {len(frame)} bytes is shorter than a header")
        api_key, version, correlation_id = _HEAD.unpack_from(frame, 0)
        plan = self.plan(api_key, version)
        if plan is None:
            if api_key == API_VERSIONS_KEY:
                # Clients probe with their newest version: answer v0 with the table.
                return Reply(self.api_versions_fallback(correlation_id))
            if api_key not in self.routes:
                raise ProtocolViolation(f"unknown API key {api_key}")
            route = self.routes[api_key]
            raise ProtocolViolation(
                f"unsupported version {version} of API key {api_key} "
                f"(served: {route.min_version}-{route.max_version})")
        cache = plan.cache
        if cache is not None:
            state = plan.route.cache_state(self)  # type: ignore[misc]
            if state != plan.cache_state or len(cache) > _CACHE_LIMIT:
                cache.clear()
                plan.cache_state = state
            key = (listener, bytes(frame[8:]))
            rest = cache.get(key)
            if rest is not None:
                self.request_counts[api_key] = self.request_counts.get(api_key, 0) + 1
                return Reply(_SIZE_CORR.pack(len(rest) + 4, correlation_id) + rest)
        try:
            client_id, pos = read_client_id(frame, plan.header_version)
            request, end = plan.decode(frame, pos)
        except (DecodeError, struct.error, IndexError, ValueError, UnicodeDecodeError) as exc:
            raise ProtocolViolation(f"malformed {plan.name} v{version} request: {exc}") from None
        if end > len(frame):
            raise ProtocolViolation(f"{plan.name} v{version} request is truncated")
        self.request_counts[api_key] = self.request_counts.get(api_key, 0) + 1
        ctx = RequestContext(plan.route.api_key, version, correlation_id, client_id or "", host,
                             listener)
        self.now_ms = now_ms
        try:
            result = plan.route.fn(self, ctx, request)
            if result is None:
                return Reply(None)
            kind = type(result)
            if kind is Durable:
                return Reply(self.encode_response(plan, correlation_id, result.response),
                             result.records, result.released)
            if kind is Pending:
                return Reply(None, result.records, result.released,
                             self._finish(plan, ctx, request, result.answer), result.abandon)
            encoded = self.encode_response(plan, correlation_id, result)
        except Exception as exc:  # a bug in one handler answers one request
            return Reply(self._failed(plan, ctx, request, exc))
        if cache is not None and plan.route.cache_state(self) == plan.cache_state:  # type: ignore[misc]
            cache[key] = bytes(encoded[8:])
        return Reply(encoded)

    async def _finish(self, plan: _Plan, ctx: RequestContext, request: Any,
                      answer: Awaitable[Any]) -> bytearray | None:
        try:
            response = await answer
            if response is None:
                return None
            return self.encode_response(plan, ctx.correlation_id, response)
        except Exception as exc:
            return self._failed(plan, ctx, request, exc)

    def _failed(self, plan: _Plan, ctx: RequestContext, request: Any,
                exc: Exception) -> bytearray:
        """Log one line for a request whose handling raised, and build its error answer."""
        self.failures += 1
        what = f"{plan.name} v{plan.version} from client {ctx.client_id!r} at {ctx.client_host}"
        log.error("%s failed: %s: %s", what, type(exc).__name__, exc)
        log.debug("%s failed", what, exc_info=exc)
        try:
            response = error_answer(self, plan.route.api_key, plan.version, request,
                                    ErrorCode.UNKNOWN_SERVER_ERROR)
            return self.encode_response(plan, ctx.correlation_id, response)
        except NoErrorAnswer:
            raise ProtocolViolation(f"{what} failed and {plan.name} has no error field "
                                    "to answer it with") from None
        except Exception as again:
            raise ProtocolViolation(f"{what} failed, and so did its error answer: "
                                    f"{type(again).__name__}: {again}") from None

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
        if type(record.key) is TopicKey:
            self.topics.apply(record)
        elif self.groups is not None:
            self.groups.apply(record)

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
        """Hand answers to the requests waiting for them."""
        for token, response in responses:
            token.response = response
            if token.waiter is not None:
                token.waiter.set()



