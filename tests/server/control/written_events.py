"""Events written straight into a broker's history, as its coordinator writes them (a
`group_event` record through the broker's apply, then a change notice): for tests of the
readers (controls, HTTP, the live page) that need an event of a given kind at a given
moment."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kcsim.server.shell.server import Server


def write_event(server: Server, group: str, kind: str, cause: str = "",
                group_type: str = "consumer", member: str = "",
                detail: dict[str, Any] | None = None) -> int:
    """Write one event on the broker's trio thread; returns its seq."""
    groups = server.broker.groups
    assert groups is not None
    record = groups.events.event(server.clock.now_ms(), group, group_type, kind, cause,
                                 member, detail)
    server.record([record])
    server.broker.changes.notify()
    seq: int = record.value.seq
    return seq


def write_events(server: Server, events: list[dict[str, Any]]) -> list[int]:
    return [write_event(server, **e) for e in events]
