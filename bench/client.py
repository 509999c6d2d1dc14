"""A minimal load client: raw non-blocking sockets, one thread, requests encoded once.

The client must stay cheaper than the server it measures (both share a 2-core
machine), so requests are encoded once into a `Frame` whose correlation id is
the only part written per send, responses are only checked for their
correlation id unless a workload asks to see them, and N connections with K
requests in flight each are driven from one selector loop.
"""

from __future__ import annotations

import selectors
import socket
import struct
import time
from collections import deque
from collections.abc import Callable
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

_I32 = struct.Struct(">i")
_RECV = 1024 * 1024
CLIENT_ID = "kcsim-bench"


class BenchError(Exception):
    """The server under test did something a Kafka broker would not."""


class Frame:
    """One request encoded once; each send writes only a fresh correlation id."""

    __slots__ = ("api_key", "head", "response_header_version", "size", "tail", "version")

    def __init__(self, api_key: int, version: int, request: Any, client_id: str = CLIENT_ID):
        api = APIS[api_key]
        header = encode_request_header(
            RequestHeader(api_key, version, 0, client_id), request_header_version(api, version))
        payload = header + codec(api_key, "request").encode(request, version)
        self.api_key = api_key
        self.version = version
        self.head = _I32.pack(len(payload)) + payload[:4]  # size, api key, version
        self.tail = payload[8:]  # client id, header tags, body
        self.response_header_version = response_header_version(api, version)
        self.size = 4 + len(payload)

    def encode(self, correlation_id: int) -> bytes:
        return self.head + _I32.pack(correlation_id) + self.tail

    def decode_response(self, response: bytes) -> Any:
        """The full response object of a frame returned by the server (without its size)."""
        _corr, pos = decode_response_header(response, self.response_header_version)
        decode = codec(self.api_key, "response").decode
        with memoryview(response) as view:
            # The compiled decoders only slice and unpack_from: any buffer will do.
            return decode(view[pos:], self.version)  # type: ignore[arg-type]


def message_class(api_key: int, kind: str) -> Any:
    """The generated class of a request or response, with its nested structs as attributes."""
    return codec(api_key, kind).cls


def request(api_key: int, version: int, **fields: Any) -> Frame:
    """A Frame from the request's fields, named as in protocol/apis."""
    return Frame(api_key, version, message_class(api_key, "request")(**fields))


class PhaseResult:
    """What one `run` call did: requests answered, wall time, bytes and latencies."""

    def __init__(self, requests: int, elapsed: float, bytes_out: int, bytes_in: int,
                 latencies: list[float]) -> None:
        self.requests = requests
        self.elapsed = elapsed
        self.bytes_out = bytes_out
        self.bytes_in = bytes_in
        self.latencies = latencies

    def rate(self) -> float:
        return self.requests / self.elapsed if self.elapsed > 0 else 0.0

    def latency_us(self, q: float) -> float | None:
        if not self.latencies:
            return None
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(q * len(xs)))] * 1e6


class _Conn:
    __slots__ = ("corr", "idx", "open", "pending", "rbuf", "sent_at", "sock", "wbuf", "writing")

    def __init__(self, idx: int, sock: socket.socket) -> None:
        self.idx = idx
        self.sock = sock
        self.rbuf = bytearray()
        self.wbuf = bytearray()
        self.corr = 0
        self.pending: deque[tuple[int, Frame]] = deque()  # (correlation id, frame) in send order
        self.sent_at: deque[float] = deque()
        self.writing = False
        self.open = True


def send_pending(sel: selectors.BaseSelector, conn: Any, label: str) -> None:
    """Send what a non-blocking connection's write buffer holds; watch for writability
    only while something is left (conn has `sock`, `wbuf`, `writing`)."""
    try:
        n = conn.sock.send(conn.wbuf)
    except BlockingIOError:
        n = 0
    except OSError as exc:
        raise BenchError(f"{label}: send failed: {exc}") from None
    del conn.wbuf[:n]
    want = bool(conn.wbuf)
    if want != conn.writing:
        conn.writing = want
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if want else 0)
        sel.modify(conn.sock, events, conn)


NextFrame = Callable[[int], "Frame | None"]
OnResponse = Callable[[int, Frame, bytes], None]


