"""Serving the metrics over HTTP: `kcsim serve --metrics-port` (hypercorn, in the broker's
own trio run, as the control API is), and `/metrics` beside the control API's routes.

Only GET /metrics is answered; it renders a scrape on the broker's trio thread, so
the state it reads does not move under it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, MutableMapping

    Scope = MutableMapping[str, Any]
    Message = MutableMapping[str, Any]
    Receive = Callable[[], Awaitable[Message]]
    Send = Callable[[Message], Awaitable[None]]
    App = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("kcsim.metrics")

PATH = "/metrics"


async def _respond(send: Send, status: int, body: bytes, content_type: str) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _metrics(scope: Scope, send: Send, render: Callable[[], bytes]) -> None:
    if scope.get("method", "GET").upper() not in ("GET", "HEAD"):
        await _respond(send, 405, b"GET /metrics only\n", "text/plain")
        return
    from .registry import CONTENT_TYPE

    await _respond(send, 200, render(), CONTENT_TYPE)


def metrics_app(render: Callable[[], bytes]) -> App:
    """An ASGI app answering GET /metrics with `render()`, 404 anything else."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] == "http":
            if scope["path"].rstrip("/") == PATH:
                await _metrics(scope, send, render)
            else:
                await _respond(send, 404, b"see /metrics\n", "text/plain")

    return app


def with_metrics(app: App, render: Callable[[], bytes]) -> App:
    """`app`, with GET /metrics answered by `render()` before it."""

    async def mounted(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].rstrip("/") == PATH:
            await _metrics(scope, send, render)
        else:
            await app(scope, receive, send)

    return mounted


async def _lifespan(receive: Receive, send: Send) -> None:
    """Start-up and shut-down have nothing to do: acknowledged."""
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


def _bind(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def serve_metrics(render: Callable[[], bytes], host: str, port: int, *,
                        task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Serve GET /metrics on host:port until cancelled; reports the URLs it listens on
    through task_status. OSError (nested in exception groups) when it cannot bind."""
    from hypercorn.config import Config as HypercornConfig
    from hypercorn.trio import serve

    config = HypercornConfig()
    config.bind = [_bind(host, port)]
    config.accesslog = None
    config.errorlog = log
    config.graceful_timeout = 0.5
    await serve(metrics_app(render), config, task_status=task_status)  # type: ignore[arg-type]
