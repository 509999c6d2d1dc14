"""Per-second rates of running counts, as Kafka's `*-rate` metrics show them.

Kafka's rate sensors average over a sliding window (two 30 s samples). Here a rate
is the count's growth over the last WINDOW_S of scrapes: each scrape notes (time,
count), and the rate is measured from the oldest note still inside the window (the
broker's start, before any), over at least a second. Nothing is done per event.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

WINDOW_S = 30.0


class WindowedRate:
    """The rate of one count, from the counts noted at scrapes."""

    __slots__ = ("_clock", "_notes")

    def __init__(self, since: float, clock: Callable[[], float] = time.monotonic) -> None:
        """`since`: when the count was 0 (the broker's start), on `clock`."""
        self._clock = clock
        self._notes: deque[tuple[float, int]] = deque([(since, 0)])

    def rate(self, count: int) -> float:
        """Per second over the window, `count` being the count now; notes it."""
        now = self._clock()
        notes = self._notes
        while len(notes) > 1 and notes[1][0] <= now - WINDOW_S:
            notes.popleft()  # the oldest kept is the last one at or before the window's start
        since, then = notes[0]
        notes.append((now, count))
        return (count - then) / max(now - since, 1.0)