class LoadClient:
    """N connections to one server, driven by `run` phases on the calling thread."""

    def __init__(self, host: str, port: int, connections: int = 1, stall_timeout: float = 30.0):
        self.stall_timeout = stall_timeout
        self._sel = selectors.DefaultSelector()
        self.conns: list[_Conn] = []
        for i in range(connections):
            sock = socket.create_connection((host, port), timeout=10)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setblocking(False)
            conn = _Conn(i, sock)
            self.conns.append(conn)
            self._sel.register(sock, selectors.EVENT_READ, conn)

    def close(self) -> None:
        for c in self.conns:
            if c.open:
                self._sel.unregister(c.sock)
                c.sock.close()
                c.open = False
        self._sel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, frame: Frame, conn: int = 0) -> Any:
        """Send one request and return its decoded response (set-up, checks)."""
        got: list[bytes] = []
        sent = [False]

        def next_frame(_idx: int) -> Frame | None:
            if sent[0]:
                return None
            sent[0] = True
            return frame

        def on_response(_idx: int, _frame: Frame, response: bytes) -> None:
            got.append(response)

        self.run(next_frame, on_response, in_flight=1, only=conn)
        return frame.decode_response(got[0])

    def run(self, next_frame: NextFrame, on_response: OnResponse | None = None, *,
            in_flight: int = 1, duration: float | None = None, max_requests: int | None = None,
            latencies: bool = False, only: int | None = None) -> PhaseResult:
        """Keep `in_flight` requests outstanding per connection until time, count or
        `next_frame` runs out, then wait for every answer; responses must come back in
        order with the right correlation ids."""
        conns = self.conns if only is None else [self.conns[only]]
        start = time.perf_counter()
        deadline = start + duration if duration is not None else float("inf")
        issued = 0
        answered = 0
        bytes_out = 0
        bytes_in = 0
        lat: list[float] = []
        stopped = False
        select = self._sel.select
        perf = time.perf_counter
        pack = _I32.pack

        def issue(c: _Conn) -> None:
            nonlocal issued, bytes_out, stopped
            parts: list[bytes] = []
            now = perf()
            while not stopped and len(c.pending) < in_flight:
                if now >= deadline or (max_requests is not None and issued >= max_requests):
                    stopped = True
                    break
                frame = next_frame(c.idx)
                if frame is None:
                    break
                corr = c.corr = (c.corr + 1) & 0x7FFFFFFF
                parts += (frame.head, pack(corr), frame.tail)
                c.pending.append((corr, frame))
                c.sent_at.append(now)
                issued += 1
                bytes_out += frame.size
            if parts:
                c.wbuf += b"".join(parts)
                flush(c)

        def flush(c: _Conn) -> None:
            send_pending(self._sel, c, f"connection {c.idx}")

        for c in conns:
            issue(c)
        while any(c.pending for c in conns):
            events = select(self.stall_timeout)
            if not events:
                waiting = sum(len(c.pending) for c in conns)
                raise BenchError(f"no response within {self.stall_timeout:g}s "
                                 f"({waiting} requests outstanding)")
            for key, mask in events:
                c = key.data
                if mask & selectors.EVENT_WRITE:
                    flush(c)
                if not mask & selectors.EVENT_READ:
                    continue
                try:
                    data = c.sock.recv(_RECV)
                except BlockingIOError:
                    continue
                except OSError as exc:
                    raise BenchError(f"connection {c.idx}: receive failed: {exc}") from None
                if not data:
                    c.open = False
                    raise BenchError(f"server closed connection {c.idx} with "
                                     f"{len(c.pending)} requests outstanding")
                bytes_in += len(data)
                buf = c.rbuf
                buf += data
                pos = 0
                end = len(buf)
                now = perf()
                while end - pos >= 4:
                    (size,) = _I32.unpack_from(buf, pos)
                    if end - pos - 4 < size:
                        break
                    if size < 4:
                        raise BenchError(f"connection {c.idx}: response frame of {size} bytes")
                    (corr,) = _I32.unpack_from(buf, pos + 4)
                    if not c.pending:
                        raise BenchError(f"connection {c.idx}: unsolicited response {corr}")
                    want, frame = c.pending.popleft()
                    if corr != want:
                        raise BenchError(f"connection {c.idx}: correlation id {corr}, "
                                         f"expected {want}")
                    sent = c.sent_at.popleft()
                    if latencies:
                        lat.append(now - sent)
                    if on_response is not None:
                        with memoryview(buf) as view:
                            raw = view[pos + 4 : pos + 4 + size].tobytes()
                        on_response(c.idx, frame, raw)
                    pos += 4 + size
                    answered += 1
                if pos:
                    del buf[:pos]
                issue(c)
        return PhaseResult(answered, time.perf_counter() - start, bytes_out, bytes_in, lat)
