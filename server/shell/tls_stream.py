"""An SSL listener's connection: trio's SSLStream behind DirectSocket's small interface.

The handshake runs under a time limit on trio's clock (not the broker's, which
tests may freeze): a client that connects and sends nothing, or stops half-way
through its ClientHello, holds a task and a descriptor until then and nothing
else. Before the handshake the first byte is peeked at: a TLS connection starts
with a handshake record (0x16), so a PLAINTEXT Kafka client (its first request's
size, 0x00...) or any other garbage is told apart from a failed handshake and
closed with one line saying which.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import trio

from ..tls import ANONYMOUS, principal_of

if TYPE_CHECKING:
    import ssl

    from trio import SocketStream

_HANDSHAKE_RECORD = 0x16


class HandshakeFailed(Exception):
    """The connection never became a TLS one; the message says why, for one log line."""


class TlsStream:
    """A connection after its TLS handshake: receive, send_all, close, and its principal."""

    __slots__ = ("_sock", "_ssl", "principal")

    def __init__(self, ssl_stream: trio.SSLStream[SocketStream], sock: trio.socket.SocketType,
                 principal: str) -> None:
        self._ssl = ssl_stream
        self._sock = sock
        self.principal = principal

    async def receive(self, max_bytes: int) -> bytes | bytearray:
        """Some bytes, or b"" once the peer closed its side."""
        return await self._ssl.receive_some(max_bytes)

    async def send_all(self, data: bytes | bytearray) -> None:
        await self._ssl.send_all(data)

    def close(self) -> None:
        """Close the socket at once (no close_notify: Kafka clients do not wait for one)."""
        self._sock.close()


async def handshake(stream: SocketStream, context: ssl.SSLContext, timeout_s: float) -> TlsStream:
    """The connection as a TlsStream once its handshake is done; HandshakeFailed otherwise
    (the caller closes the stream)."""
    sock = stream.socket
    with trio.move_on_after(timeout_s):
        try:
            first = await sock.recv(1, socket.MSG_PEEK)
        except OSError as exc:
            raise HandshakeFailed(f"before the TLS handshake: {exc}") from None
        if not first:
            raise HandshakeFailed("closed before the TLS handshake")
        if first[0] != _HANDSHAKE_RECORD:
            what = ("a PLAINTEXT client?" if first[0] == 0 else f"first byte 0x{first[0]:02x}")
            raise HandshakeFailed(f"not a TLS handshake ({what})")
        ssl_stream = trio.SSLStream(stream, context, server_side=True, https_compatible=True)
        try:
            await ssl_stream.do_handshake()
        except trio.BrokenResourceError as exc:
            cause = exc.__cause__
            reason = getattr(cause, "reason", None) or cause or exc
            raise HandshakeFailed(f"TLS handshake failed: {reason}") from None
        der = ssl_stream.getpeercert(binary_form=True)
        return TlsStream(ssl_stream, sock, principal_of(der) if der else ANONYMOUS)
    raise HandshakeFailed(f"TLS handshake not done within {timeout_s * 1000:.0f} ms")
