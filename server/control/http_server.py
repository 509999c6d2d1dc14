"""The HTTP control API served by hypercorn inside the broker's own trio run.

Being in the same run, its routes call the broker's controls directly and its
waits are trio waits woken by the broker's change notices. Imported only when
`control_port` is set: a broker without it loads no HTTP server.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve

from ..metrics.http import with_metrics
from .handles import TrioControls
from .http_routes import control_app

if TYPE_CHECKING:
    from ..shell.server import Server

log = logging.getLogger("kcsim.control")


def _bind(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def serve_control(server: Server, host: str, port: int, *,
                        task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Serve the control API of `server` on host:port until cancelled; reports the URLs it
    listens on (http://host:port, with the port bound when 0 was asked) through task_status."""
    config = HypercornConfig()
    config.bind = [_bind(host, port)]
    config.accesslog = None
    config.errorlog = log
    config.graceful_timeout = 0.5
    app = with_metrics(control_app(TrioControls(lambda: server)),
                       lambda: server.broker.metrics.render())
    # hypercorn types the app by its own scope and event TypedDicts; ControlApp reads them
    # as plain mappings, which they are.
    await serve(app, config, task_status=task_status)  # type: ignore[arg-type]
