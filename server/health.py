"""`kcsim health`: does the broker answer Kafka requests on every listener?

A container's health check. An open port proves little (docker-proxy accepts on a
published port before anything listens behind it), so each listener is sent an
ApiVersions request, found from the same settings `kcsim serve` reads, and must
answer it without error.
"""

from __future__ import annotations

import socket
import struct
from typing import TYPE_CHECKING

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec
from kcsim.protocol.headers import (
    API_VERSIONS_KEY,
    RequestHeader,
    decode_response_header,
    encode_request_header,
    request_header_version,
    response_header_version,
)

if TYPE_CHECKING:
    from .config import Config

_SIZE = struct.Struct(">i")
_VERSION = 0  # every Kafka broker serves ApiVersions v0
_CORRELATION_ID = 0x6B63


class Unhealthy(Exception):
    """The listener did not answer ApiVersions as a broker does."""


def probe(host: str, port: int, timeout: float) -> None:
    """One ApiVersions round trip to host:port; raises Unhealthy saying what went wrong."""
    api = APIS[API_VERSIONS_KEY]
    header = encode_request_header(
        RequestHeader(API_VERSIONS_KEY, _VERSION, _CORRELATION_ID, "kcsim-health"),
        request_header_version(api, _VERSION))
    body = codec(API_VERSIONS_KEY, "request").encode(
        codec(API_VERSIONS_KEY, "request").cls(), _VERSION)
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(_SIZE.pack(len(header) + len(body)) + header + body)
            (size,) = _SIZE.unpack(_receive(sock, 4))
            frame = _receive(sock, size)
    except OSError as exc:
        raise Unhealthy(exc.strerror or str(exc) or type(exc).__name__) from None
    try:
        correlation_id, pos = decode_response_header(frame, response_header_version(api, _VERSION))
        response = codec(API_VERSIONS_KEY, "response").decode(frame[pos:], _VERSION)
    except Exception as exc:
        raise Unhealthy(f"not a Kafka answer: {exc}") from None
    if correlation_id != _CORRELATION_ID:
        raise Unhealthy(f"answered correlation id {correlation_id}, not {_CORRELATION_ID}")
    if response.error_code != 0:
        raise Unhealthy(f"ApiVersions answered error {response.error_code}")


def _receive(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("connection closed before the answer")
        data += chunk
    return data


def check(config: Config, timeout: float) -> list[tuple[str, str | None]]:
    """(what was checked, why it failed or None) for every listener."""
    results: list[tuple[str, str | None]] = []
    for plan in config.listener_plans:
        host = plan.local_host
        where = f"{plan.name} on {host}:{plan.port}"
        if plan.port == 0:
            results.append((where, "port 0 is picked at start: nothing to check"))
            continue
        try:
            probe(host, plan.port, timeout)
        except Unhealthy as exc:
            results.append((where, str(exc)))
        else:
            results.append((where, None))
    return results
