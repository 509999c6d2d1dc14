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
        self._undo: list[Callable[[], None]] = []

    def begin(self) -> None:
        self.open = True

    def save(self, obj: Restorable) -> None:
        """Keep obj's before-image, once per call."""
        if self.open and id(obj) not in self._saved:
            self._saved.add(id(obj))
            image = obj.image()
            self._undo.append(lambda: obj.restore(image))

    def on_undo(self, step: Callable[[], None]) -> None:
        if self.open:
            self._undo.append(step)

    def commit(self) -> None:
        self.open = False
        self._saved.clear()
        self._undo.clear()

    def rollback(self) -> None:
        undo, self._undo = self._undo, []
        self.commit()
        for step in reversed(undo):
            step()
