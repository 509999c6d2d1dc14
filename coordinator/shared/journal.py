"""What a call changed in soft state, kept so a call that raises can be put back.

Durable state needs no journal: a handler only computes records, and they are
folded in after it returns. Soft state (members parked in a rebalance, timers,
parked requests) is changed in place as a handler goes, so before the first
change to an object in a call its before-image is taken, and undo steps are
noted for changes to shared structures; `rollback` restores them all, newest
first. Outside a call (`open` false) nothing is kept.

Each call has a number; an object remembers the number of the call that last
saved it (`journaled`), so "once per call" costs one comparison and no lookup.
A step is one flat tuple, the function then its arguments, and undo functions are
plain functions where they can be (`set.add`, not a bound method): the paths every
request takes allocate one tuple per change and nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVarTuple, cast

if TYPE_CHECKING:
    from collections.abc import Callable

_Args = TypeVarTuple("_Args")


class _Undo(Protocol):
    """A step's function, as `rollback` calls it: with the arguments noted beside it."""

    def __call__(self, *args: object) -> None: ...


# Undo functions for sets, unbound: a step names its set as the first argument.
set_add = set.add
set_discard = set.discard
set_update = set.update


class Journal:
    __slots__ = ("_kept", "call", "open", "steps")

    def __init__(self) -> None:
        self.open = False
        self.call = 0  # the number of the call in progress, or of the last one
        self._kept: set[int] = set()  # ids of objects `keep_once` noted in this call
        # Undo steps, oldest first: (function, *arguments), each of its own shape. The
        # paths every request takes append to it directly while `open`, sparing a call
        # to `on_undo`; `on_undo` and `keep_once` check a step's arguments against it.
        self.steps: list[tuple[object, ...]] = []

    def begin(self) -> None:
        self.open = True
        self.call += 1

    def on_undo(self, step: Callable[[*_Args], None], *args: *_Args) -> None:
        """Note `step(*args)` to run on rollback (a bound method and its arguments cost
        less than a closure on the paths every request takes)."""
        if self.open:
            self.steps.append((step, *args))

    def keep_once(self, obj: object, step: Callable[[*_Args], None], *args: *_Args) -> None:
        """`on_undo`, only for the first change of `obj` in this call (a whole copy of a
        table need be taken once, however many of its keys the call removes)."""
        if self.open and id(obj) not in self._kept:
            self._kept.add(id(obj))
            self.steps.append((step, *args))

    def commit(self) -> None:
        self.open = False
        if self.steps:
            self.steps.clear()
            if self._kept:
                self._kept.clear()

    def rollback(self) -> None:
        undo, self.steps = self.steps, []
        self.commit()
        self._kept.clear()
        for step in reversed(undo):
            # The one promise mypy cannot check: a step's first item is a function of the rest.
            cast("_Undo", step[0])(*step[1:])
