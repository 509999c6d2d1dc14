"""What a handler knows about its request, and the one shape of what the broker answers.

A handler returns its response, or a `Durable` (a response that may go out only
once some records are on disk), or a `Pending` (the answer comes later: a long
poll, a rebalance barrier). `Broker.process` turns each of them, encoded, into a
`Reply`, the one type the shell handles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    import trio

    from kcsim.storage import Record

    from .listeners import Listener


class Peer:
    """The connection a request came on: the client's address, the connection's number,
    and the listener it came through (as advertised)."""

    __slots__ = ("host", "id", "listener")

    def __init__(self, host: str, connection_id: int, listener: Listener) -> None:
        self.host = host
        self.id = connection_id
        self.listener = listener


class RequestContext:
    """Per-request facts: version, client identity, the listener the client came
    through (as advertised: where it is told to connect), and the token for pending answers."""

    __slots__ = ("api_key", "api_version", "client_host", "client_id", "correlation_id",
                 "listener", "response", "waiter")

    def __init__(self, api_key: int, api_version: int, correlation_id: int,
                 client_id: str, client_host: str, listener: Listener) -> None:
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id
        self.client_id = client_id
        self.client_host = client_host
        self.listener = listener
        self.waiter: trio.Event | None = None  # while the answer is pending
        self.response: Any = None

    @property
    def token(self) -> object:
        """The request itself: a property, not a field, so that no request refers to
        itself and each is freed as soon as it is answered (no cyclic garbage)."""
        return self


Released = list[tuple[Any, Any]]
"""Answers of other, parked requests that a change completed: (token, response); an
`AfterDurable` token instead runs its step."""


class AfterDurable:
    """A step that must run once a change's records are durable and before its answer goes
    out, whatever becomes of the connection (a transaction's markers): it travels with the
    released answers, which the shell hands over at exactly that point."""

    __slots__ = ("step",)

    def __init__(self, step: Callable[[], None]) -> None:
        self.step = step


class Durable:
    """An answer that is ready but may be sent only once `records` are on disk.

    `released` are answers of parked requests the same change completed; they
    are handed over once the records are durable too."""

    __slots__ = ("records", "released", "response")

    def __init__(self, response: Any, records: list[Record], released: Released) -> None:
        self.response = response
        self.records = records
        self.released = released


class Pending:
    """An answer that comes later. `records` and `released` (as in Durable) are made
    durable and handed over before the shell waits for `answer`. `abandon` is
    called instead when the connection ends before the shell started waiting."""

    __slots__ = ("abandon", "answer", "records", "released")

    def __init__(self, answer: Coroutine[Any, Any, Any], records: list[Record] | None = None,
                 released: Released | None = None,
                 abandon: Callable[[], None] | None = None) -> None:
        self.answer = answer
        self.records = records or []
        self.released = released or []
        self.abandon = abandon


Reply = tuple[
    "bytes | bytearray | None",  # frame
    "list[Record] | None",  # records
    "Released | None",  # released
    "Coroutine[Any, Any, bytes | bytearray | Reply | None] | None",  # pending
    "Callable[[], None] | None",  # abandon
    bool,  # close
]
"""What the broker gives the shell for one request frame: (frame, records,
released, pending, abandon, close).

`frame` is the encoded response (None when Kafka sends none, or while it is
pending); it may be sent only once `records` are durable, and `released` are
handed to their requests at that point too. `pending`, when set, is awaited for
the encoded answer, or for another Reply (a request a fault rule held is served
once released); later requests of the connection wait behind it. `abandon` is
called instead if the connection ends first. `close` ends the connection once
everything up to this answer is sent.

A plain tuple: most requests are answered on paths where building it costs one
allocation, and the shell unpacks it in one step. `reply` builds one by name.
"""


def reply(frame: bytes | bytearray | None, records: list[Record] | None = None,
          released: Released | None = None,
          pending: Coroutine[Any, Any, bytes | bytearray | Reply | None] | None = None,
          abandon: Callable[[], None] | None = None, close: bool = False) -> Reply:
    return (frame, records, released, pending, abandon, close)


def withdraw(parts: Reply) -> None:
    """The connection ended before the reply's pending answer was awaited."""
    _, _, _, pending, abandon, _ = parts
    if pending is not None:
        pending.close()
    if abandon is not None:
        abandon()
