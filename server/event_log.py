"""`kcsim serve --event-log FILE`: every group event, as it happens, appended to FILE as a JSON line.

The broker's loop only queues: the history's listener (`EventHistory.listen`) appends
the event to a bounded queue and wakes the writer, a trio task that takes what is
queued and writes it in a worker thread, one `event_fields` JSON object per line,
flushed after each batch so that `tail -f` shows it at once. A writer that falls
behind (a slow or stuck disk) never holds the broker back: once :data:`QUEUE_BOUND`
events wait, newer ones are dropped and counted, and the next batch ends with a
`{"dropped": N}` line where they would have been (the seq numbers skip them too),
with a warning in the server's log.

Only events from this run are written: the listener is registered after start-up's
replay, so a file tailed over restarts holds each event once (the history goes on
numbering after the replayed events). Events still queued at shutdown are written
before the file is closed. A file that can no longer be written (a full disk) is
said once in the server's log and given up: the broker goes on without it.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import IO, TYPE_CHECKING, Any

import msgspec
import trio

from kcsim.coordinator.shared.events import event_fields

if TYPE_CHECKING:
    from kcsim.coordinator.records import GroupEventValue
    from kcsim.coordinator.shared.events import EventHistory

log = logging.getLogger("kcsim.events")

QUEUE_BOUND = 10_000
"""Events waiting for the writer, at most; newer ones are dropped and counted."""

_encode = msgspec.json.Encoder().encode


class EventLogFile:
    """The bounded queue between the broker's loop and the file, and the task that drains it."""

    def __init__(self, path: str, bound: int = QUEUE_BOUND) -> None:
        self.path = path
        self.bound = bound
        self.written = 0  # events written to the file
        self.dropped = 0  # events dropped since the writer began (all runs of `run`)
        self._queued: deque[GroupEventValue] = deque()
        self._dropped_now = 0  # dropped after the events queued now
        self._wake = trio.lowlevel.ParkingLot()
        self._writing = False
        self._idle = trio.lowlevel.ParkingLot()
        self._file: IO[bytes] | None = None

    def put(self, event: GroupEventValue) -> None:
        """The history's listener: queue the event, or count it dropped. Never blocks."""
        if len(self._queued) >= self.bound:
            self._dropped_now += 1
            self.dropped += 1
            return
        self._queued.append(event)
        self._wake.unpark_all()

    def open(self) -> None:
        """Open the file for appending (OSError if it cannot be): at start-up, before the
        broker serves, so that a path that cannot be written stops it at once."""
        self._file = open(self.path, "ab")  # noqa: SIM115 (closed by `run`)

    async def run(self, history: EventHistory, *,
                  task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Listen to `history` and write what comes to the opened file until cancelled;
        then write what is still queued and close the file."""
        file = self._file
        if file is None:
            raise RuntimeError("open the event log before running it")
        stop = history.listen(self.put)
        try:
            task_status.started()
            while True:
                if not self._queued and not self._dropped_now:
                    await self._wake.park()
                await self._write_batch(file)
        except OSError as exc:  # the broker goes on without its event log
            log.error("cannot write the event log %s: %s; no more events are written there",
                      self.path, exc)
        finally:
            stop()
            with trio.CancelScope(shield=True):
                try:
                    await self._write_batch(file)
                    file.close()
                except OSError:
                    pass  # said above, or the file goes with the process
            self._queued.clear()
            self._dropped_now = 0
            self._idle.unpark_all()

    async def caught_up(self) -> None:
        """Return once every event queued so far is in the file (or counted dropped there)."""
        while self._queued or self._dropped_now or self._writing:
            await self._idle.park()

    async def _write_batch(self, file: IO[bytes]) -> None:
        batch = list(self._queued)
        self._queued.clear()
        dropped, self._dropped_now = self._dropped_now, 0
        if dropped:
            log.warning("the event log %s fell behind: %d events dropped", self.path, dropped)
        if batch or dropped:
            self._writing = True
            try:
                with trio.CancelScope(shield=True):  # taken from the queue: written, cancelled or not
                    await trio.to_thread.run_sync(_write, file, batch, dropped)
            finally:
                self._writing = False
            self.written += len(batch)
        self._idle.unpark_all()


def _write(file: IO[bytes], batch: list[GroupEventValue], dropped: int) -> None:
    """In a worker thread: the events, then the count of those dropped after them."""
    lines = [_encode(event_fields(event)) for event in batch]
    if dropped:
        lines.append(_encode({"dropped": dropped}))
    lines.append(b"")
    file.write(b"\n".join(lines))
    file.flush()
