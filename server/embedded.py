"""Run a kcsim server inside the current Python process (tests, notebooks).

`with EmbeddedServer(config) as srv:` starts trio in a background thread and
returns once the port accepts connections; leaving the block stops it. The
server carries the test controls (kcsim.testing): `srv.clock`, `srv.faults`,
`srv.requests(...)`, `srv.wait_for_group(...)`, ... Each call runs on the
server's trio thread; the waits block the calling thread.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any

import trio

from . import config as config_mod
from .app import build
from .control.handles import BlockingControls
from .shell.clock import Clock

if TYPE_CHECKING:
    from .shell.server import Server


class EmbeddedServer(BlockingControls):
    """A kcsim broker on a background thread; `.port` and `.bootstrap` once started."""

    def __init__(self, config: config_mod.Config | None = None, **settings: Any) -> None:
        self._loaded = config is None  # checked by load: a start need not check it again
        if config is None:
            if settings.get("listeners") is None:
                settings.setdefault("port", 0)
            settings.setdefault("in_memory", True)
            config = config_mod.load(env={}, **settings)
        config = config.in_process()
        self.config = config
        self.server: Server | None = None
        self.port: int | None = None
        self._clock = Clock()  # kept over restarts, with the time tests advanced
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None
        super().__init__(self.run_sync, self._current)

    @property
    def bootstrap(self) -> str:
        """Where this process reaches the first listener."""
        return f"{self.config.listener_plans[0].local_host}:{self.port}"

    @property
    def bootstrap_servers(self) -> str:
        """Where this process reaches every node's first listener, comma-separated (one
        node's address unless it plays several brokers, `brokers`)."""
        server = self._current()
        host = self.config.listener_plans[0].local_host
        first = self.config.listener_plans[0].name
        return ",".join(f"{host}:{a.port}" for a in server.advertised if a.name == first)

    def _current(self) -> Server:
        if self.server is None:
            raise RuntimeError("the kcsim server is not running")
        return self.server

    def start(self) -> EmbeddedServer:
        self._started.clear()
        self._error = None
        self._thread = threading.Thread(target=self._run, name="kcsim", daemon=True)
        self._thread.start()
        self._started.wait()
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # surfaced to the starting thread
            self._error = exc
            self._started.set()

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            self._cancel = scope
            self.server = build(self.config, self._clock, loaded=self._loaded)
            async with trio.open_nursery() as nursery:
                self.port = await nursery.start(self.server.serve)
                self._started.set()

    def run_sync(self, fn: Any, *args: Any) -> Any:
        """Call fn(*args) on the server's trio thread (state inspection in tests)."""
        if self._token is None:
            raise RuntimeError("the kcsim server is not running")
        return trio.from_thread.run_sync(fn, *args, trio_token=self._token)

    def stop(self) -> None:
        if self._token is not None and self._cancel is not None:
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(self._cancel.cancel, trio_token=self._token)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._token = None

    def restart(self) -> EmbeddedServer:
        """Stop and start again on the same port: a broker with a data dir replays its
        state; the clock keeps the time tests advanced. Fault rules and the request
        log start empty."""
        if self.port is not None and self.config.port == 0:
            self.config.port = self.port
            self.config.advertised_port = None
        self.stop()
        self.server = None
        return self.start()

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
