"""The group event log over HTTP: `GET /events` (a page of events, or a long poll) and
`GET /events/stream` (server-sent events).

Both read the controls' events (events.py); an event is `event_fields(e)` as JSON, the
shape the event-log file and `kcsim events` use too. A stream reads from an EventFeed,
a bounded buffer the broker only ever puts into without waiting: a reader that falls
`FEED_CAPACITY` events behind is dropped, its stream ended, and the broker never waits
for it. A stream with nothing to say sends a comment every `KEEP_ALIVE_S`, which lets
proxies and readers see it is alive (and the server see a reader that has gone).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import msgspec
import trio

from kcsim.coordinator.shared.events import event_fields

from .events import event_filter, event_seq
from .http_app import Response
from .waits import WaitTimeout

if TYPE_CHECKING:
    from kcsim.coordinator.records import GroupEventValue

    from .events import EventFeed
    from .handles import TrioControls
    from .http_app import Receive, Send

KEEP_ALIVE_S = 15.0
MAX_WAIT_MS = 300_000


def _count(value: int | None, field: str, least: int, most: int | None = None) -> int | None:
    if value is not None and (value < least or (most is not None and value > most)):
        bound = f">= {least}" + (f" and <= {most}" if most is not None else "")
        raise ValueError(f"{field}: expected an integer {bound}, got {value}")
    return value


async def read_events(controls: TrioControls, *, group: str | None, kind: str | None,
                      group_type: str | None, since: int, limit: int | None,
                      wait_ms: int | None) -> dict[str, Any]:
    """`{"events": [...], "next": N}`: the matching events numbered `since` or later, the
    oldest `limit` of them; with `wait_ms`, waits that long at most for one to come.
    `next` is what to ask `since=` for next time."""
    event_filter(group, kind, group_type, type_field="type")
    event_seq(since)
    _count(limit, "limit", 1)
    _count(wait_ms, "wait_ms", 0, MAX_WAIT_MS)
    found = controls.events(group, kind, group_type, since)
    if not found and wait_ms:
        with contextlib.suppress(WaitTimeout):
            await controls.wait_for_event(group, kind, group_type=group_type, since=since,
                                          timeout=wait_ms / 1000)
        found = controls.events(group, kind, group_type, since)
    if limit is not None and len(found) > limit:
        found = found[:limit]
        following = found[-1].seq + 1
    else:
        following = max(since, controls.next_event_seq())
    return {"events": [event_fields(e) for e in found], "next": following}


def _message(event: GroupEventValue) -> bytes:
    data = msgspec.json.encode(event_fields(event))
    return b"id: %d\ndata: %s\n\n" % (event.seq, data)


class EventStream(Response):
    """`text/event-stream` of a feed's events until the reader goes or is dropped."""

    def __init__(self, feed: EventFeed, keep_alive_s: float = KEEP_ALIVE_S) -> None:
        self.feed = feed
        self.keep_alive_s = keep_alive_s

    async def respond(self, send: Send, receive: Receive) -> None:
        feed = self.feed
        try:
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-store"), (b"x-accel-buffering", b"no")]})
            async with trio.open_nursery() as nursery:
                # A dropped reader is cut off at once, even from the middle of a send it is
                # too slow to take; a reader that leaves ends the stream too.
                feed.on_drop = nursery.cancel_scope.cancel
                nursery.start_soon(_until_disconnect, receive, nursery.cancel_scope)
                await self._send_events(send)
                nursery.cancel_scope.cancel()
        finally:
            feed.close()

    async def _send_events(self, send: Send) -> None:
        feed = self.feed
        for event in feed.backlog:
            await send({"type": "http.response.body", "body": _message(event), "more_body": True})
        while True:
            with trio.move_on_after(self.keep_alive_s) as idle:
                try:
                    event = await feed.receive.receive()
                except trio.EndOfChannel:  # dropped, and what it held is sent
                    return
            body = b": keep-alive\n\n" if idle.cancelled_caught else _message(event)
            await send({"type": "http.response.body", "body": body, "more_body": True})


async def _until_disconnect(receive: Receive, scope: trio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()
