"""A scriptable broker for admin-client tests, speaking the wire protocol through our codec.

It answers ApiVersions (from a table the test chooses), FindCoordinator and Metadata
(pointing at itself), and hands every other request to the test's handler, so a
test can answer NOT_COORDINATOR once, or serve only old versions.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable
from typing import Any, Self

from kcsim.protocol.codecs import api, codec, response_class
from kcsim.protocol.headers import (
    decode_request_header,
    request_header_version,
    response_header_bytes,
    response_header_version,
)

Handler = Callable[[int, Any], Any]  # (version, request) -> response body

API_VERSIONS, METADATA, FIND_COORDINATOR = 18, 3, 10


class FakeBroker:
    def __init__(self, handlers: dict[int, Handler],
                 versions: dict[int, tuple[int, int]] | None = None, node_id: int = 1,
                 aliases: dict[int, int] | None = None) -> None:
        """`handlers` and `versions` are keyed by wire key; `aliases` maps a wire key to the
        declared key whose codec reads it (extension APIs served under other keys)."""
        self.handlers = handlers
        self.node_id = node_id
        self.aliases = aliases or {}
        self.versions = {API_VERSIONS: (0, 3), METADATA: (1, 12), FIND_COORDINATOR: (0, 6)}
        for key in handlers:
            declared = api(self.aliases.get(key, key))
            self.versions[key] = (declared.min_version, declared.max_version)
        self.versions.update(versions or {})
        self.requests: list[tuple[int, int, Any]] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen()
        self.port = self._sock.getsockname()[1]
        self._closed = False

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def calls(self, api_key: int) -> list[tuple[int, Any]]:
        return [(v, r) for k, v, r in self.requests if k == api_key]

    def __enter__(self) -> Self:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed = True
        self._sock.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            while True:
                head = _read(conn, 4)
                if head is None:
                    return
                frame = _read(conn, struct.unpack(">i", head)[0])
                if frame is None:
                    return
                key, version = struct.unpack_from(">hh", frame, 0)
                schema_key = self.aliases.get(key, key)
                declared = api(schema_key)
                header, pos = decode_request_header(frame, request_header_version(declared, version))
                request = codec(schema_key, "request").decode(frame[pos:], version)
                self.requests.append((key, version, request))
                answer = self._answer(key, version, request)
                body = codec(schema_key, "response").encode(answer, version)
                out = response_header_bytes(
                    header.correlation_id, response_header_version(declared, version)) + body
                conn.sendall(struct.pack(">i", len(out)) + out)

    def _answer(self, key: int, version: int, request: Any) -> Any:
        if key in self.handlers:
            return self.handlers[key](version, request)
        cls = response_class(key)
        if key == API_VERSIONS:
            return cls(error_code=0, api_keys=[
                cls.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                for k, (lo, hi) in sorted(self.versions.items())])
        if key == METADATA:
            return cls(brokers=[cls.MetadataResponseBroker(
                node_id=self.node_id, host="127.0.0.1", port=self.port)],
                cluster_id="fake", controller_id=self.node_id, topics=[])
        if key == FIND_COORDINATOR:
            if version < 4:
                return cls(error_code=0, node_id=self.node_id, host="127.0.0.1", port=self.port)
            return cls(coordinators=[cls.Coordinator(
                key=k, node_id=self.node_id, host="127.0.0.1", port=self.port, error_code=0)
                for k in request.coordinator_keys])
        raise AssertionError(f"the fake broker has no handler for API {key}")


def _read(conn: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        try:
            chunk = conn.recv(n - len(buf))
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return buf
