"""Time-outs kept in one sorted structure instead of one task per member.

Each timer has a key naming what it guards (a member's session, a group's
join or sync phase); scheduling a key again replaces its deadline, as Kafka's
coordinator timer does. The shell asks for the earliest deadline and ticks
the coordinator then; nothing here reads a clock. Changes made during a call
are noted in the journal, so a call that raises leaves the timers as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sortedcontainers import SortedList

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .journal import Journal
    from .timers import TimerKey


class Deadlines:
    __slots__ = ("_by_key", "_journal", "_order", "_seq", "_undo_step", "earliest_ms")

    def __init__(self, journal: Journal | None = None) -> None:
        self._journal = journal
        self._undo_step = self._put_back  # bound once: every reschedule notes it
        self._by_key: dict[TimerKey, tuple[int, int, object]] = {}
        # (deadline, sequence, key): the sequence breaks ties in scheduling order
        # and keeps keys from ever being compared.
        self._order: SortedList = SortedList()
        self._seq = 0
        # The first deadline, kept at hand as a plain attribute: the shell reads it after
        # every batch of requests. Read-only outside this class.
        self.earliest_ms: int | None = None

    def __len__(self) -> int:
        return len(self._by_key)

    def __contains__(self, key: TimerKey) -> bool:
        return key in self._by_key

    def schedule(self, key: TimerKey, at_ms: int, payload: object = None) -> None:
        old = self._by_key.get(key)
        journal = self._journal
        if journal is not None and journal.open:
            journal.steps.append((self._undo_step, key, old))
        if old is not None:
            self._order.remove((old[0], old[1], key))
        self._seq += 1
        self._by_key[key] = (at_ms, self._seq, payload)
        self._order.add((at_ms, self._seq, key))
        if old is not None and old[0] == self.earliest_ms:
            self.earliest_ms = self._order[0][0]
        elif self.earliest_ms is None or at_ms < self.earliest_ms:
            self.earliest_ms = at_ms

    def cancel(self, key: TimerKey) -> None:
        old = self._by_key.pop(key, None)
        if old is not None:
            journal = self._journal
            if journal is not None and journal.open:
                journal.on_undo(self._put_back, key, old)
            self._order.remove((old[0], old[1], key))
            if old[0] == self.earliest_ms:
                self.earliest_ms = self._order[0][0] if self._order else None

    def _put_back(self, key: TimerKey, entry: tuple[int, int, object] | None) -> None:
        """Undo: the key's timer exactly as it was (its place among equal deadlines too)."""
        current = self._by_key.pop(key, None)
        if current is not None:
            self._order.remove((current[0], current[1], key))
        if entry is not None:
            self._by_key[key] = entry
            self._order.add((entry[0], entry[1], key))
        self.earliest_ms = self._order[0][0] if self._order else None

    def deadline(self, key: TimerKey) -> int | None:
        entry = self._by_key.get(key)
        return None if entry is None else entry[0]

    def earliest(self) -> int | None:
        return self.earliest_ms

    def pop_due(self, now_ms: int) -> tuple[int, TimerKey, object] | None:
        """Remove and return the earliest (deadline, key, payload) due at or before now, if any."""
        if self.earliest_ms is None or self.earliest_ms > now_ms:
            return None
        at, _, key = self._order.pop(0)
        payload = self._by_key.pop(key)[2]
        self.earliest_ms = self._order[0][0] if self._order else None
        return at, key, payload

    def keys(self) -> Iterator[TimerKey]:
        return iter(self._by_key)
