"""Everything a coordinator holds, durable and soft, as plain data: to check that a call changed
nothing at all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kcsim.coordinator import GroupCoordinator

# Derived caches (recomputed on demand) and journal bookkeeping: not state.
_CACHES = {"_selected_name", "_selected_metadata", "_member_list", "_journal", "journaled",
           "timer_key"}


def _slots(obj: Any) -> dict[str, Any]:
    names = [n for cls in type(obj).__mro__ for n in getattr(cls, "__slots__", ())]
    return {n: _plain(getattr(obj, n)) for n in names if n not in _CACHES and hasattr(obj, n)}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return frozenset(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if (not isinstance(value, tuple) and hasattr(type(value), "__slots__")
            and type(value).__module__.startswith("kcsim.coordinator")):
        return (type(value).__name__, _slots(value))
    return value


def dump(gc: GroupCoordinator) -> dict[str, Any]:
    rt = gc._rt
    deadlines = rt.deadlines
    return {
        "classic": {gid: _slots(g) for gid, g in rt.groups.items()},
        "consumer": {gid: _slots(g) for gid, g in rt.consumer_groups.items()},
        "streams": {gid: _slots(g) for gid, g in rt.streams_groups.items()},
        "offsets": _plain(rt.offsets.by_group),
        "paused": _plain(rt.paused.by_group),
        "timers": dict(deadlines._by_key),
        # the heap's live entries, in firing order (stale ones are dropped lazily)
        "timer_order": sorted({e for e in deadlines._heap
                               if deadlines._by_key.get(e[2], (0, None))[1] == e[1]}),
        "earliest": deadlines.earliest(),
        "parked": set(rt.parked),
        "cancelled": set(rt.cancelled),
        "loaded": dict(rt.loaded),
        "failed": set(rt.failed),
        "now": rt.now,
    }
