"""What a call changed in soft state, kept so a call that raises can be put back.

Durable state needs no journal: a handler only computes records, and they are
folded in after it returns. Soft state (members parked in a rebalance, timers,
parked requests) is changed in place as a handler goes, so before the first
change to an object in a call its before-image is taken, and undo steps are
noted for changes to shared structures; `rollback` restores them all, newest
first. Outside a call (`open` false) nothing is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable


class Restorable(Protocol):
    """An object the journal can take a before-image of and put back."""

    def image(self) -> object: ...

    def restore(self, image: object) -> None: ...


class Journal:
    __slots__ = ("_saved", "_undo", "open")

    def __init__(self) -> None:
        self.open = False
        self._saved: set[int] = set()
        self._undo: list[tuple[Callable[..., None], tuple[object, ...]]] = []

    def begin(self) -> None:
        self.open = True

    def save(self, obj: Restorable) -> None:
        """Keep obj's before-image, once per call."""
        if self.open and id(obj) not in self._saved:
            self._saved.add(id(obj))
            self._undo.append((obj.restore, (obj.image(),)))

    def on_undo(self, step: Callable[..., None], *args: object) -> None:
        """Note `step(*args)` to run on rollback (a bound method and its arguments cost
        less than a closure on the paths every request takes)."""
        if self.open:
            self._undo.append((step, args))

    def commit(self) -> None:
        self.open = False
        if self._undo:
            self._saved.clear()
            self._undo.clear()

    def rollback(self) -> None:
        undo, self._undo = self._undo, []
        self.commit()
        self._saved.clear()
        for step, args in reversed(undo):
            step(*args)
