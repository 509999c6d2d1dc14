"""What a handler knows about the request it serves besides its body."""

from __future__ import annotations

from typing import Any


class RequestContext:
    """Per-request facts: version, client identity, and the token for pending answers."""

    __slots__ = (
        "api_key",
        "api_version",
        "client_host",
        "client_id",
        "correlation_id",
        "response",
        "waiter",
    )

    def __init__(self, api_key: int, api_version: int, correlation_id: int,
                 client_id: str, client_host: str) -> None:
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id
        self.client_id = client_id
        self.client_host = client_host
        self.waiter: Any = None  # a trio.Event while the answer is pending
        self.response: Any = None

    @property
    def token(self) -> object:
        """The request itself: a property, not a field, so that no request refers to
        itself and each is freed as soon as it is answered (no cyclic garbage)."""
        return self


class Durable:
    """An answer that is ready but may be sent only once `records` are on disk.

    `released` are answers of other, waiting requests that the same change
    completed; they are handed over after the records are durable too. The
    server persists the records of every such answer it has in hand at once.
    """

    __slots__ = ("records", "released", "response")

    def __init__(self, response: Any, records: list[Any], released: list[tuple[Any, Any]]) -> None:
        self.response = response
        self.records = records
        self.released = released
