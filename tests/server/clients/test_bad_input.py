"""Bad bytes on one connection never disturb the others.

Each test misbehaves on a raw socket against an embedded server while a
well-behaved client keeps sending ApiVersions on its own connection; the bad
connection gets the Kafka treatment (closed, or answered with v0 for an unknown
ApiVersions version), the good client keeps getting answers, and new
connections are still served.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
from typing import TYPE_CHECKING, Any, Self

import pytest

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec
from kcsim.protocol.headers import RequestHeader, encode_request_header, request_header_version
from kcsim.server.embedded import EmbeddedServer

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.timeout(60)

MAX_FRAME = 1024
API_VERSIONS = 18
METADATA = 3
PRODUCE = 0
UNSUPPORTED_VERSION = 35
CLOSE_TIMEOUT_S = 5.0


# -- raw protocol helpers -------------------------------------------------------------


def request_frame(api_key: int, version: int, correlation_id: int, body: Any = None,
                  client_id: str | None = "bad-input-test", header_version: int | None = None) -> bytes:
    """A size-prefixed request; body is a request object, raw bytes, or None for empty."""
    if header_version is None:
        header_version = request_header_version(APIS[api_key], version) if api_key in APIS else 1
    head = encode_request_header(RequestHeader(api_key, version, correlation_id, client_id),
                                 header_version)
    if body is None:
        payload = b""
    elif isinstance(body, (bytes, bytearray)):
        payload = bytes(body)
    else:
        payload = codec(api_key, "request").encode(body, version)
    return struct.pack(">i", len(head) + len(payload)) + head + payload


def api_versions_frame(correlation_id: int, version: int = 3, software: str = "kcsim-tests") -> bytes:
    cls = codec(API_VERSIONS, "request").cls
    return request_frame(API_VERSIONS, version, correlation_id,
                         cls(client_software_name=software, client_software_version="1.0"))


def recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """(correlation id, body after the v0 response header) of the next response."""
    head = recv_exact(sock, 4)
    assert head is not None, "connection closed instead of answering"
    (size,) = struct.unpack(">i", head)
    frame = recv_exact(sock, size)
    assert frame is not None, "connection closed in the middle of a response"
    (correlation_id,) = struct.unpack_from(">i", frame)
    return correlation_id, frame[4:]


def decode_api_versions(body: bytes, version: int) -> Any:
    return codec(API_VERSIONS, "response").decode(body, version)


def connect(port: int | None, timeout: float = 5.0) -> socket.socket:
    assert port is not None, "server not started"
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def connection_state(sock: socket.socket, timeout: float) -> str:
    """"closed", "data" (the server sent something) or "open" (silent for `timeout`)."""
    sock.settimeout(timeout)
    try:
        return "data" if sock.recv(1, socket.MSG_PEEK) else "closed"
    except (ConnectionResetError, BrokenPipeError):
        return "closed"
    except TimeoutError:
        return "open"


def closed_by_server(sock: socket.socket, timeout: float = CLOSE_TIMEOUT_S) -> bool:
    """True once the server closes the connection without sending anything."""
    return connection_state(sock, timeout) == "closed"


def api_versions_table(port: int | None) -> dict[int, tuple[int, int]]:
    """ApiVersions v3 on a new connection: {api_key: (min, max)}."""
    with connect(port) as sock:
        sock.sendall(api_versions_frame(7))
        correlation_id, body = read_response(sock)
    assert correlation_id == 7
    response = decode_api_versions(body, 3)
    assert response.error_code == 0
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


# -- the well-behaved neighbour --------------------------------------------------------


class Neighbour:
    """A client sending ApiVersions in a loop on its own connection."""

    def __init__(self, port: int | None) -> None:
        self.port = port
        self.answers = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="neighbour", daemon=True)

    def _run(self) -> None:
        try:
            with connect(self.port) as sock:
                correlation_id = 0
                while not self._stop.is_set():
                    correlation_id += 1
                    sock.sendall(api_versions_frame(correlation_id))
                    got, body = read_response(sock)
                    assert got == correlation_id, f"answer for {got}, expected {correlation_id}"
                    assert decode_api_versions(body, 3).error_code == 0
                    with self._cond:
                        self.answers += 1
                        self._cond.notify_all()
                    time.sleep(0.02)
        except (AssertionError, OSError, ValueError) as exc:
            self.error = exc
            with self._cond:
                self._cond.notify_all()

    def __enter__(self) -> Self:
        self._thread.start()
        self.still_answered()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def still_answered(self, more: int = 3, timeout: float = 5.0) -> None:
        """Assert the neighbour gets `more` answers within `timeout` seconds."""
        with self._cond:
            target = self.answers + more
            ok = self._cond.wait_for(lambda: self.answers >= target or self.error is not None,
                                     timeout)
        assert self.error is None, f"the well-behaved client failed: {self.error!r}"
        assert ok, f"the well-behaved client got no answers for {timeout}s"


def assert_still_serving(srv: EmbeddedServer, neighbour: Neighbour) -> None:
    neighbour.still_answered()
    assert API_VERSIONS in api_versions_table(srv.port)


def assert_violation_logged(caplog: pytest.LogCaptureFixture) -> None:
    warnings = [r for r in caplog.records
                if r.name.startswith("kcsim") and r.levelno >= logging.WARNING]
    assert warnings, "the server closed the connection without logging why"


@pytest.fixture(scope="module")
def srv() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(port=0, max_frame_bytes=MAX_FRAME) as server:
        yield server


@pytest.fixture
def neighbour(srv: EmbeddedServer) -> Iterator[Neighbour]:
    with Neighbour(srv.port) as n:
        yield n


# -- the tests --------------------------------------------------------------------


@pytest.mark.parametrize("garbage", [
    pytest.param(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", id="http-request"),
    pytest.param(b"\x00\x00\x00\x00", id="empty-frame"),
    pytest.param(b"\x00\x00\x00\x06" + b"\x00\x12\x00\x03\x00\x00", id="frame-shorter-than-header"),
    pytest.param(b"\x00\x00\x00\x20" + b"\x7f\xf0" + bytes(range(30)),
                 id="junk-frame"),
])
def test_garbage_closes_only_that_connection(srv: EmbeddedServer, neighbour: Neighbour,
                                             caplog: pytest.LogCaptureFixture,
                                             garbage: bytes) -> None:
    """Bytes that are not a Kafka request: the connection is closed and the reason logged."""
    with connect(srv.port) as sock:
        sock.sendall(garbage)
        assert closed_by_server(sock)
    assert_violation_logged(caplog)
    assert_still_serving(srv, neighbour)


def test_malformed_body_of_known_api(srv: EmbeddedServer, neighbour: Neighbour) -> None:
    """ApiVersions v3 whose compact string claims more bytes than the frame has: closed."""
    body = b"\x7f" + b"abc"
    with connect(srv.port) as sock:
        sock.sendall(request_frame(API_VERSIONS, 3, 1, body))
        assert closed_by_server(sock)
    assert_still_serving(srv, neighbour)


@pytest.mark.parametrize("sent", [
    pytest.param(2, id="inside-size-prefix"),
    pytest.param(20, id="inside-body"),
])
def test_truncated_frame_then_close(srv: EmbeddedServer, neighbour: Neighbour, sent: int) -> None:
    """A client that dies mid-request does not disturb the server."""
    frame = api_versions_frame(1)
    assert len(frame) > sent
    with connect(srv.port) as sock:
        sock.sendall(frame[:sent])
        time.sleep(0.1)
    assert_still_serving(srv, neighbour)


def test_negative_frame_size(srv: EmbeddedServer, neighbour: Neighbour,
                             caplog: pytest.LogCaptureFixture) -> None:
    """A negative size prefix closes the connection."""
    with connect(srv.port) as sock:
        sock.sendall(struct.pack(">i", -16) + api_versions_frame(1)[4:])
        assert closed_by_server(sock)
    assert_violation_logged(caplog)
    assert_still_serving(srv, neighbour)


def test_oversized_frame_closed_before_its_body(srv: EmbeddedServer, neighbour: Neighbour,
                                                caplog: pytest.LogCaptureFixture) -> None:
    """A size above max_frame_bytes closes the connection on the prefix alone."""
    with connect(srv.port) as sock:
        sock.sendall(struct.pack(">i", MAX_FRAME + 1))
        assert closed_by_server(sock)
    assert_violation_logged(caplog)
    assert_still_serving(srv, neighbour)


def test_frame_of_exactly_max_size_is_served(srv: EmbeddedServer, neighbour: Neighbour) -> None:
    """max_frame_bytes is inclusive: a request of exactly that size is answered."""
    frame = b""
    for pad in range(MAX_FRAME, 0, -1):
        frame = api_versions_frame(42, software="a" * pad)
        if len(frame) - 4 <= MAX_FRAME:
            break
    assert len(frame) - 4 == MAX_FRAME
    with connect(srv.port) as sock:
        sock.sendall(frame)
        correlation_id, body = read_response(sock)
    assert correlation_id == 42
    assert decode_api_versions(body, 3).error_code == 0
    assert_still_serving(srv, neighbour)


def test_unknown_api_key(srv: EmbeddedServer, neighbour: Neighbour,
                         caplog: pytest.LogCaptureFixture) -> None:
    """An API key no Kafka version defines closes the connection."""
    unknown = 32000
    assert unknown not in APIS
    with connect(srv.port) as sock:
        sock.sendall(request_frame(unknown, 0, 1, b"\x00\x00\x00\x00", header_version=1))
        assert closed_by_server(sock)
    assert_violation_logged(caplog)
    assert_still_serving(srv, neighbour)


@pytest.mark.parametrize(("api_key", "which"), [
    pytest.param(METADATA, "above", id="metadata-above-max"),
    pytest.param(PRODUCE, "below", id="produce-below-min"),
])
def test_unsupported_version_of_known_api(srv: EmbeddedServer, neighbour: Neighbour,
                                          caplog: pytest.LogCaptureFixture,
                                          api_key: int, which: str) -> None:
    """A version outside the advertised range of a served API closes the connection."""
    table = api_versions_table(srv.port)
    assert api_key in table, f"API {api_key} is not advertised"
    low, high = table[api_key]
    version = high + 1 if which == "above" else low - 1
    with connect(srv.port) as sock:
        sock.sendall(request_frame(api_key, version, 1, b"\x00" * 16, header_version=1))
        assert closed_by_server(sock)
    assert_violation_logged(caplog)
    assert_still_serving(srv, neighbour)


def test_api_versions_at_unknown_version(srv: EmbeddedServer, neighbour: Neighbour) -> None:
    """ApiVersions v99 gets a v0 answer: UNSUPPORTED_VERSION plus the table; the
    connection stays open for the client's retry at a version we serve."""
    with connect(srv.port) as sock:
        sock.sendall(request_frame(API_VERSIONS, 99, 1234, b"\x00\x00\x00"))
        correlation_id, body = read_response(sock)
        assert correlation_id == 1234
        fallback = decode_api_versions(body, 0)
        assert fallback.error_code == UNSUPPORTED_VERSION
        table = {k.api_key: (k.min_version, k.max_version) for k in fallback.api_keys}
        assert table[API_VERSIONS][0] == 0
        assert table[API_VERSIONS][1] >= 3
        assert table == api_versions_table(srv.port)

        sock.sendall(api_versions_frame(1235, version=table[API_VERSIONS][1]))
        correlation_id, body = read_response(sock)
        assert correlation_id == 1235
        assert decode_api_versions(body, table[API_VERSIONS][1]).error_code == 0
    assert_still_serving(srv, neighbour)


