"""How one (API key, version) is served, resolved once: its route, codecs and header
versions, and the answer cache of a read-only API.

A read-only API (its route has `cache_state`) has its answers cached by listener
(its address is in them), then by request bytes, until the state version they
depend on changes. The cache is emptied when it grows past CACHE_BYTES: requests that
differ only in their client id (or in garbage) cannot make it hold more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec
from kcsim.protocol.headers import read_client_id, request_header_version, response_header_version

from ..metrics import PlanCounts, error_counter, errors_below_top

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim.protocol.compiler import CountingEncoder

    from ..listeners import Listener
    from .routes import Route

CACHE_BYTES = 2 * 1024 * 1024
_CACHE_ENTRY_BYTES = 200  # a dict slot and two bytes objects


class Plan(PlanCounts):
    """Everything needed to serve one (api key, version), and what serving it counted."""

    __slots__ = ("cache", "cache_bytes", "cache_listener", "cache_state", "cache_state_of",
                 "caches", "count_errors", "decode", "encode", "encode_counting", "error_fields",
                 "errors", "flexible_response", "header_version", "name", "response_head",
                 "route", "served", "time_ns", "timed", "version", "wire_key")

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
        # A response frame's size and correlation id (written once the body is) and, in a
        # flexible header, its tagged fields: none.
        self.response_head = bytes(9 if self.flexible_response else 8)
        # The answer cache: `cache` is the table of `cache_listener`, the listener last asked
        # for (an identity test on the hot path instead of hashing a key that names it).
        self.cache_state_of: Callable[[Any], Any] | None = route.cache_state
        self.caches: dict[Listener, dict[bytes, bytes]] = {}
        self.cache: dict[bytes, bytes] = {}
        self.cache_listener: Listener | None = None
        self.cache_state: Any = None
        self.cache_bytes = 0  # what the caches hold, counted as _CACHE_ENTRY_BYTES + keys + answers
        # For the metrics (metrics/counts.py): requests served, timed, their time, errors.
        self.served = self.timed = self.time_ns = self.error_fields = 0
        self.errors: dict[int, int] = {}
        # Counts the error codes of an answer into `errors` (made for its class when first
        # needed: every answer of a plan is of one class); None: the answer has one error
        # code, at its top level, read inline (`top_level_error`).
        self.count_errors: Callable[[Any, dict[int, int]], int] | None = self._first_errors
        # The encoder that counts them as it writes them (compiled when first needed), for
        # answers with error codes below their top level; None for the others.
        self.encode_counting: CountingEncoder | None = (
            self._first_encode_counting if errors_below_top(codec(route.api_key, "response").cls)
            else None)

    def _first_errors(self, response: Any, errors: dict[int, int]) -> int:
        counter = self.count_errors = error_counter(type(response))
        if counter is None:
            code = response.error_code
            if code:
                errors[code] = errors.get(code, 0) + 1
            return 1
        return counter(response, errors)

    def _first_encode_counting(self, response: Any, out: bytearray,
                               errors: dict[int, int]) -> int:
        encode = self.encode_counting = codec(self.route.api_key, "response").counting_encoder(
            self.version)
        return encode(response, out, errors)

    def answers_for(self, listener: Listener) -> dict[bytes, bytes]:
        """The cached answers of `listener`, which becomes the one kept at hand."""
        cache = self.caches.get(listener)
        if cache is None:
            cache = self.caches[listener] = {}
        self.cache, self.cache_listener = cache, listener
        return cache

    def forget_answers(self) -> None:
        self.caches.clear()
        self.cache, self.cache_listener = {}, None
        self.cache_bytes = 0

    def keep(self, listener: Listener, key: bytes, frame: bytes | bytearray) -> None:
        """Cache an answer frame (its size and correlation id left out) for `key`."""
        if self.cache_bytes > CACHE_BYTES:  # full: start again
            self.forget_answers()
        rest = self.answers_for(listener)[key] = bytes(frame[8:])
        self.cache_bytes += _CACHE_ENTRY_BYTES + len(key) + len(rest)

    def read_request(self, frame: bytes) -> tuple[str | None, Any]:
        """(client id, request) of a request frame the request log kept."""
        client_id, pos = read_client_id(frame, self.header_version)
        return client_id, self.decode(frame, pos)[0]

    def read_response(self, frame: bytes | bytearray) -> Any:
        """The response of a response frame (size prefix included) the request log kept."""
        body = bytes(frame[9:] if self.flexible_response else frame[8:])
        return codec(self.route.api_key, "response").decode(body, self.version)
