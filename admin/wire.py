"""Requests out, responses in: framing, headers and correlation ids, free of any I/O.

The blocking connection and the trio connection both push received bytes into a
`Correlator` and take decoded responses out, so header versions, the ApiVersions
special case and correlation checks are written once.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from kcsim.protocol.codecs import api, codec
from kcsim.protocol.headers import (
    RequestHeader,
    decode_response_header,
    encode_request_header,
    request_header_version,
    response_header_version,
)
from kcsim.protocol.primitives import DecodeError

API_VERSIONS = 18
_LENGTH = struct.Struct(">i")


class ProtocolViolation(Exception):
    """The broker sent bytes that are not the answer to anything we asked."""


@dataclass(frozen=True)
class Pending:
    """A request awaiting its answer. `schema_key` names the codec that decodes it:
    an extension API may be served under another wire key than the one it is declared with."""

    correlation_id: int
    schema_key: int
    version: int


@dataclass(frozen=True)
class Response:
    correlation_id: int
    version: int
    body: Any


class Correlator:
    """Turns requests into frames and received bytes into responses, in order."""

    def __init__(self, client_id: str, max_frame_bytes: int = 100 * 1024 * 1024) -> None:
        self.client_id = client_id
        self.max_frame_bytes = max_frame_bytes
        self._next_id = 1
        self._pending: dict[int, Pending] = {}
        self._buffer = bytearray()

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    def request(
        self, wire_key: int, version: int, body: Any, schema_key: int | None = None
    ) -> tuple[int, bytes]:
        """The correlation id and the length-prefixed frame for one request."""
        schema_key = wire_key if schema_key is None else schema_key
        correlation_id = self._next_id
        self._next_id = (self._next_id + 1) & 0x7FFFFFFF or 1
        declared = api(schema_key)
        header = RequestHeader(wire_key, version, correlation_id, self.client_id)
        payload = encode_request_header(header, request_header_version(declared, version))
        payload += codec(schema_key, "request").encode(body, version)
        self._pending[correlation_id] = Pending(correlation_id, schema_key, version)
        return correlation_id, _LENGTH.pack(len(payload)) + payload

    def forget(self, correlation_id: int) -> None:
        """Stop waiting for a response (its caller gave up); a late answer is then dropped."""
        self._pending.pop(correlation_id, None)

    def receive(self, data: bytes) -> list[Response]:
        """Feed received bytes; returns every response they complete."""
        self._buffer += data
        out: list[Response] = []
        while len(self._buffer) >= 4:
            (size,) = _LENGTH.unpack_from(self._buffer, 0)
            if size < 4 or size > self.max_frame_bytes:
                raise ProtocolViolation(f"response frame of {size} bytes")
            if len(self._buffer) < 4 + size:
                break
            frame = bytes(self._buffer[4 : 4 + size])
            del self._buffer[: 4 + size]
            response = self._decode(frame)
            if response is not None:
                out.append(response)
        return out

    def _decode(self, frame: bytes) -> Response | None:
        (correlation_id,) = struct.unpack_from(">i", frame, 0)
        pending = self._pending.pop(correlation_id, None)
        if pending is None:
            return None  # the answer to a request whose caller gave up
        declared = api(pending.schema_key)
        header_version = response_header_version(declared, pending.version)
        _, pos = decode_response_header(frame, header_version)
        body = frame[pos:]
        response_codec = codec(pending.schema_key, "response")
        try:
            decoded = response_codec.decode(body, pending.version)
            return Response(correlation_id, pending.version, decoded)
        except DecodeError:
            if pending.schema_key != API_VERSIONS or pending.version == 0:
                raise
            # A broker that does not know our ApiVersions version answers in v0.
            return Response(correlation_id, 0, response_codec.decode(body, 0))


def negotiate(served: dict[int, tuple[int, int]], key: int, lo: int, hi: int) -> int | None:
    """The highest version both sides speak, or None."""
    theirs = served.get(key)
    if theirs is None:
        return None
    best = min(hi, theirs[1])
    return best if best >= max(lo, theirs[0]) else None


API_VERSIONS_VERSION = 3  # flexible, and every broker since Kafka 2.4 serves it
_UNSUPPORTED_VERSION = 35


def api_versions_request(client_software_version: str = "0.1") -> Any:
    return codec(API_VERSIONS, "request").cls(
        client_software_name="kcsim-admin", client_software_version=client_software_version
    )


def served_table(body: Any) -> dict[int, tuple[int, int]]:
    return {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}


def api_versions_retry_version(body: Any) -> int | None:
    """After UNSUPPORTED_VERSION, the ApiVersions version to try next (the broker's newest)."""
    if body.error_code != _UNSUPPORTED_VERSION:
        return None
    theirs = served_table(body).get(API_VERSIONS)
    return min(theirs[1], API_VERSIONS_VERSION) if theirs else 0
