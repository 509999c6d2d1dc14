"""The server's clock: what time it is for every deadline the broker keeps.

It reads trio's clock (so a test on trio's MockClock drives it), starting from the
wall-clock time at start-up, plus however far a test advanced it; it can be
frozen and resumed. The shell owns one and arms its timer by it; a change
(advance, freeze, resume) is reported to the shell, which fires what fell due.
Clients keep their own real clocks: advancing this one makes the broker see
time pass that the clients did not.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from collections.abc import Callable


class Clock:
    """Milliseconds since the epoch as the broker sees them."""

    __slots__ = ("_frozen_at", "_offset_ms", "_on_change", "_source", "_started")

    def __init__(self) -> None:
        # The time is `_source()` seconds, as milliseconds, plus `_offset_ms`: the wall
        # clock until the trio run starts, then the run's clock read directly (what
        # `trio.current_time` does, less the look-up of the run on every read). Every
        # advance, and where the time continued from on a change of source, is in the offset.
        self._source: Callable[[], float] = time.time
        self._offset_ms = 0.0
        self._started = False
        self._frozen_at: float | None = None  # the time it stands at while frozen
        self._on_change: Callable[[], None] | None = None

    def start(self, on_change: Callable[[], None] | None = None) -> None:
        """Follow trio's clock from now on (called in the server's trio run)."""
        self._follow(trio.lowlevel.current_clock().current_time)
        self._started = True
        self._on_change = on_change

    def stop(self) -> None:
        """Back to the wall clock (the trio run is ending), keeping what was advanced."""
        self._follow(time.time)
        self._started = False
        self._on_change = None

    def _follow(self, source: Callable[[], float]) -> None:
        """Read `source` from now on, going on from the time it is now."""
        now = self._running_ms()
        self._source = source
        self._offset_ms = now - source() * 1000.0

    def _running_ms(self) -> float:
        return self._source() * 1000.0 + self._offset_ms

    def now_ms(self) -> int:
        """`_running_ms` inlined, unless frozen (the shell reads it for every batch of requests)."""
        frozen = self._frozen_at
        if frozen is not None:
            return int(frozen)
        return int(self._source() * 1000.0 + self._offset_ms)

    @property
    def frozen(self) -> bool:
        return self._frozen_at is not None

    def to_trio(self, ms: int) -> float:
        """The trio time at which this clock reads `ms` (infinity while frozen, unless due)."""
        frozen = self._frozen_at
        if frozen is not None:
            return -math.inf if ms <= frozen else math.inf
        assert self._started, "the clock is not started"
        return (ms - self._offset_ms) / 1000.0

    # -- what tests do ----------------------------------------------------------

    def advance(self, ms: int) -> None:
        """Move the time `ms` forward at once; every deadline in between falls due."""
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            raise ValueError(f"ms: expected a whole number of milliseconds >= 0, got {ms!r}")
        if self._frozen_at is not None:
            self._frozen_at += ms
        else:
            self._offset_ms += ms
        self._changed()

    def freeze(self) -> None:
        """Stop the time: nothing falls due until it is advanced or resumed."""
        if self._frozen_at is None:
            self._frozen_at = float(self.now_ms())
            self._changed()

    def resume(self) -> None:
        """Let the time run again from where it stands (no jump for the time frozen)."""
        frozen = self._frozen_at
        if frozen is not None:
            self._offset_ms += frozen - self._running_ms()
            self._frozen_at = None
            self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()
