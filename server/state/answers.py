"""What a handler answers besides a plain response: `Durable` (sent once some records are
on disk), `Pending` (an answer that comes later), and the answers of parked requests a
change completed (`Released`, with `AfterDurable` steps among them).

The request layer turns each into its `Reply`; the state builds them too (`change`,
`tick`), so they live here, beneath both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

    from kcsim.storage import Record


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


def finished(result: Any, finish: Callable[[Any], Any]) -> Any:
    """A handler's answer (None, plain, `Durable` or `Pending`) with `finish` applied to its
    response, now or once it comes: what a layer around a handler changes of its answer."""
    if result is None:
        return None
    kind = type(result)
    if kind is Durable:
        result.response = finish(result.response)
        return result
    if kind is Pending:
        result.answer = _finished_later(result.answer, finish)
        return result
    return finish(result)


async def _finished_later(answer: Awaitable[Any], finish: Callable[[Any], Any]) -> Any:
    response = await answer
    return None if response is None else finish(response)
