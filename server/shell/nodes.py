"""Each node's listeners, when one kcsim plays several brokers: what stopping a node closes
and starting it again binds anew.

A node's accept tasks run under cancel scopes of the node, so stopping it ends them; the
addresses its sockets were bound to are kept, so it comes back where clients knew it
(bound at once, without awaiting, so that a test's control can do it from any thread's
call). The topology's endpoints (each node's advertised address by listener name) are
filled as listeners are bound, for the answers that name another node.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any

import trio

if TYPE_CHECKING:
    from ..listeners import Listener
    from ..state.topology import Topology

_BACKLOG = 128


class NodeListeners:
    """The sockets, bound addresses and accept scopes of each node."""

    def __init__(self, topology: Topology | None) -> None:
        self._topology = topology
        self._sockets: dict[int, list[trio.SocketListener]] = {}
        # Where each socket of the node was bound: (family, address, advertised as).
        self._bound: dict[int, list[tuple[int, Any, Listener]]] = {}
        self._scopes: dict[int, list[trio.CancelScope]] = {}

    def bound(self, node: int, address: Listener, sockets: list[trio.SocketListener]) -> None:
        """A listener of the node is bound; `address` is what it advertises."""
        self._sockets.setdefault(node, []).extend(sockets)
        self._bound.setdefault(node, []).extend(
            (s.socket.family, s.socket.getsockname(), address) for s in sockets)
        if self._topology is not None:
            self._topology.endpoints[(node, address.name)] = address

    def live(self, node: int) -> bool:
        return self._topology is None or self._topology.is_live(node)

    def scope(self, node: int) -> trio.CancelScope:
        """A scope for one of the node's accept tasks, cancelled when the node stops."""
        scope = trio.CancelScope()
        self._scopes.setdefault(node, []).append(scope)
        return scope

    def close(self, node: int) -> list[trio.SocketListener]:
        """Stop accepting for the node; its sockets, for the caller to close."""
        for scope in self._scopes.pop(node, []):
            scope.cancel()
        return self._sockets.pop(node, [])

    def rebind(self, node: int) -> list[tuple[trio.SocketListener, Listener]]:
        """Bind the node's sockets again where they were; each with what it advertises."""
        out = []
        for family, where, address in self._bound.get(node, []):
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind(where)
                sock.listen(_BACKLOG)
            except BaseException:
                sock.close()
                raise
            listener = trio.SocketListener(trio.socket.from_stdlib_socket(sock))
            self._sockets.setdefault(node, []).append(listener)
            out.append((listener, address))
        return out
