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

    __slots__ = ("_epoch_ms", "_frozen_at", "_on_change", "_skew_ms", "_trio_start", "_trio_time")

    def __init__(self) -> None:
        self._epoch_ms = time.time() * 1000.0
        self._trio_start: float | None = None  # trio's time at _epoch_ms, once serving
        # The run's clock read directly (its bound method): what `trio.current_time` does,
        # less the look-up of the run on every read.
        self._trio_time: Callable[[], float] = trio.current_time
        self._skew_ms = 0.0  # how far tests advanced the clock
        self._frozen_at: float | None = None  # the time it stands at while frozen
        self._on_change: Callable[[], None] | None = None

    def start(self, on_change: Callable[[], None] | None = None) -> None:
        """Follow trio's clock from now on (called in the server's trio run)."""
        now = self._running_ms()
        self._trio_time = trio.lowlevel.current_clock().current_time
        self._trio_start = self._trio_time()
        self._epoch_ms = now - self._skew_ms
        self._on_change = on_change

    def stop(self) -> None:
        """Back to the wall clock (the trio run is ending), keeping what was advanced."""
        now = self._running_ms()
        self._trio_start = None
        self._trio_time = trio.current_time
        self._epoch_ms = time.time() * 1000.0
        self._skew_ms = now - self._epoch_ms
        self._on_change = None

    def _running_ms(self) -> float:
        if self._trio_start is None:
            return time.time() * 1000.0 + self._skew_ms
        return self._epoch_ms + (self._trio_time() - self._trio_start) * 1000.0 + self._skew_ms

    def now_ms(self) -> int:
        """`_running_ms` inlined (the shell reads it for every batch of requests)."""
        frozen = self._frozen_at
        if frozen is not None:
            return int(frozen)
        start = self._trio_start
        if start is None:
            return int(time.time() * 1000.0 + self._skew_ms)
        return int(self._epoch_ms + (self._trio_time() - start) * 1000.0 + self._skew_ms)

    @property
    def frozen(self) -> bool:
        return self._frozen_at is not None

    def to_trio(self, ms: int) -> float:
        """The trio time at which this clock reads `ms` (infinity while frozen, unless due)."""
        frozen = self._frozen_at
        if frozen is not None:
            return -math.inf if ms <= frozen else math.inf
        assert self._trio_start is not None, "the clock is not started"
        return self._trio_start + (ms - self._epoch_ms - self._skew_ms) / 1000.0

    # -- what tests do ----------------------------------------------------------

    def advance(self, ms: int) -> None:
        """Move the time `ms` forward at once; every deadline in between falls due."""
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            raise ValueError(f"ms: expected a whole number of milliseconds >= 0, got {ms!r}")
        if self._frozen_at is not None:
            self._frozen_at += ms
        else:
            self._skew_ms += ms
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
            self._skew_ms += frozen - self._running_ms()
            self._frozen_at = None
            self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()
