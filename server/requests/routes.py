"""Which API keys and versions kcsim serves, and the function that serves each.

Handlers register here with the version range they implement; ApiVersions
advertises exactly this table (intersected with the declared schemas), so a
client never sees a version that is not served.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kcsim.protocol.apis import APIS


@dataclass(frozen=True)
class Route:
    api_key: int
    min_version: int
    max_version: int
    fn: Callable[..., Any]
    # For read-only APIs: the version of the state answers depend on. Answers
    # are then cached by listener and request bytes until that version changes.
    cache_state: Callable[[Any], Any] | None = None


ROUTES: dict[int, Route] = {}


def serves(api_key: int, min_version: int | None = None, max_version: int | None = None,
           *, cache_state: Callable[[Any], Any] | None = None):
    """Register a handler for an API key (default: every declared version).

    `cache_state(broker)` marks a read-only API whose answer depends only on
    the request bytes, the listener it came through and the state version it returns.
    """
    api = APIS[api_key]
    lo = api.min_version if min_version is None else max(min_version, api.min_version)
    hi = api.max_version if max_version is None else min(max_version, api.max_version)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if api_key in ROUTES:
            raise RuntimeError(f"API key {api_key} has two handlers")
        ROUTES[api_key] = Route(api_key, lo, hi, fn, cache_state)
        return fn

    return register
