"""What the dispatcher hands the shell for one request frame: an `Answer`.

Most requests are only an answer, so the common case costs nothing to build: the
encoded response frame itself (or None, where Kafka sends no response, as for
acks=0). Anything more is a `Reply` with named fields. A pending answer, once
awaited, is an `Answer` again (a held request is served when released), so the shell
handles both in one loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from kcsim.storage import Record

    from ..state.answers import Released


class Reply(NamedTuple):
    """An answer with more than its frame.

    `frame` is the encoded response (None when Kafka sends none, or while it is
    pending); it may be sent only once `records` are durable, and `released` are
    handed to their requests at that point too. `pending`, when set, is awaited for
    the `Answer`; later requests of the connection wait behind it. `abandon` is called
    instead if the connection ends first. `close` ends the connection once everything
    up to this answer is sent."""

    frame: bytes | bytearray | None
    records: list[Record] | None = None
    released: Released | None = None
    pending: Coroutine[Any, Any, Answer] | None = None
    abandon: Callable[[], None] | None = None
    close: bool = False


Answer = bytes | bytearray | Reply | None
"""The encoded response frame alone (None: no response), or a Reply."""


def withdraw(reply: Reply) -> None:
    """The connection ended before the reply's pending answer was awaited."""
    if reply.pending is not None:
        reply.pending.close()
    if reply.abandon is not None:
        reply.abandon()
