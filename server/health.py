"""`kcsim health`: does the broker answer Kafka requests on every listener?

A container's health check. An open port proves little (docker-proxy accepts on a
published port before anything listens behind it), so each listener is sent an
ApiVersions request, found from the same settings `kcsim serve` reads, and must
answer it without error. An SSL or SASL_SSL listener is probed over TLS (its certificate not
checked: this asks whether the broker serves, not whom to trust); a SASL listener answers
ApiVersions before authentication, as Kafka's does.
"""

from __future__ import annotations

import socket
import ssl
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

from .listeners import TLS_PROTOCOLS

if TYPE_CHECKING:
    from .config import Config

_SIZE = struct.Struct(">i")
_VERSION = 0  # every Kafka broker serves ApiVersions v0
_CORRELATION_ID = 0x6B63


class Unhealthy(Exception):
    """The listener did not answer ApiVersions as a broker does."""


def probe(host: str, port: int, timeout: float, *, tls: bool = False) -> None:
    """One ApiVersions round trip to host:port (over TLS with `tls`); raises Unhealthy saying
    what went wrong."""
    api = APIS[API_VERSIONS_KEY]
    header = encode_request_header(
        RequestHeader(API_VERSIONS_KEY, _VERSION, _CORRELATION_ID, "kcsim-health"),
        request_header_version(api, _VERSION))
    body = codec(API_VERSIONS_KEY, "request").encode(
        codec(API_VERSIONS_KEY, "request").cls(), _VERSION)
    try:
        with socket.create_connection((host, port), timeout=timeout) as plain, \
                _wrap(plain, tls) as sock:
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


def _wrap(sock: socket.socket, tls: bool) -> socket.socket:
    if not tls:
        return sock
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context.wrap_socket(sock)


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
            probe(host, plan.port, timeout, tls=plan.protocol in TLS_PROTOCOLS)
        except Unhealthy as exc:
            results.append((where, str(exc)))
        else:
            results.append((where, None))
    return results
