"""The endpoints of the HTTP control API, each a call of the controls tests use in Python.

Every route calls the broker's TrioControls (handles.py), the same objects behind
kcsim.testing, so an operation has one implementation and refuses bad input with
the same message in Python and over HTTP. GETs take their filters in the query
string, everything else a JSON object body. docs/control-http.md shows each one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from .acls import ACL_FIELDS
from .http_app import ControlApp, Route, route
from .http_events import EventStream, read_events
from .http_nodes import node_routes
from .ui import ui_page

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .handles import TrioControls
    from .http_app import Request

_REQUEST_FILTERS = ("api", "group", "client_id", "version", "error", "connection", "since")
_INT_FILTERS = ("version", "connection", "since")
_EVENT_FILTERS = ("group", "kind", "type", "since")


def control_app(controls: TrioControls) -> ControlApp:
    """The ASGI app serving `controls`."""
    endpoints = Endpoints(controls)
    app = ControlApp(endpoints.routes())
    endpoints.app = app
    return app


def _fields(body: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """Refuse a field the endpoint does not take, naming it."""
    for name in body:
        if name not in allowed:
            raise ValueError(f"{name}: not a field of {where} (fields: {', '.join(allowed)})")


def _required(body: Mapping[str, Any], name: str) -> Any:
    if body.get(name) is None:
        raise ValueError(f"{name}: required")
    return body[name]


def _query_text(query: Mapping[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[-1] if values else None


def _query_int(query: Mapping[str, list[str]], name: str) -> int | None:
    text = _query_text(query, name)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{name}: expected an integer, got {text!r}") from None


def _api_names(values: list[str]) -> str | int | list[str | int]:
    """`api=OffsetCommit&api=8` or `api=OffsetCommit,8`: names or keys."""
    apis: list[str | int] = [int(a) if a.strip().isdigit() else a.strip()
                             for v in values for a in v.split(",")]
    return apis[0] if len(apis) == 1 else apis


def _offsets_in(value: Any) -> dict[tuple[str, int], int]:
    """[{"topic": t, "partition": p, "offset": o}, ...] as {(t, p): o}."""
    shape = 'expected a list of {"topic", "partition", "offset"}'
    if not isinstance(value, list):
        raise ValueError(f"offsets: {shape}, got {value!r}")
    wanted = {}
    for item in value:
        if (not isinstance(item, dict) or set(item) != {"topic", "partition", "offset"}
                or not isinstance(item["topic"], str)
                or any(isinstance(item[k], bool) or not isinstance(item[k], int)
                       for k in ("partition", "offset"))):
            raise ValueError(f"offsets: {shape}, got {item!r}")
        wanted[(item["topic"], item["partition"])] = item["offset"]
    return wanted


def _offsets_out(offsets: Mapping[tuple[str, int], int]) -> list[dict[str, Any]]:
    return [{"topic": t, "partition": p, "offset": o} for (t, p), o in sorted(offsets.items())]


def _acl_fields(body: Mapping[str, Any]) -> dict[str, Any]:
    for name in ("resource_type", "name", "principal", "operation"):
        _required(body, name)
    return dict(body)


class Endpoints:
    """The handlers, each bound to one broker's controls."""

    def __init__(self, controls: TrioControls) -> None:
        self.controls = controls
        self.app: ControlApp | None = None

    def routes(self) -> list[Route]:
        return [
            route("/", GET=self.index),
            route("/clock", GET=self.clock),
            route("/clock/advance", POST=self.clock_advance),
            route("/clock/freeze", POST=self.clock_freeze),
            route("/clock/resume", POST=self.clock_resume),
            route("/faults", GET=self.faults_list, POST=self.faults_add,
                  DELETE=self.faults_clear),
            route("/faults/release", POST=self.faults_release_all),
            route("/faults/{id}", GET=self.faults_get, DELETE=self.faults_remove),
            route("/faults/{id}/release", POST=self.faults_release),
            route("/coordinator", POST=self.coordinator),
            route("/requests", GET=self.requests, DELETE=self.requests_clear),
            route("/wait/group", POST=self.wait_group),
            route("/wait/committed", POST=self.wait_committed),
            route("/wait/request", POST=self.wait_request),
            route("/wait/fault", POST=self.wait_fault),
            route("/state/groups", GET=self.state_groups),
            route("/state/members", GET=self.state_members),
            route("/state/offsets", GET=self.state_offsets),
            route("/state/paused", GET=self.state_paused),
            route("/state/lag", GET=self.state_lag),
            route("/events", GET=self.events),
            route("/events/stream", GET=self.events_stream),
            route("/ui", GET=self.ui),
            route("/log-maintenance", POST=self.log_maintenance),
            route("/acls", GET=self.acls_list, POST=self.acls_add, DELETE=self.acls_remove),
            route("/users", GET=self.users_list, POST=self.users_add, DELETE=self.users_remove),
            *node_routes(self.controls.nodes),
        ]

    async def index(self, request: Request) -> Any:
        return {"endpoints": self.app.endpoints() if self.app else [],
                "docs": "docs/control-http.md", "ssl_ca_file": self.controls.ssl_ca_file}

    # -- the clock ------------------------------------------------------------------

    def _clock_state(self) -> dict[str, Any]:
        clock = self.controls.clock
        return {"now_ms": clock.now_ms(), "frozen": clock.frozen}

    async def clock(self, request: Request) -> Any:
        return self._clock_state()

    async def clock_advance(self, request: Request) -> Any:
        body = request.json()
        _fields(body, ("ms",), "POST /clock/advance")
        self.controls.clock.advance(_required(body, "ms"))
        return self._clock_state()

    async def clock_freeze(self, request: Request) -> Any:
        _fields(request.json(), (), "POST /clock/freeze")
        self.controls.clock.freeze()
        return self._clock_state()

    async def clock_resume(self, request: Request) -> Any:
        _fields(request.json(), (), "POST /clock/resume")
        self.controls.clock.resume()
        return self._clock_state()

    # -- fault rules ------------------------------------------------------------------

    async def faults_list(self, request: Request) -> Any:
        return {"rules": self.controls.faults.list()}

    async def faults_add(self, request: Request) -> Any:
        faults = self.controls.faults
        return faults.get(faults.add(request.json()))

    async def faults_clear(self, request: Request) -> Any:
        faults = self.controls.faults
        removed = [faults.remove(status.id) for status in faults.list()]
        return {"removed": removed}

    async def faults_get(self, request: Request) -> Any:
        return self.controls.faults.get(int(request.params["id"]))

    async def faults_remove(self, request: Request) -> Any:
        return self.controls.faults.remove(int(request.params["id"]))

    async def faults_release(self, request: Request) -> Any:
        return {"released": self.controls.faults.release(int(request.params["id"]))}

    async def faults_release_all(self, request: Request) -> Any:
        return {"released": self.controls.faults.release()}

    async def coordinator(self, request: Request) -> Any:
        body = request.json()
        _fields(body, ("group", "state"), "POST /coordinator")
        group, state = _required(body, "group"), _required(body, "state")
        return {"group": group, "state": state,
                "rule": self.controls.faults.coordinator(group, state)}

    # -- ACLs ------------------------------------------------------------------------

    async def acls_list(self, request: Request) -> Any:
        return {"acls": self.controls.acls.list()}

    async def acls_add(self, request: Request) -> Any:
        body = request.json()
        _fields(body, ACL_FIELDS, "POST /acls")
        return self.controls.acls.add(**_acl_fields(body))

    async def acls_remove(self, request: Request) -> Any:
        body = request.json()
        _fields(body, ACL_FIELDS, "DELETE /acls")
        return {"removed": self.controls.acls.remove(**_acl_fields(body))}

    # -- the request log -------------------------------------------------------------

    def _request_filters(self, query: Mapping[str, list[str]]) -> dict[str, Any]:
        _fields(query, _REQUEST_FILTERS, "GET /requests")
        filters: dict[str, Any] = {name: _query_text(query, name)
                                   for name in ("group", "client_id", "error")}
        for name in _INT_FILTERS:
            filters[name] = _query_int(query, name)
        if filters["since"] is None:
            filters["since"] = 0
        if query.get("api"):
            filters["api"] = _api_names(query["api"])
        return filters

    async def requests(self, request: Request) -> Any:
        found = self.controls.requests(**self._request_filters(request.query))
        return {"requests": found, "last_seq": self.controls.last_request_seq()}

    async def requests_clear(self, request: Request) -> Any:
        self.controls.clear_requests()
        return {"cleared": True}

    # -- waits ------------------------------------------------------------------------

    async def wait_group(self, request: Request) -> Any:
        body = request.json()
        _fields(body, ("group", "state", "members", "timeout"), "POST /wait/group")
        return await self.controls.wait_for_group(
            _required(body, "group"), body.get("state", "Stable"), body.get("members"),
            **_timeout(body))

    async def wait_committed(self, request: Request) -> Any:
        body = request.json()
        _fields(body, ("group", "offsets", "timeout"), "POST /wait/committed")
        group = _required(body, "group")
        offsets = _offsets_in(body.get("offsets", []))
        found = await self.controls.wait_for_committed(group, offsets, **_timeout(body))
        return {"group": group, "offsets": _offsets_out(found)}

    async def wait_request(self, request: Request) -> Any:
        body = request.json()
        _fields(body, (*_REQUEST_FILTERS, "count", "timeout"), "POST /wait/request")
        filters = {name: body[name] for name in _REQUEST_FILTERS if name in body}
        found = await self.controls.wait_for_request(
            filters.pop("api", None), count=body.get("count", 1), **filters, **_timeout(body))
        return {"requests": found}

    async def wait_fault(self, request: Request) -> Any:
        body = request.json()
        _fields(body, ("id", "fired", "held", "timeout"), "POST /wait/fault")
        rule_id = _required(body, "id")
        if isinstance(rule_id, bool) or not isinstance(rule_id, int):
            raise ValueError(f"id: expected a fault rule id, got {rule_id!r}")
        return await self.controls.wait_for_fault(
            rule_id, fired=body.get("fired"), held=body.get("held"), **_timeout(body))

    # -- state ------------------------------------------------------------------------

    async def state_groups(self, request: Request) -> Any:
        _fields(request.query, ("group",), "GET /state/groups")
        group = _query_text(request.query, "group")
        if group is None:
            return {"groups": self.controls.groups()}
        view = self.controls.group(group)
        return {"groups": [] if view is None else [view]}

    async def state_members(self, request: Request) -> Any:
        _fields(request.query, ("group",), "GET /state/members")
        group = _required({"group": _query_text(request.query, "group")}, "group")
        view = self.controls.group(group)
        return {"group": group, "members": [] if view is None else view.members}

    def _groups_asked(self, query: Mapping[str, list[str]], where: str) -> list[str]:
        _fields(query, ("group",), where)
        group = _query_text(query, "group")
        return [v.group for v in self.controls.groups()] if group is None else [group]

    async def state_offsets(self, request: Request) -> Any:
        offsets = [{"group": g, **entry}
                   for g in self._groups_asked(request.query, "GET /state/offsets")
                   for entry in _offsets_out(self.controls.committed(g))]
        return {"offsets": offsets}

    async def state_paused(self, request: Request) -> Any:
        paused = [{"group": g, "topic": topic, "partition": p}
                  for g in self._groups_asked(request.query, "GET /state/paused")
                  for topic, partitions in self.controls.paused(g).items()
                  for p in partitions]
        return {"paused": paused}

    async def state_lag(self, request: Request) -> Any:
        lag = [{"group": g, **msgspec.structs.asdict(entry)}
               for g in self._groups_asked(request.query, "GET /state/lag")
               for entry in self.controls.lag(g)]
        return {"lag": lag}

    # -- the group event log and the live page ------------------------------------------

    def _event_filters(self, query: Mapping[str, list[str]], where: str,
                       *more: str) -> dict[str, Any]:
        _fields(query, (*_EVENT_FILTERS, *more), where)
        since = _query_int(query, "since")
        return {"group": _query_text(query, "group"), "kind": _query_text(query, "kind"),
                "group_type": _query_text(query, "type"), "since": 0 if since is None else since}

    async def events(self, request: Request) -> Any:
        query = request.query
        filters = self._event_filters(query, "GET /events", "limit", "wait_ms")
        return await read_events(self.controls, **filters, limit=_query_int(query, "limit"),
                                 wait_ms=_query_int(query, "wait_ms"))

    async def events_stream(self, request: Request) -> Any:
        filters = self._event_filters(request.query, "GET /events/stream")
        return EventStream(self.controls.event_feed(**filters, type_field="type"))

    async def ui(self, request: Request) -> Any:
        _fields(request.query, (), "GET /ui")
        return ui_page()

    # -- SASL users -------------------------------------------------------------------

    async def users_list(self, request: Request) -> Any:
        return {"users": self.controls.users()}

    async def users_add(self, request: Request) -> Any:
        body = request.json()
        _fields(body, ("name", "password", "mechanism", "iterations"), "POST /users")
        name, password = _required(body, "name"), _required(body, "password")
        mechanism, iterations = body.get("mechanism", "SCRAM-SHA-512"), body.get("iterations", 4096)
        for field, value, kind in (("name", name, str), ("password", password, str),
                                   ("mechanism", mechanism, str), ("iterations", iterations, int)):
            if isinstance(value, bool) or not isinstance(value, kind):
                raise ValueError(f"{field}: expected {'text' if kind is str else 'a number'}, "
                                 f"got {value!r}")
        self.controls.add_user(name, password, mechanism, iterations)
        return {"users": self.controls.users()}

    async def users_remove(self, request: Request) -> Any:
        body = request.json()
        _fields(body, ("name", "mechanism"), "DELETE /users")
        name = _required(body, "name")
        return {"name": name, "removed": self.controls.remove_user(name, body.get("mechanism"))}

    # -- retention and the log cleaner --------------------------------------------------

    async def log_maintenance(self, request: Request) -> Any:
        body = request.json()
        _fields(body, ("roll",), "POST /log-maintenance")
        roll = body.get("roll", False)
        if not isinstance(roll, bool):
            raise ValueError(f"roll: expected true or false, got {roll!r}")
        return await self.controls.run_log_maintenance(roll=roll)


def _timeout(body: Mapping[str, Any]) -> dict[str, Any]:
    return {} if body.get("timeout") is None else {"timeout": body["timeout"]}
