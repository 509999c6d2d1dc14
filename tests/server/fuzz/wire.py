"""Request frames built with kcsim's own codec, and a blocking connection that sends them."""

from __future__ import annotations

import socket
import struct
import time
from typing import Any, Self

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec
from kcsim.protocol.headers import (
    RequestHeader,
    decode_response_header,
    encode_request_header,
    request_header_version,
    response_header_version,
)

SIZE = struct.Struct(">i")


def body(api_key: int, version: int, request: Any) -> bytes:
    return codec(api_key, "request").encode(request, version)


def frame(api_key: int, version: int, correlation_id: int, payload: bytes,
          client_id: str | None = "fuzz") -> bytes:
    """A size-prefixed request: the header `api_key` uses at `version`, then `payload`."""
    head = encode_request_header(RequestHeader(api_key, version, correlation_id, client_id),
                                 request_header_version(APIS[api_key], version))
    return SIZE.pack(len(head) + len(payload)) + head + payload


class Closed(Exception):
    """The server closed the connection instead of answering."""


class Connection:
    """One blocking socket: send frames, read answers, time them."""

    def __init__(self, port: int, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.correlation_id = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def receive(self) -> bytes:
        """The next response frame (correlation id onward)."""
        head = self._exact(4)
        (size,) = SIZE.unpack(head)
        return self._exact(size)

    def _exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise Closed(f"connection closed after {len(buf)} of {n} bytes")
            buf += chunk
        return bytes(buf)

    def call(self, api_key: int, version: int, request: Any) -> tuple[Any, float]:
        """Send one request and decode its answer: (response, seconds waited)."""
        self.correlation_id += 1
        payload = body(api_key, version, request)
        started = time.monotonic()
        self.sock.sendall(frame(api_key, version, self.correlation_id, payload))
        raw = self.receive()
        waited = time.monotonic() - started
        correlation_id, pos = decode_response_header(
            raw, response_header_version(APIS[api_key], version))
        if correlation_id != self.correlation_id:
            raise AssertionError(f"answer to {correlation_id}, expected {self.correlation_id}")
        return codec(api_key, "response").decode(raw[pos:], version), waited

    def closed_by_server(self, timeout: float = 5.0) -> bool:
        """True once the server closes the connection (after whatever it sent)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            return False
