"""A kcsim broker inside the caller's own trio run (trio tests, MockClock).

`async with open_trio_kcsim(**settings) as kcsim:` starts a broker in a nursery
of the current trio run and stops it on exit. Its clock follows trio's: on
trio's MockClock (pytest-trio's `autojump_clock`) every session time-out,
rebalance delay and retention check passes as simulated time, without waiting.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import trio

from . import config as config_mod
from .app import build
from .control.handles import TrioControls

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from .shell.server import Server


class TrioKcsim(TrioControls):
    """A broker in this trio run: `bootstrap`, `port`, the controls; waits are awaited."""

    def __init__(self, server: Server) -> None:
        super().__init__(lambda: server)
        self.server = server
        self.config = server.config
        self.port = server.port

    @property
    def bootstrap(self) -> str:
        """Where this process reaches the first listener."""
        return f"{self.config.listener_plans[0].local_host}:{self.port}"


@contextlib.asynccontextmanager
async def open_trio_kcsim(config: config_mod.Config | None = None,
                          **settings: Any) -> AsyncIterator[TrioKcsim]:
    """Serve a broker (in memory, on a free port unless settings say otherwise) in this run."""
    loaded = config is None
    if config is None:
        if settings.get("listeners") is None:
            settings.setdefault("port", 0)
        settings.setdefault("in_memory", True)
        config = config_mod.load(env={}, **settings)
    config = config.in_process()
    server = build(config, loaded=loaded)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve)
        try:
            yield TrioKcsim(server)
        finally:
            server.stop()
