"""Connections to one broker: a blocking socket one and a trio one, both around a Correlator.

Each opens with the ApiVersions handshake, so `served` tells the client which
versions it may use. Failures surface as AdminError (NETWORK_EXCEPTION or
REQUEST_TIMED_OUT) so callers handle them like any other retriable Kafka error.
"""

from __future__ import annotations

import socket
import struct
import time
from typing import TYPE_CHECKING, Any

import trio

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.primitives import DecodeError

from .errors import AdminError, check, network_error
from .wire import (
    API_VERSIONS,
    API_VERSIONS_VERSION,
    Correlator,
    ProtocolViolation,
    Response,
    api_versions_request,
    api_versions_retry_version,
    served_table,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

_BROKEN = (OSError, ProtocolViolation, DecodeError, EOFError)
# A reader is a system task: whatever ends its stream must fail its waiters, never the run.
_READER_ENDS = (trio.BrokenResourceError, trio.ClosedResourceError, ValueError, KeyError,
                struct.error)
_RECEIVE_BYTES = 65536


def parse_bootstrap(servers: str | Sequence[str]) -> list[tuple[str, int]]:
    """'h1:9092,h2:9093' (or a list of 'host:port') as [(host, port)]."""
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    out = []
    for item in items:
        item = item.strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"bootstrap server {item!r} is not host:port")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise ValueError("no bootstrap server given")
    return out


def _timed_out(address: str) -> AdminError:
    return AdminError(ErrorCode.REQUEST_TIMED_OUT, f"no answer from {address} in time")


class SyncConnection:
    """A blocking connection to one broker."""

    def __init__(self, host: str, port: int, client_id: str) -> None:
        self.host, self.port = host, port
        self.address = f"{host}:{port}"
        self.served: dict[int, tuple[int, int]] = {}
        self._correlator = Correlator(client_id)
        self._sock: socket.socket | None = None

    @property
    def open(self) -> bool:
        return self._sock is not None

    def connect(self, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _timed_out(self.address)
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=remaining)
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except TimeoutError:
            raise _timed_out(self.address) from None
        except OSError as exc:
            raise network_error(self.address, exc) from None
        version = API_VERSIONS_VERSION
        reply = self.call(API_VERSIONS, version, api_versions_request(), deadline)
        retry = api_versions_retry_version(reply.body)
        if retry is not None:
            reply = self.call(API_VERSIONS, retry, api_versions_request(), deadline)
        check(reply.body.error_code)
        self.served = served_table(reply.body)

    def call(
        self, wire_key: int, version: int, body: Any, deadline: float,
        schema_key: int | None = None,
    ) -> Response:
        sock = self._sock
        if sock is None:
            raise network_error(self.address, "not connected")
        correlation_id, frame = self._correlator.request(wire_key, version, body, schema_key)
        try:
            self._settimeout(sock, deadline)
            sock.sendall(frame)
            while True:
                self._settimeout(sock, deadline)
                data = sock.recv(_RECEIVE_BYTES)
                if not data:
                    raise EOFError("the broker closed the connection")
                for response in self._correlator.receive(data):
                    if response.correlation_id == correlation_id:
                        return response
        except TimeoutError:
            self._correlator.forget(correlation_id)
            raise _timed_out(self.address) from None
        except _BROKEN as exc:
            self.close()
            raise network_error(self.address, exc) from None

    def _settimeout(self, sock: socket.socket, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        sock.settimeout(remaining)

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()


class _Waiter:
    def __init__(self) -> None:
        self.event = trio.Event()
        self.response: Response | None = None
        self.error: AdminError | None = None


class TrioConnection:
    """A trio connection to one broker; requests from many tasks share it (pipelined).

    A reader (a trio system task, so a caller's exceptions never come back wrapped in an
    exception group) hands each response to the task waiting for its correlation id.
    """

    def __init__(self, host: str, port: int, client_id: str) -> None:
        self.host, self.port = host, port
        self.address = f"{host}:{port}"
        self.served: dict[int, tuple[int, int]] = {}
        self._correlator = Correlator(client_id)
        self._stream: trio.SocketStream | None = None
        self._send_lock = trio.Lock()
        self._waiters: dict[int, _Waiter] = {}
        self._failed: AdminError | None = None
        self._reader = trio.CancelScope()

    @property
    def open(self) -> bool:
        return self._stream is not None and self._failed is None

    async def connect(self, deadline: float) -> None:
        with trio.move_on_at(_trio_deadline(deadline)) as scope:
            try:
                self._stream = await trio.open_tcp_stream(self.host, self.port)
            except OSError as exc:
                raise network_error(self.address, exc) from None
        if scope.cancelled_caught:
            raise _timed_out(self.address)
        trio.lowlevel.spawn_system_task(self._read_loop, name=f"kcsim-admin reader {self.address}")
        reply = await self.call(API_VERSIONS, API_VERSIONS_VERSION, api_versions_request(), deadline)
        retry = api_versions_retry_version(reply.body)
        if retry is not None:
            reply = await self.call(API_VERSIONS, retry, api_versions_request(), deadline)
        check(reply.body.error_code)
        self.served = served_table(reply.body)

    async def call(
        self, wire_key: int, version: int, body: Any, deadline: float,
        schema_key: int | None = None,
    ) -> Response:
        if self._failed is not None:
            raise self._failed
        stream = self._stream
        if stream is None:
            raise network_error(self.address, "not connected")
        correlation_id, frame = self._correlator.request(wire_key, version, body, schema_key)
        waiter = self._waiters[correlation_id] = _Waiter()
        sent = False
        try:
            with trio.move_on_at(_trio_deadline(deadline)) as scope:
                async with self._send_lock:
                    await stream.send_all(frame)
                    sent = True
                await waiter.event.wait()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self._fail(network_error(self.address, exc))
        finally:
            self._waiters.pop(correlation_id, None)
        if scope.cancelled_caught:
            self._correlator.forget(correlation_id)
            if not sent:  # a frame cut short leaves the stream unusable
                self._fail(network_error(self.address, "request interrupted"))
            raise _timed_out(self.address)
        if waiter.error is not None:
            raise waiter.error
        if self._failed is not None and waiter.response is None:
            raise self._failed
        assert waiter.response is not None
        return waiter.response

    async def _read_loop(self) -> None:
        assert self._stream is not None
        with self._reader:
            try:
                while True:
                    data = await self._stream.receive_some(_RECEIVE_BYTES)
                    if not data:
                        raise EOFError("the broker closed the connection")
                    for response in self._correlator.receive(data):
                        waiter = self._waiters.get(response.correlation_id)
                        if waiter is not None:
                            waiter.response = response
                            waiter.event.set()
            except (*_BROKEN, *_READER_ENDS) as exc:
                self._fail(network_error(self.address, exc))

    def _fail(self, error: AdminError) -> None:
        if self._failed is None:
            self._failed = error
        for waiter in self._waiters.values():
            waiter.error = self._failed
            waiter.event.set()

    async def aclose(self) -> None:
        self._reader.cancel()
        stream, self._stream = self._stream, None
        self._fail(network_error(self.address, "connection closed"))
        if stream is not None:
            await stream.aclose()


def _trio_deadline(monotonic_deadline: float) -> float:
    """A time.monotonic() deadline on trio's clock."""
    return trio.current_time() + (monotonic_deadline - time.monotonic())
