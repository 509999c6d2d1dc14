"""A socket error on one connection ends that connection and nothing else."""

from __future__ import annotations

import errno
import socket
import struct

import pytest

from kcsim.protocol.codecs import codec
from kcsim.protocol.headers import RequestHeader, encode_request_header
from kcsim.server.shell import socket_io


def _api_versions(sock: socket.socket, correlation_id: int) -> int:
    body = encode_request_header(RequestHeader(18, 0, correlation_id, "t"), 1)
    body += codec(18, "request").encode(codec(18, "request").cls(), 0)
    sock.sendall(struct.pack(">i", len(body)) + body)
    size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
    frame = sock.recv(size, socket.MSG_WAITALL)
    return int(struct.unpack_from(">i", frame)[0])


@pytest.mark.parametrize("error", [errno.ETIMEDOUT, errno.EHOSTUNREACH, errno.ECONNRESET])
def test_a_failing_socket_closes_only_its_connection(kcsim, monkeypatch, error):
    real_receive = socket_io.DirectSocket.receive
    doomed: set[int] = set()

    async def receive(self, max_bytes):
        data = await real_receive(self, max_bytes)
        if self._sock.getpeername()[1] in doomed:
            raise OSError(error, "injected")
        return data

    monkeypatch.setattr(socket_io.DirectSocket, "receive", receive)
    with socket.create_connection(("127.0.0.1", kcsim.port)) as good, \
            socket.create_connection(("127.0.0.1", kcsim.port)) as bad:
        assert _api_versions(good, 1) == 1
        doomed.add(bad.getsockname()[1])
        bad.sendall(b"\x00\x00\x00\x04abcd")
        assert bad.recv(1) == b""  # closed by the server
        assert _api_versions(good, 2) == 2  # the server and the other connection carry on
    with socket.create_connection(("127.0.0.1", kcsim.port)) as later:
        assert _api_versions(later, 3) == 3
