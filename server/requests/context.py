"""What the request layer knows of a request besides its body: the connection it came on
(`Peer`) and the per-request facts a handler reads (`RequestContext`).

A handler returns its response, or a `Durable` or a `Pending` (`state/answers.py`);
`Dispatcher.process` turns each of them, encoded, into what the shell sends
(`reply.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..tls import ANONYMOUS

if TYPE_CHECKING:
    import trio

    from ..listeners import Listener


class Peer:
    """The connection a request came on: the client's address, the connection's number,
    the listener it came through (as advertised), and who the client authenticated as
    (Kafka's principal: `User:ANONYMOUS`, or `User:` + its TLS certificate's subject)."""

    __slots__ = ("host", "id", "listener", "principal")

    def __init__(self, host: str, connection_id: int, listener: Listener,
                 principal: str = ANONYMOUS) -> None:
        self.host = host
        self.id = connection_id
        self.listener = listener
        self.principal = principal


class RequestContext:
    """Per-request facts: version, client identity, the listener the client came
    through (as advertised: where it is told to connect), and the token for pending answers."""

    __slots__ = ("api_key", "api_version", "client_host", "client_id", "correlation_id",
                 "listener", "principal", "response", "waiter")

    def __init__(self, api_key: int, api_version: int, correlation_id: int,
                 client_id: str, client_host: str, listener: Listener,
                 principal: str = ANONYMOUS) -> None:
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id
        self.client_id = client_id
        self.client_host = client_host
        self.listener = listener
        self.principal = principal  # the connection's (Peer.principal)
        self.waiter: trio.Event | None = None  # while the answer is pending
        self.response: Any = None

    @property
    def token(self) -> object:
        """The request itself: a property, not a field, so that no request refers to
        itself and each is freed as soon as it is answered (no cyclic garbage)."""
        return self
