"""Time-outs kept in one heap instead of one task per member.

Each timer has a key naming what it guards (a member's session, a group's
join or sync phase); scheduling a key again replaces its deadline, as Kafka's
coordinator timer does. The shell asks for the earliest deadline and ticks
the coordinator then; nothing here reads a clock. Changes made during a call
are noted in the journal, so a call that raises leaves the timers as they were.

Every heartbeat reschedules its member's session, so replacing a deadline must
be cheap. The heap is never searched: a replaced or cancelled deadline stays in
it, stale, and is dropped when it reaches the top. A heap entry is live while
`_by_key` holds the same sequence number for its key. Stale entries are bounded:
once they outnumber the live ones the heap is rebuilt from `_by_key`.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .journal import Journal
    from .timers import TimerKey

_SLACK = 64  # stale entries tolerated beyond the live ones before a rebuild


class Deadlines:
    __slots__ = ("_by_key", "_heap", "_journal", "_seq", "_undo_step", "earliest_ms")

    def __init__(self, journal: Journal | None = None) -> None:
        self._journal = journal
        self._undo_step = self._put_back  # bound once: every reschedule notes it
        # key -> (deadline, sequence, payload): the sequence breaks ties in scheduling
        # order and tells a live heap entry from a stale one.
        self._by_key: dict[TimerKey, tuple[int, int, object]] = {}
        self._heap: list[tuple[int, int, TimerKey]] = []  # (deadline, sequence, key)
        self._seq = 0
        # The first live deadline, kept at hand as a plain attribute: the shell reads it
        # after every batch of requests. Read-only outside this class.
        self.earliest_ms: int | None = None

    def __len__(self) -> int:
        return len(self._by_key)

    def __contains__(self, key: TimerKey) -> bool:
        return key in self._by_key

    def schedule(self, key: TimerKey, at_ms: int, payload: object = None) -> None:
        by_key = self._by_key
        old = by_key.get(key)
        journal = self._journal
        if journal is not None and journal.open:
            journal.steps.append((self._undo_step, key, old))
        seq = self._seq = self._seq + 1
        by_key[key] = (at_ms, seq, payload)
        heap = self._heap
        heappush(heap, (at_ms, seq, key))
        earliest = self.earliest_ms
        if old is not None and old[0] == earliest:
            self._settle()  # the replaced deadline may have been the first
        elif earliest is None or at_ms < earliest:
            self.earliest_ms = at_ms
        if len(heap) > 2 * len(by_key) + _SLACK:
            self._rebuild()

    def cancel(self, key: TimerKey) -> None:
        old = self._by_key.pop(key, None)
        if old is not None:
            journal = self._journal
            if journal is not None and journal.open:
                journal.on_undo(self._put_back, key, old)
            if old[0] == self.earliest_ms:
                self._settle()

    def _put_back(self, key: TimerKey, entry: tuple[int, int, object] | None) -> None:
        """Undo: the key's timer exactly as it was (its place among equal deadlines too)."""
        if entry is None:
            self._by_key.pop(key, None)
        else:
            self._by_key[key] = entry
            heappush(self._heap, (entry[0], entry[1], key))
        self._settle()

    def _settle(self) -> None:
        """Drop stale entries from the top of the heap and note the first live deadline."""
        heap = self._heap
        by_key = self._by_key
        while heap:
            at, seq, key = heap[0]
            entry = by_key.get(key)
            if entry is not None and entry[1] == seq:
                self.earliest_ms = at
                return
            heappop(heap)
        self.earliest_ms = None

    def _rebuild(self) -> None:
        """The heap of the live entries only."""
        self._heap = [(at, seq, key) for key, (at, seq, _) in self._by_key.items()]
        heapify(self._heap)

    def deadline(self, key: TimerKey) -> int | None:
        entry = self._by_key.get(key)
        return None if entry is None else entry[0]

    def earliest(self) -> int | None:
        return self.earliest_ms

    def pop_due(self, now_ms: int) -> tuple[int, TimerKey, object] | None:
        """Remove and return the earliest (deadline, key, payload) due at or before now, if any."""
        if self.earliest_ms is None or self.earliest_ms > now_ms:
            return None
        at, _, key = heappop(self._heap)  # live: `_settle` left it on top
        payload = self._by_key.pop(key)[2]
        self._settle()
        return at, key, payload

    def keys(self) -> Iterator[TimerKey]:
        return iter(self._by_key)
