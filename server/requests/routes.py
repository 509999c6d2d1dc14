"""Which API keys and versions kcsim serves, and the function that serves each.

Handlers register here with the version range they implement (`serves`); ApiVersions
advertises exactly this table (intersected with the declared schemas), so a client
never sees a version that is not served. Extension APIs sit on configurable wire
keys: `served(config)` is the table by the keys clients send.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from kcsim.protocol.apis import APIS

from ..config import DECLARED_EXTENSION_KEYS, extension_keys
from ..control.names import ApiNames

if TYPE_CHECKING:
    from ..config import Config

HANDLERS = "kcsim.server.requests.handlers"  # every module in it registers its routes


@dataclass(frozen=True)
class Route:
    api_key: int
    min_version: int
    max_version: int
    fn: Callable[..., Any]
    # For read-only APIs: the version of the state answers depend on. Answers
    # are then cached by listener and request bytes until that version changes.
    cache_state: Callable[[Any], Any] | None = None
    group: bool = False  # served by the group coordinator (fault rules name them as one)


ROUTES: dict[int, Route] = {}


def serves(api_key: int, min_version: int | None = None, max_version: int | None = None,
           *, cache_state: Callable[[Any], Any] | None = None,
           group: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a handler for an API key (default: every declared version).

    `cache_state(state)` marks a read-only API whose answer depends only on
    the request bytes, the listener it came through and the state version it returns.
    """
    api = APIS[api_key]
    lo = api.min_version if min_version is None else max(min_version, api.min_version)
    hi = api.max_version if max_version is None else min(max_version, api.max_version)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if api_key in ROUTES:
            raise RuntimeError(f"API key {api_key} has two handlers")
        ROUTES[api_key] = Route(api_key, lo, hi, fn, cache_state, group)
        return fn

    return register


@functools.cache
def load_handlers() -> dict[int, Route]:
    """Import every handler module so its routes register; returns the table (the modules
    are listed once per process, not for every broker built)."""
    package = importlib.import_module(HANDLERS)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        importlib.import_module(f"{HANDLERS}.{info.name}")
    return ROUTES


class Served(NamedTuple):
    """The APIs a broker serves, by the key clients send."""

    routes: dict[int, Route]
    names: ApiNames
    group_apis: tuple[int, ...]  # the group APIs fault rules name as one (not ListGroups)

    def advertised(self, cls: Any) -> list[Any]:
        """ApiVersions' table: `cls` is its response class."""
        return [cls.ApiVersion(api_key=wire, min_version=r.min_version, max_version=r.max_version)
                for wire, r in sorted(self.routes.items())]


def served(config: Config) -> Served:
    return _served(tuple(extension_keys(config).items()))


@functools.cache
def _served(placement: tuple[tuple[int, int], ...]) -> Served:
    """Made once per placement of the extension APIs (wire key, declared key): every
    broker of a process so configured serves the same routes."""
    declared = load_handlers()
    routes = {k: r for k, r in declared.items() if k not in DECLARED_EXTENSION_KEYS}
    for wire, key in placement:
        if key in declared:
            if wire in routes:
                raise ValueError(f"pause API key {wire} collides with a Kafka API key")
            routes[wire] = declared[key]
    names = ApiNames({wire: APIS[r.api_key].name for wire, r in routes.items()})
    group_apis = tuple(wire for wire, r in sorted(routes.items())
                       if r.group and APIS[r.api_key].name != "ListGroups")
    return Served(routes, names, group_apis)
