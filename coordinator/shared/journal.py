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

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


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
        # Undo steps, oldest first: (function, *arguments). The paths every request
        # takes append to it directly while `open`, sparing a call to `on_undo`.
        # Any: a step is a function and its own arguments, each step of another shape.
        self.steps: list[tuple[Any, ...]] = []

    def begin(self) -> None:
        self.open = True
        self.call += 1

    # `...` (an explicit Any): a step takes whatever arguments it was noted with.
    def on_undo(self, step: Callable[..., None], *args: object) -> None:
        """Note `step(*args)` to run on rollback (a bound method and its arguments cost
        less than a closure on the paths every request takes)."""
        if self.open:
            self.steps.append((step, *args))

    # `...`: as for `on_undo`.
    def keep_once(self, obj: object, step: Callable[..., None], *args: object) -> None:
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
            step[0](*step[1:])
