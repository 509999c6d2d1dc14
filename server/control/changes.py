"""Change notices: how a wait learns that the broker's state may have changed.

The broker notifies after every batch of requests that reached a handler (or
the request log), every timer tick and every control action. Waiters re-check
their condition then, never on a timer: inside the broker's trio run they wait
on a trio Event, on other threads on a threading.Condition. With nobody waiting
a notice costs two attribute tests.
"""

from __future__ import annotations

import threading

import trio


class Changes:
    def __init__(self) -> None:
        self.version = 0  # bumped by every notice
        self._event: trio.Event | None = None  # set by the next notice, for trio waiters
        self._cond = threading.Condition()
        self._threads_waiting = 0

    def notify(self) -> None:
        """Called on the broker's trio thread."""
        self.version += 1
        event = self._event
        if event is not None:
            self._event = None
            event.set()
        if self._threads_waiting:
            with self._cond:
                self._cond.notify_all()

    async def changed(self) -> None:
        """Return at the next notice (inside the broker's trio run)."""
        if self._event is None:
            self._event = trio.Event()
        await self._event.wait()

    def wait_thread(self, seen: int, timeout: float) -> bool:
        """Block another thread until a notice after `seen` (True), or `timeout` seconds."""
        with self._cond:
            self._threads_waiting += 1
            try:
                return self._cond.wait_for(lambda: self.version != seen, timeout)
            finally:
                self._threads_waiting -= 1
