"""Which groups a request names: the one reading of them.

Read by field names, the same across the APIs and versions: one `group_id`, or lists
of them (`groups`, `groups_names`, `group_ids`; OffsetFetch v8+ names its groups by
entries carrying a `group_id`), or FindCoordinator's keys when it asks for a group
coordinator. A field the request's version lacks holds its default (an empty id or
list) and reads as naming nothing. The group coordinator's containment asks it
whether a request concerns a failed group; the server's fault rules and request log
which groups a request is about.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

_GROUP_LISTS = ("groups", "groups_names", "group_ids")
_GROUP_KEY_TYPE = 0  # FindCoordinator key_type of a group
_READERS: dict[type, Callable[[Any], tuple[str, ...]]] = {}  # request class -> reader


def groups_of(request: object) -> tuple[str, ...]:
    """The group ids a request is about, in the order it names them, each once."""
    reader = _READERS.get(type(request)) or _reader(type(request))
    return reader(request)


def _reader(cls: type) -> Callable[[Any], tuple[str, ...]]:
    """How to read the groups of a request class (kept in _READERS): most name one
    `group_id` and nothing else, read with one attribute access (fault rules naming a
    group read it per request)."""
    fields: tuple[str, ...] | None = getattr(cls, "__struct_fields__", None)
    reader: Callable[[Any], tuple[str, ...]]
    if fields is None or not {*_GROUP_LISTS, "key_type"}.isdisjoint(fields):
        reader = _groups_named
    elif "group_id" in fields:
        reader = _group_id_only
    else:
        reader = _no_groups
    _READERS[cls] = reader
    return reader


def _group_id_only(request: Any) -> tuple[str, ...]:
    return (request.group_id,) if request.group_id else ()


def _no_groups(request: Any) -> tuple[str, ...]:
    return ()


def _groups_named(request: Any) -> tuple[str, ...]:
    found: list[str] = []
    group_id = getattr(request, "group_id", None)
    if group_id:
        found.append(group_id)
    for name in _GROUP_LISTS:
        for item in getattr(request, name, None) or ():
            if isinstance(item, str):
                found.append(item)
            elif getattr(item, "group_id", None):
                found.append(item.group_id)
    if getattr(request, "key_type", None) == _GROUP_KEY_TYPE:  # FindCoordinator
        keys = getattr(request, "coordinator_keys", None)
        found.extend(keys if keys else [k for k in (getattr(request, "key", None),) if k])
    return tuple(dict.fromkeys(found))