def test_slow_client_half_a_frame(srv: EmbeddedServer, neighbour: Neighbour) -> None:
    """Half a request waits for the rest without blocking anyone; once complete it is served."""
    frame = api_versions_frame(77)
    with connect(srv.port) as slow:
        slow.sendall(frame[: len(frame) // 2])
        for _ in range(3):
            assert_still_serving(srv, neighbour)
        assert connection_state(slow, timeout=0.3) == "open"
        slow.settimeout(5)
        slow.sendall(frame[len(frame) // 2 :])
        correlation_id, body = read_response(slow)
    assert correlation_id == 77
    assert decode_api_versions(body, 3).error_code == 0


def test_idle_half_frame_connection_times_out() -> None:
    """A connection stuck mid-request is closed after idle_timeout_ms; active ones are not."""
    with EmbeddedServer(port=0, idle_timeout_ms=500) as server, Neighbour(server.port) as active:
        with connect(server.port) as slow:
            slow.sendall(api_versions_frame(1)[:10])
            started = time.monotonic()
            assert closed_by_server(slow, timeout=5)
            waited = time.monotonic() - started
        assert 0.3 <= waited < 3, f"closed after {waited:.2f}s with idle_timeout_ms=500"
        active.still_answered()


def test_many_bad_connections_while_a_real_client_works(srv: EmbeddedServer,
                                                        neighbour: Neighbour) -> None:
    """Thirty misbehaving connections at once; kafka-python's admin keeps working."""
    from kafka import KafkaAdminClient

    bad_inputs = [
        b"\xff\xff\xff\xf0",
        struct.pack(">i", MAX_FRAME * 4),
        b"GET / HTTP/1.1\r\n\r\n",
        request_frame(32000, 0, 1, b"", header_version=1),
        api_versions_frame(1)[:9],
    ]
    admin = KafkaAdminClient(bootstrap_servers=srv.bootstrap, request_timeout_ms=5000,
                             bootstrap_timeout_ms=5000)
    socks: list[socket.socket] = []
    try:
        for i in range(30):
            sock = connect(srv.port)
            socks.append(sock)
            sock.sendall(bad_inputs[i % len(bad_inputs)])
        for _ in range(3):
            cluster = admin.describe_cluster()
            assert [b["port"] for b in cluster["brokers"]] == [srv.port]
            neighbour.still_answered(more=1)
    finally:
        admin.close()
        for sock in socks:
            sock.close()
    assert_still_serving(srv, neighbour)
