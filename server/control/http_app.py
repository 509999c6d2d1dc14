"""A small ASGI app: routes by path and method, JSON in and out, every refusal as JSON.

The HTTP parsing is the server's (hypercorn, see http_server.py); this module only
maps a request to a route and a route's result or error to a response (a route may
answer a Response instead, a page or a stream, which sends itself). A route's
ValueError is the controls' own refusal, whose message starts with the field it
names: it answers 400 with that message and field. A WaitTimeout answers 408 with
the state the wait saw last. An unknown path answers 404, a known path with another
method 405 (with Allow), anything unexpected 500 with its message.
"""

from __future__ import annotations

import json
import logging
import re
import urllib.parse
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from .waits import WaitTimeout

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, MutableMapping

    Scope = MutableMapping[str, Any]
    Message = MutableMapping[str, Any]
    Receive = Callable[[], Awaitable[Message]]
    Send = Callable[[Message], Awaitable[None]]
    Handler = Callable[..., Awaitable[Any]]

log = logging.getLogger("kcsim.control")

MAX_BODY_BYTES = 1024 * 1024
_FIELD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*): ")


class HttpError(Exception):
    """A refusal with its HTTP status; `field` names the input at fault, if one is."""

    def __init__(self, status: int, message: str, field: str | None = None,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
        self.headers = headers or []


class Request:
    """What a route reads: the method, the path's parameters, the query and the JSON body."""

    def __init__(self, method: str, query: dict[str, list[str]], body: bytes,
                 params: dict[str, str]) -> None:
        self.method = method
        self.query = query
        self.params = params
        self._body = body

    def json(self) -> dict[str, Any]:
        """The body as a JSON object (an empty body is `{}`)."""
        if not self._body.strip():
            return {}
        try:
            value = json.loads(self._body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"body: not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise ValueError(f"body: expected a JSON object, got {type(value).__name__}")
        return value


class Response:
    """A route's answer that is not JSON (a page, an event stream): it sends itself, once
    the route has checked its input (a refusal before it is still JSON)."""

    async def respond(self, send: Send, receive: Receive) -> None:
        raise NotImplementedError


class Page(Response):
    """A whole body of one content type."""

    def __init__(self, body: bytes, content_type: str) -> None:
        self.body = body
        self.content_type = content_type

    async def respond(self, send: Send, receive: Receive) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", self.content_type.encode()),
            (b"content-length", str(len(self.body)).encode()),
            (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": self.body})


class Route(NamedTuple):
    pattern: re.Pattern[str]
    methods: dict[str, Handler]
    path: str  # as documented, e.g. /faults/{id}


def route(path: str, **methods: Handler) -> Route:
    """A route for `path`, where `{name}` is a parameter of digits, with a handler per
    method (`GET=...`, `POST=...`)."""
    pattern = re.escape(path).replace(r"\{", "{").replace(r"\}", "}")
    pattern = re.sub(r"{(\w+)}", r"(?P<\1>[0-9]+)", pattern)
    return Route(re.compile(f"^{pattern}$"), {m.upper(): h for m, h in methods.items()}, path)


class ControlApp:
    """The ASGI application of a route table."""

    def __init__(self, routes: list[Route]) -> None:
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        try:
            status, payload, headers = 200, await self._answer(scope, receive), []
        except HttpError as exc:
            status, payload, headers = exc.status, _error(str(exc), exc.field), exc.headers
        except WaitTimeout as exc:
            status, payload, headers = 408, _error(str(exc), None, timed_out=True), []
        except ValueError as exc:
            match = _FIELD.match(str(exc))
            status, payload, headers = 400, _error(str(exc), match and match.group(1)), []
        except Exception as exc:  # a bug, or the broker stopping: say so, keep serving
            log.exception("control API: %s %s failed", scope.get("method"), scope.get("path"))
            status, payload, headers = 500, _error(f"{type(exc).__name__}: {exc}", None), []
        if isinstance(payload, Response):  # checked and answering: it sends itself
            await payload.respond(send, receive)
            return
        body = msgspec.json.encode(payload) + b"\n"
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()), *headers]})
        await send({"type": "http.response.body", "body": body})

    async def _answer(self, scope: Scope, receive: Receive) -> Any:
        path = scope["path"].rstrip("/") or "/"
        method = scope["method"].upper()
        for candidate in self.routes:
            found = candidate.pattern.match(path)
            if found is None:
                continue
            handler = candidate.methods.get(method)
            if handler is None:
                allowed = ", ".join(candidate.methods)
                raise HttpError(405, f"{method} is not allowed on {candidate.path} "
                                f"(allowed: {allowed})", headers=[(b"allow", allowed.encode())])
            query = urllib.parse.parse_qs(scope.get("query_string", b"").decode("latin-1"),
                                          keep_blank_values=True)
            body = await _body(receive)
            return await handler(Request(method, query, body, found.groupdict()))
        raise HttpError(404, f"no endpoint {path} (GET / lists them)")

    def endpoints(self) -> list[str]:
        return [f"{m} {r.path}" for r in self.routes for m in r.methods]


def _error(message: str, field: str | None, **more: Any) -> dict[str, Any]:
    return {"error": message, "field": field, **more}


async def _body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise HttpError(413, f"body: larger than {MAX_BODY_BYTES} bytes", "body")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
