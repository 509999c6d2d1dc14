"""Reading the group event log: filters checked once, queries, and the condition of a wait.

The history is the broker's (`BrokerState.groups.events`, folded from `group_event`
records); everything here reads it on the broker's trio thread. A filter is checked
when it is made, so a bad kind, cause or group type is refused before anything waits,
with a message that starts with the field at fault (the HTTP API answers it 400).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import trio

from kcsim.coordinator.records import GroupEventValue
from kcsim.coordinator.shared.events import CAUSES, GROUP_TYPES, KINDS

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim.coordinator.shared.events import EventHistory

    from ..shell.server import Server
    from .waits import Check


class EventFilter(NamedTuple):
    """Which events a reader wants: None matches any."""

    group: str | None = None
    kind: str | None = None
    group_type: str | None = None
    cause: str | None = None
    member: str | None = None

    def matches(self, event: GroupEventValue) -> bool:
        return ((self.group is None or event.group == self.group)
                and (self.kind is None or event.kind == self.kind)
                and (self.group_type is None or event.group_type == self.group_type)
                and (self.cause is None or event.cause == self.cause)
                and (self.member is None or event.member == self.member))


def _word(value: Any, words: tuple[str, ...], field: str, what: str) -> str | None:
    if value is None or value in words:
        return value
    raise ValueError(f"{field}: unknown {what} {value!r} (one of: {', '.join(words)})")


def _text(value: Any, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{field}: expected text, got {value!r}")
    return value


def event_filter(group: Any = None, kind: Any = None, group_type: Any = None,
                 cause: Any = None, member: Any = None, *,
                 type_field: str = "group_type") -> EventFilter:
    """A checked filter; `type_field` is what the caller calls the group type."""
    return EventFilter(_text(group, "group"), _word(kind, KINDS, "kind", "event kind"),
                       _word(group_type, GROUP_TYPES, type_field, "group type"),
                       _word(cause, (*CAUSES, ""), "cause", "cause"),
                       _text(member, "member"))


def event_seq(value: Any, field: str = "since") -> int:
    """A sequence number to read from: an integer >= 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{field}: expected an event number >= 0, got {value!r}")
    return value


def history_of(server: Server) -> EventHistory | None:
    """The broker's event history (None: the broker has no group coordinator)."""
    groups = server.broker.groups
    return None if groups is None else groups.events


def find_events(server: Server, wanted: EventFilter, since: int) -> list[GroupEventValue]:
    """The events numbered `since` or later that `wanted` matches, oldest first."""
    history = history_of(server)
    if history is None:
        return []
    found = history.query(group=wanted.group, kind=wanted.kind, group_type=wanted.group_type,
                          since=since)
    if wanted.cause is None and wanted.member is None:
        return found
    return [e for e in found if wanted.matches(e)]


def next_seq(server: Server) -> int:
    """The number the next event will have: a `since` that sees only later events."""
    history = history_of(server)
    return 0 if history is None else history.issued


def event_condition(wanted: EventFilter, since: int) -> tuple[Check, str]:
    """Holds once an event numbered `since` or later matches; its value is the first such."""
    looked = [since, 0]  # from where to look next, and the history's next number then

    def check(server: Server) -> tuple[bool, Any, str]:
        issued = next_seq(server)
        if issued < looked[1]:  # a new history (an in-memory broker restarted):
            looked[0] = 0  # every event in it came after the wait began
        found = find_events(server, wanted, looked[0])
        if found:
            return True, found[0], ""
        looked[:] = max(looked[0], issued), issued  # each look reads only what it has not
        history = history_of(server)
        recent = [] if history is None else history.query(group=wanted.group, limit=5)
        shown = "; ".join(_event(e) for e in recent)
        return False, None, f"latest events{' of the group' if wanted.group else ''}: " + (
            shown or "none")

    given = ", ".join(f"{k}={v!r}" for k, v in wanted._asdict().items() if v is not None)
    return check, f"an event with {given or 'any kind'} numbered {since} or later"


def _event(e: GroupEventValue) -> str:
    return (f"#{e.seq} {e.kind} {e.group!r}" + (f" cause={e.cause}" if e.cause else "")
            + (f" member={e.member}" if e.member else ""))


FEED_CAPACITY = 1_000
"""Events a feed holds for a reader that has not taken them yet; one more drops the reader."""


class EventFeed:
    """Events as they fold in, for one reader inside the broker's trio run (an event stream):
    first `backlog` (what the history held already), then each new event from `receive`.

    The history's listener only ever puts an event in a bounded buffer, never waits: a
    reader that lets `capacity` events pile up is dropped (its buffer closed, so `receive`
    ends once drained, and `on_drop` called), and the broker goes on as if it were not
    there. `close` stops listening; the reader calls it when done.
    """

    def __init__(self, history: EventHistory | None, wanted: EventFilter, since: int,
                 capacity: int = FEED_CAPACITY) -> None:
        self._send, self.receive = trio.open_memory_channel[GroupEventValue](capacity)
        self.dropped = False
        self.on_drop: Callable[[], None] | None = None
        self._wanted = wanted
        # Listening and reading the backlog in one step of the run: nothing falls between.
        self._stop = history.listen(self._offer) if history is not None else None
        self.backlog = [] if history is None else [
            e for e in history.query(since=since) if wanted.matches(e)]

    def _offer(self, event: GroupEventValue) -> None:
        if self.dropped or not self._wanted.matches(event):
            return
        try:
            self._send.send_nowait(event)
        except (trio.WouldBlock, trio.ClosedResourceError):
            self.dropped = True
            self._send.close()
            if self.on_drop is not None:
                self.on_drop()

    def close(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None
        self._send.close()
