"""Data dirs holding group events, written by a real broker: its start-up, serve, the
event records folded and logged as the coordinator's are (`Server.record`), its shutdown."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import trio

from kcsim.coordinator.shared.events import event_fields
from kcsim.server import config as config_mod
from kcsim.server.app import build

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from pathlib import Path

    from kcsim.server.shell.server import Server

# (group, group type, kind, cause, member, detail) of events a test writes
Event = tuple[str, str, str, str, str, dict[str, Any]]

SAMPLE: tuple[Event, ...] = (
    ("billing", "classic", "group-created", "", "", {}),
    ("billing", "classic", "member-joined", "", "m-1", {}),
    ("billing", "classic", "rebalance-started", "member-joined", "m-1", {}),
    ("billing", "classic", "assignment-changed", "", "m-1",
     {"added": ["orders-0", "orders-1"], "removed": []}),
    ("audit", "consumer", "group-created", "", "", {}),
    ("audit", "consumer", "epoch-bumped", "member-joined", "c-7", {"epoch": 1}),
    ("billing", "classic", "member-left", "session-timeout", "m-1", {}),
    ("billing", "classic", "partitions-paused", "request", "",
     {"topic": "orders", "partitions": ["0"]}),
)


@asynccontextmanager
async def serving(data_dir: Path, **settings: Any) -> AsyncIterator[Server]:
    """A broker serving on `data_dir` in this trio run, stopped (and its log closed) on exit."""
    config = config_mod.load(None, env={}, data_dir=str(data_dir), port=0,
                             log_level="WARNING", **settings)
    server = build(config)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve)
        try:
            yield server
        finally:
            server.stop()


def record_events(server: Server, events: Sequence[Event], now_ms: int = 1_000) -> None:
    """Fold and log `events` as the coordinator's handlers do, one ms apart."""
    assert server.state.groups is not None
    history = server.state.groups.events
    server.record([history.event(now_ms + i, *event) for i, event in enumerate(events)])


def write_events(data_dir: Path, events: Sequence[Event] = SAMPLE) -> list[dict[str, Any]]:
    """Run a broker on `data_dir` that logs `events`; their fields, as readers show them."""

    async def run() -> list[dict[str, Any]]:
        async with serving(data_dir) as server:
            record_events(server, events)
            assert server.state.groups is not None
            return [event_fields(e) for e in server.state.groups.events]

    return trio.run(run)
