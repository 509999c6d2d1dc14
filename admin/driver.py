"""Running a Step to completion: the loop that feeds effects' results back into it.

`run_sync` and `run_trio` are the same loop; only how an effect is performed differs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import AdminError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .effects import Step, T


def run_sync(step: Step[T], perform: Callable[[Any], Any]) -> T:
    value: Any = None
    error: AdminError | None = None
    while True:
        try:
            effect = step.throw(error) if error is not None else step.send(value)
        except StopIteration as stop:
            return stop.value
        value, error = None, None
        try:
            value = perform(effect)
        except AdminError as exc:
            error = exc


async def run_trio(step: Step[T], perform: Callable[[Any], Awaitable[Any]]) -> T:
    value: Any = None
    error: AdminError | None = None
    while True:
        try:
            effect = step.throw(error) if error is not None else step.send(value)
        except StopIteration as stop:
            return stop.value
        value, error = None, None
        try:
            value = await perform(effect)
        except AdminError as exc:
            error = exc


def outcome_of(run: Callable[[], T]) -> T | AdminError:
    """A step's result, or the AdminError it ended with (Gather's per-step answer)."""
    try:
        return run()
    except AdminError as exc:
        return exc
