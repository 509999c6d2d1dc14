"""The broker: turns one request frame into one response frame.

Sans-socket: `Broker.process(frame, host)` returns the encoded response (or
None when Kafka sends none, e.g. Produce with acks=0) or an awaitable of it
when the answer must wait (a long-poll Fetch, a durable write, a JoinGroup
waiting for its rebalance). The trio server owns the sockets and the clock.
"""

from __future__ import annotations

import logging
import struct
import time
from typing import TYPE_CHECKING, Any

import trio

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec
from kcsim.protocol.headers import (
    API_VERSIONS_KEY,
    read_client_id,
    request_header_version,
    response_header_version,
)
from kcsim.protocol.primitives import DecodeError

from .context import Durable, RequestContext
from .dispatch import Route, load_handlers
from .topic_records import TopicKey
from .topics import TopicRegistry

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .config import Config

log = logging.getLogger("kcsim.broker")

_HEAD = struct.Struct(">hhi")
_SIZE_CORR = struct.Struct(">ii")
_UNSUPPORTED_VERSION = 35
_CACHE_LIMIT = 4096


class ProtocolViolation(Exception):
    """A request Kafka would answer by closing the connection."""


class _Plan:
    """Everything needed to serve one (api key, version), resolved once."""

    __slots__ = (
        "cache",
        "cache_state",
        "decode",
        "encode",
        "flexible_response",
        "header_version",
        "route",
        "version",
    )

    def __init__(self, route: Route, version: int) -> None:
        api = APIS[route.api_key]
        self.route = route
        self.version = version
        self.header_version = request_header_version(api, version)
        self.decode = codec(route.api_key, "request").decoder(version)
        self.encode = codec(route.api_key, "response").encoder(version)
        self.flexible_response = response_header_version(api, version) >= 1
        self.cache: dict[bytes, bytes] | None = {} if route.cache_state is not None else None
        self.cache_state: Any = None


class Broker:
    """Shared state of one simulated broker and the request entry point."""

    def __init__(self, config: Config, clock_ms: Callable[[], int] | None = None) -> None:
        self.config = config
        self.clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self.topics = TopicRegistry()
        self.routes = self._wire_routes(load_handlers())
        self._plans: dict[int, _Plan] = {}
        self.request_counts: dict[int, int] = {}
        self.data_arrived = trio.lowlevel.ParkingLot()
        self.persist: Callable[[list[Any]], Awaitable[None]] | None = None
        self.groups: Any = None  # the group coordinator, attached by the server
        self.wake_timer: Callable[[], None] = lambda: None

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

    def process(self, frame: bytes | memoryview, host: str
                ) -> bytes | bytearray | Durable | Awaitable[bytes | bytearray | None] | None:
        if len(frame) < 8:
            raise ProtocolViolation(f"request of {len(frame)} bytes is shorter than a header")
        api_key, version, correlation_id = _HEAD.unpack_from(frame, 0)
        plan = self.plan(api_key, version)
        if plan is None:
            if api_key == API_VERSIONS_KEY:
                # Clients probe with their newest version: answer v0 with the table.
                return self.api_versions_fallback(correlation_id)
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
            key = bytes(frame[8:])
            rest = cache.get(key)
            if rest is not None:
                self.request_counts[api_key] = self.request_counts.get(api_key, 0) + 1
                return _SIZE_CORR.pack(len(rest) + 4, correlation_id) + rest
        try:
            client_id, pos = read_client_id(frame, plan.header_version)
            request, end = plan.decode(frame, pos)
        except (DecodeError, struct.error, IndexError, ValueError, UnicodeDecodeError) as exc:
            raise ProtocolViolation(
                f"malformed {APIS[plan.route.api_key].name} v{version} request: {exc}") from None
        if end > len(frame):
            raise ProtocolViolation(f"{APIS[plan.route.api_key].name} v{version} request is truncated")
        self.request_counts[api_key] = self.request_counts.get(api_key, 0) + 1
        ctx = RequestContext(plan.route.api_key, version, correlation_id, client_id or "", host)
        result = plan.route.fn(self, ctx, request)
        if result is None:
            return None
        if type(result) is Durable:
            result.response = self.encode_response(plan, correlation_id, result.response)
            return result
        if hasattr(result, "__await__"):
            return self._finish(plan, correlation_id, result)
        encoded = self.encode_response(plan, correlation_id, result)
        if cache is not None and plan.route.cache_state(self) == plan.cache_state:  # type: ignore[misc]
            cache[key] = bytes(encoded[8:])
        return encoded

    async def _finish(self, plan: _Plan, correlation_id: int,
                      pending: Awaitable[Any]) -> bytearray | None:
        response = await pending
        if response is None:
            return None
        return self.encode_response(plan, correlation_id, response)

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
            cls(error_code=_UNSUPPORTED_VERSION, api_keys=self.advertised_versions(cls)), 0)
        return _SIZE_CORR.pack(len(body) + 4, correlation_id) + body

    def advertised_versions(self, cls: Any) -> list[Any]:
        return [
            cls.ApiVersion(api_key=wire, min_version=r.min_version, max_version=r.max_version)
            for wire, r in sorted(self.routes.items())
        ]

    # -- state changes ------------------------------------------------------

    def apply(self, record: Any) -> None:
        """The one path every durable change takes, live and at replay."""
        if type(record.key) is TopicKey:
            self.topics.apply(record)
        elif self.groups is not None:
            self.groups.apply(record)

    async def commit(self, records: list[Any]) -> None:
        """Apply records, then wait until they are durable."""
        for record in records:
            self.apply(record)
        await self.durable(records)

    async def durable(self, records: list[Any]) -> None:
        """Wait until already-applied records are on disk (no-op in memory)."""
        if self.persist is not None and records:
            await self.persist(records)

    async def deliver(self, outcome: Any) -> None:
        """Persist a coordinator outcome's records, then release its responses."""
        if outcome.records:
            await self.durable(outcome.records)
        self.release(outcome.responses)

    @staticmethod
    def release(responses: list[tuple[Any, Any]]) -> None:
        """Hand answers to the requests waiting for them."""
        for token, response in responses:
            token.response = response
            if token.waiter is not None:
                token.waiter.set()
