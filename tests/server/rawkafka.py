"""Raw Kafka frames for the connection tests: thousands of sockets are cheaper than clients.

`request_frame` encodes one request (size prefix included); `Frames` splits a byte
stream into response frames; `decode_response` reads one. `TrioWire` is one trio
connection making calls in order.
"""

from __future__ import annotations

import os
import resource
import struct
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec, request_class
from kcsim.protocol.headers import (
    RequestHeader,
    decode_response_header,
    encode_request_header,
    request_header_version,
    response_header_version,
)

if TYPE_CHECKING:
    import trio

API_VERSIONS, API_VERSIONS_V = 18, 3
_SIZE = struct.Struct(">i")


def request_frame(api_key: int, version: int, correlation_id: int, request: Any,
                  client_id: str = "kcsim-tests") -> bytes:
    header = encode_request_header(RequestHeader(api_key, version, correlation_id, client_id),
                                   request_header_version(APIS[api_key], version))
    payload = header + codec(api_key, "request").encode(request, version)
    return _SIZE.pack(len(payload)) + payload


def api_versions_frame(correlation_id: int) -> bytes:
    cls = request_class(API_VERSIONS)
    return request_frame(API_VERSIONS, API_VERSIONS_V, correlation_id,
                         cls(client_software_name="kcsim-tests", client_software_version="1"))


def decode_response(api_key: int, version: int, frame: bytes) -> tuple[int, Any]:
    """(correlation id, response) of one frame without its size prefix."""
    correlation_id, pos = decode_response_header(frame, response_header_version(APIS[api_key], version))
    return correlation_id, codec(api_key, "response").decode(frame[pos:], version)


def correlation_id(frame: bytes) -> int:
    return int(_SIZE.unpack_from(frame, 0)[0])


class Frames:
    """Reassembles response frames (without size prefixes) from received chunks."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buf += data
        out = []
        while len(self._buf) >= 4:
            (size,) = _SIZE.unpack_from(self._buf, 0)
            if len(self._buf) < 4 + size:
                break
            out.append(bytes(self._buf[4 : 4 + size]))
            del self._buf[: 4 + size]
        return out


class TrioWire:
    """One connection over trio; `call` sends a request and returns its decoded response."""

    def __init__(self, stream: trio.SocketStream, client_id: str = "kcsim-tests") -> None:
        self.stream = stream
        self.client_id = client_id
        self._frames = Frames()
        self._ready: list[bytes] = []
        self._corr = 0

    async def call(self, api_key: int, version: int, request: Any) -> Any:
        return (await self.pipeline([(api_key, version, request)]))[0]

    async def pipeline(self, requests: list[tuple[int, int, Any]]) -> list[Any]:
        """Send (api key, version, request) each, in one write, then read every response,
        checking that they come back in the order sent."""
        first = self._corr + 1
        frames = []
        for api_key, version, request in requests:
            self._corr += 1
            frames.append(request_frame(api_key, version, self._corr, request, self.client_id))
        await self.stream.send_all(b"".join(frames))
        responses = []
        for n, (api_key, version, _request) in enumerate(requests):
            while not self._ready:
                data = await self.stream.receive_some(65536)
                if not data:
                    raise ConnectionError("closed by the server")
                self._ready += self._frames.feed(data)
            got, response = decode_response(api_key, version, self._ready.pop(0))
            assert got == first + n, f"correlation id {got}, expected {first + n}"
            responses.append(response)
        return responses


def raise_open_file_limit(needed: int) -> None:
    """Let this process hold `needed` descriptors (soft limit up to the hard one), or skip loudly."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"NOT RUN: this test needs {needed} open files in one process, but the hard "
                    f"RLIMIT_NOFILE is only {hard}; raise it (ulimit -Hn) to run it")
    if soft != resource.RLIM_INFINITY and soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def proc_status(pid: int, field: str) -> int:
    """A /proc/<pid>/status value in kB (VmRSS, VmHWM)."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)
