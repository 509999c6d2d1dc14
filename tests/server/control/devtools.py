"""A headless Chromium driven over the DevTools protocol (a websocket, by wsproto, which
the control API's server brings along): open a page, wait for the DOM to say something,
read it, take a screenshot. Waits are promises in the page that a MutationObserver
resolves, so nothing here polls.

Without Debian's chromium the test is skipped, saying so (.ci/run installs it).
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, CloseConnection, Ping, Request, TextMessage

from ...browser import chromium

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--hide-scrollbars", "--remote-debugging-port=0")
_LISTENING = re.compile(rb"DevTools listening on ws://([^:/]+):(\d+)(/\S+)")


class Browser:
    """One page of a browser, reached by a flat DevTools session over one websocket."""

    def __init__(self, stream: trio.SocketStream, ws: WSConnection) -> None:
        self._stream = stream
        self._ws = ws
        self._ids = 0
        self.session: str | None = None
        self._events: list[dict[str, Any]] = []
        self._text: list[str] = []

    async def _receive(self) -> dict[str, Any]:
        while True:
            for event in self._ws.events():
                if isinstance(event, TextMessage):
                    self._text.append(event.data)
                    if event.message_finished:
                        message: dict[str, Any] = json.loads("".join(self._text))
                        self._text.clear()
                        return message
                elif isinstance(event, Ping):
                    await self._stream.send_all(self._ws.send(event.response()))
                elif isinstance(event, CloseConnection):
                    raise RuntimeError("the browser closed the DevTools connection")
            data = await self._stream.receive_some(1 << 20)
            if not data:
                raise RuntimeError("the browser went away")
            self._ws.receive_data(data)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and return its result (events arriving meanwhile are kept)."""
        self._ids += 1
        message: dict[str, Any] = {"id": self._ids, "method": method, "params": params}
        if self.session is not None:
            message["sessionId"] = self.session
        await self._stream.send_all(self._ws.send(TextMessage(json.dumps(message))))
        while True:
            answer = await self._receive()
            if answer.get("id") == self._ids:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer["result"]
                return result
            self._events.append(answer)

    async def event(self, method: str) -> dict[str, Any]:
        """The next event `method` (or one that came already)."""
        while True:
            for i, event in enumerate(self._events):
                if event.get("method") == method:
                    del self._events[i]
                    return event
            self._events.append(await self._receive())

    async def evaluate(self, expression: str) -> Any:
        """The value of a JS expression in the page (a promise: what it resolves to)."""
        answer = await self.call("Runtime.evaluate", expression=expression, awaitPromise=True,
                                 returnByValue=True)
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            raise AssertionError(details.get("exception", {}).get("description")
                                 or details.get("text"))
        return answer["result"].get("value")

    async def goto(self, url: str) -> None:
        await self.call("Page.navigate", url=url)
        await self.event("Page.loadEventFired")

    async def wait_for(self, selector: str, timeout_ms: int = 20_000) -> str:
        """The text of the first element `selector` matches, once one does: waits on the
        page's mutations, failing after `timeout_ms` with the page's text."""
        return str(await self.evaluate(f"""new Promise((resolve, reject) => {{
            const look = () => {{
                const found = document.querySelector({json.dumps(selector)});
                if (found) {{ observer.disconnect(); clearTimeout(timer); resolve(found.innerText); }}
            }};
            const observer = new MutationObserver(look);
            const timer = setTimeout(() => {{ observer.disconnect(); reject(new Error(
                "no " + {json.dumps(selector)} + " in: " + document.body.innerText)); }},
                {timeout_ms});
            observer.observe(document, {{subtree: true, childList: true, attributes: true,
                                         characterData: true}});
            look();
        }})"""))

    async def screenshot(self, path: Path) -> Path:
        shot = await self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        await trio.Path(path).write_bytes(base64.b64decode(shot["data"]))
        return path


async def _listening(process: trio.Process, *,
                     task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Report where the browser's DevTools listen (host, port, path), then keep reading
    what it says, so that its pipe never fills."""
    assert process.stderr is not None
    seen = b""
    with trio.move_on_after(30):
        async for data in process.stderr:
            seen += data
            found = _LISTENING.search(seen)
            if found:
                task_status.started(
                    (found.group(1).decode(), int(found.group(2)), found.group(3).decode()))
                async for _ in process.stderr:
                    pass
                return
    pytest.skip(f"NO BROWSER: chromium did not start here: {seen[-500:]!r}")


@contextlib.asynccontextmanager
async def open_browser(profile: Path, width: int = 1280, height: int = 900
                       ) -> AsyncIterator[Browser]:
    """A headless chromium with one blank page, closed on leaving."""
    process = await trio.lowlevel.open_process(
        [chromium(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
         "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        async with trio.open_nursery() as nursery:
            host, port, path = await nursery.start(_listening, process)
            stream = await trio.open_tcp_stream(host, port)
            try:
                yield await _attach(stream, host, port, path, width, height)
            finally:
                await stream.aclose()
                nursery.cancel_scope.cancel()
    finally:
        process.kill()
        with trio.move_on_after(10):
            await process.wait()


async def _attach(stream: trio.SocketStream, host: str, port: int, path: str, width: int,
                  height: int) -> Browser:
    ws = WSConnection(ConnectionType.CLIENT)
    await stream.send_all(ws.send(Request(host=f"{host}:{port}", target=path)))
    while not any(isinstance(e, AcceptConnection) for e in ws.events()):
        ws.receive_data(await stream.receive_some(65536))
    browser = Browser(stream, ws)
    pages = await browser.call("Target.getTargets")
    page = next(t["targetId"] for t in pages["targetInfos"] if t["type"] == "page")
    attached = await browser.call("Target.attachToTarget", targetId=page, flatten=True)
    browser.session = attached["sessionId"]
    await browser.call("Page.enable")
    await browser.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                       deviceScaleFactor=1, mobile=False)
    return browser
