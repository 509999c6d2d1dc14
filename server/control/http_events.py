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
import logging
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

log = logging.getLogger("kcsim.control")

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
    """`text/event-stream` of a feed's events until the reader goes or is dropped.

    The events are written by a task of their own, outside the connection's: hypercorn
    writes to a socket shielded from cancellation, so a write to a reader that takes
    nothing would wait as long as the reader, and the connection (and a server shutting
    down) with it. The response itself only waits for the reader to go, the feed to drop
    it or the writer to end; then it returns, the connection closes, and that frees a
    writer stuck on it.
    """

    def __init__(self, feed: EventFeed, keep_alive_s: float = KEEP_ALIVE_S) -> None:
        self.feed = feed
        self.keep_alive_s = keep_alive_s

    async def respond(self, send: Send, receive: Receive) -> None:
        feed = self.feed
        finished = trio.Event()
        writing = trio.CancelScope()
        feed.on_drop = finished.set
        try:
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-store"), (b"x-accel-buffering", b"no")]})
            trio.lowlevel.spawn_system_task(self._write, send, writing, finished)
            async with trio.open_nursery() as watching:
                watching.start_soon(_until_disconnect, receive, finished)
                await finished.wait()
                watching.cancel_scope.cancel()
        finally:
            writing.cancel()
            feed.close()

    async def _write(self, send: Send, scope: trio.CancelScope, finished: trio.Event) -> None:
        try:
            with scope:
                await self._send_events(send)
        except Exception:  # the connection broke under it: the reader is gone
            log.debug("event stream: writing failed", exc_info=True)
        finally:
            finished.set()

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


async def _until_disconnect(receive: Receive, finished: trio.Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    finished.set()
