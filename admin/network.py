"""Performing effects over real connections: a blocking network and a trio one.

Both keep one connection per broker address, negotiate each request's version
against that broker's ApiVersions, and count the requests they send by API name.
"""

from __future__ import annotations

import time
from collections import Counter
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

from kcsim.protocol.codecs import api
from kcsim.protocol.errors import ErrorCode

from .connection import SyncConnection, TrioConnection, parse_bootstrap
from .driver import outcome_of, run_sync, run_trio
from .effects import Gather, Reply, Send, ServedVersions, Sleep
from .errors import AdminError
from .wire import negotiate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .results import Node


def _api_name(key: int) -> str:
    try:
        return api(key).name
    except KeyError:
        return f"api {key}"


def choose_version(served: dict[int, tuple[int, int]], address: str, effect: Send) -> int:
    key = effect.api_key if effect.wire_key is None else effect.wire_key
    version = negotiate(served, key, *effect.versions)
    if version is not None:
        return version
    lo, hi = effect.versions
    theirs = served.get(key)
    name = _api_name(effect.api_key)
    if theirs is None:
        why = f"the broker at {address} does not serve {name}"
    else:
        why = (f"the broker at {address} serves {name} v{theirs[0]}-{theirs[1]}, "
               f"this client speaks v{lo}-{hi}")
    raise AdminError(ErrorCode.UNSUPPORTED_VERSION, why)


class SyncNetwork:
    def __init__(self, bootstrap_servers: str | Sequence[str], client_id: str) -> None:
        self.bootstrap = parse_bootstrap(bootstrap_servers)
        self.client_id = client_id
        self.request_counts: Counter[str] = Counter()
        self._connections: dict[tuple[str, int], SyncConnection] = {}

    def connection(self, node: Node | None, deadline: float) -> SyncConnection:
        if node is not None:
            return self._open(node.host, node.port, deadline)
        for conn in self._connections.values():
            if conn.open:
                return conn
        last: AdminError | None = None
        for host, port in self.bootstrap:
            try:
                return self._open(host, port, deadline)
            except AdminError as exc:
                last = exc
        assert last is not None
        raise last

    def _open(self, host: str, port: int, deadline: float) -> SyncConnection:
        conn = self._connections.get((host, port))
        if conn is None or not conn.open:
            conn = SyncConnection(host, port, self.client_id)
            conn.connect(deadline)
            self._connections[(host, port)] = conn
        return conn

    def perform(self, effect: Any) -> Any:
        if isinstance(effect, Send):
            conn = self.connection(effect.node, effect.deadline)
            version = choose_version(conn.served, conn.address, effect)
            wire_key = effect.api_key if effect.wire_key is None else effect.wire_key
            self.request_counts[_api_name(effect.api_key)] += 1
            response = conn.call(wire_key, version, effect.build(version), effect.deadline,
                                 schema_key=effect.api_key)
            return Reply(response.version, response.body)
        if isinstance(effect, ServedVersions):
            return self.connection(effect.node, effect.deadline).served
        if isinstance(effect, Sleep):
            time.sleep(effect.seconds)
            return None
        if isinstance(effect, Gather):
            return [outcome_of(partial(run_sync, step, self.perform)) for step in effect.steps]
        raise TypeError(f"unknown effect {effect!r}")

    def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()


class TrioNetwork:
    def __init__(self, bootstrap_servers: str | Sequence[str], client_id: str) -> None:
        self.bootstrap = parse_bootstrap(bootstrap_servers)
        self.client_id = client_id
        self.request_counts: Counter[str] = Counter()
        self._connections: dict[tuple[str, int], TrioConnection] = {}
        self._opening: dict[tuple[str, int], trio.Lock] = {}

    async def connection(self, node: Node | None, deadline: float) -> TrioConnection:
        if node is not None:
            return await self._open(node.host, node.port, deadline)
        for conn in self._connections.values():
            if conn.open:
                return conn
        last: AdminError | None = None
        for host, port in self.bootstrap:
            try:
                return await self._open(host, port, deadline)
            except AdminError as exc:
                last = exc
        assert last is not None
        raise last

    async def _open(self, host: str, port: int, deadline: float) -> TrioConnection:
        lock = self._opening.setdefault((host, port), trio.Lock())
        async with lock:
            conn = self._connections.get((host, port))
            if conn is None or not conn.open:
                if conn is not None:
                    await conn.aclose()
                conn = TrioConnection(host, port, self.client_id)
                try:
                    await conn.connect(deadline)
                except AdminError:
                    await conn.aclose()
                    raise
                self._connections[(host, port)] = conn
            return conn

    async def perform(self, effect: Any) -> Any:
        if isinstance(effect, Send):
            conn = await self.connection(effect.node, effect.deadline)
            version = choose_version(conn.served, conn.address, effect)
            wire_key = effect.api_key if effect.wire_key is None else effect.wire_key
            self.request_counts[_api_name(effect.api_key)] += 1
            response = await conn.call(wire_key, version, effect.build(version), effect.deadline,
                                       schema_key=effect.api_key)
            return Reply(response.version, response.body)
        if isinstance(effect, ServedVersions):
            return (await self.connection(effect.node, effect.deadline)).served
        if isinstance(effect, Sleep):
            await trio.sleep(effect.seconds)
            return None
        if isinstance(effect, Gather):
            results: list[Any] = [None] * len(effect.steps)

            async def one(i: int, step: Any) -> None:
                try:
                    results[i] = await run_trio(step, self.perform)
                except AdminError as exc:
                    results[i] = exc

            async with trio.open_nursery() as nursery:
                for i, step in enumerate(effect.steps):
                    nursery.start_soon(one, i, step)
            return results
        raise TypeError(f"unknown effect {effect!r}")

    async def aclose(self) -> None:
        for conn in self._connections.values():
            await conn.aclose()
        self._connections.clear()
