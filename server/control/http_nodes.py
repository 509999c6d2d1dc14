"""The HTTP control API's node endpoints, for a several-broker kcsim (`--brokers N`): each
a call of `NodeControl` (nodes.py), as kcsim.testing's `.nodes`.

GET /nodes; POST /nodes/{id}/stop and /nodes/{id}/start; POST /partitions/leader
{"topic", "partition", "node"}; POST /coordinator/move {"group" | "transactional_id",
"node", "load_ms"}; POST /leaders/shuffle {"seed"}. Each answers the nodes as GET /nodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .http_app import Route, route

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .http_app import Request
    from .nodes import NodeControl


def node_routes(nodes: NodeControl) -> list[Route]:
    """The node endpoints over `nodes`."""
    return NodeEndpoints(nodes).routes()


def _body(request: Request, allowed: tuple[str, ...], where: str) -> Mapping[str, Any]:
    body = request.json()
    for name in body:
        if name not in allowed:
            raise ValueError(f"{name}: not a field of {where} (fields: {', '.join(allowed)})")
    return body


def _int(body: Mapping[str, Any], name: str, default: int | None = None) -> int:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    return value


def _node_id(request: Request) -> int:
    text = request.params["id"]
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"node: expected a node id, got {text!r}") from None


class NodeEndpoints:
    def __init__(self, nodes: NodeControl) -> None:
        self.nodes = nodes

    def routes(self) -> list[Route]:
        return [
            route("/nodes", GET=self.list),
            route("/nodes/{id}/stop", POST=self.stop),
            route("/nodes/{id}/start", POST=self.start),
            route("/partitions/leader", POST=self.move_leader),
            route("/coordinator/move", POST=self.move_coordinator),
            route("/leaders/shuffle", POST=self.shuffle),
        ]

    def _answer(self) -> Any:
        return {"nodes": self.nodes.list()}

    async def list(self, request: Request) -> Any:
        return self._answer()

    async def stop(self, request: Request) -> Any:
        _body(request, (), "POST /nodes/{id}/stop")
        self.nodes.stop(_node_id(request))
        return self._answer()

    async def start(self, request: Request) -> Any:
        _body(request, (), "POST /nodes/{id}/start")
        self.nodes.start(_node_id(request))
        return self._answer()

    async def move_leader(self, request: Request) -> Any:
        body = _body(request, ("topic", "partition", "node"), "POST /partitions/leader")
        topic = body.get("topic")
        if not isinstance(topic, str):
            raise ValueError(f"topic: expected a topic name, got {topic!r}")
        self.nodes.move_leader(topic, _int(body, "partition"), _int(body, "node"))
        return {**self._answer(), "leader": self.nodes.leader(topic, _int(body, "partition"))}

    async def move_coordinator(self, request: Request) -> Any:
        body = _body(request, ("group", "transactional_id", "node", "load_ms"),
                     "POST /coordinator/move")
        transactional = body.get("transactional_id") is not None
        key = body.get("transactional_id") if transactional else body.get("group")
        if not isinstance(key, str) or (transactional and body.get("group") is not None):
            raise ValueError("group or transactional_id: expected one of them, an id")
        self.nodes.move_coordinator(key, _int(body, "node"), load_ms=_int(body, "load_ms", 0),
                                    transactional=transactional)
        return {**self._answer(),
                "coordinator": self.nodes.coordinator(key, transactional=transactional)}

    async def shuffle(self, request: Request) -> Any:
        body = _body(request, ("seed",), "POST /leaders/shuffle")
        seed = body.get("seed")
        self.nodes.shuffle(None if seed is None else _int(body, "seed"))
        return self._answer()
