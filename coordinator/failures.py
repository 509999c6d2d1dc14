"""Requests naming many groups, one of which failed: the others are served as usual.

A request naming a failed group is answered COORDINATOR_NOT_AVAILABLE (Kafka's error
answer, `kcsim.protocol.error_answers`); an API that answers each group it names on its
own (DescribeGroups, DeleteGroups, OffsetFetch v8+, ConsumerGroupDescribe) gets that
error for the failed groups only: the request is split (`split_groups`), its parts
answered, and the answers merged in the request's order (`merge_groups`). Which
groups a request names is the protocol's reading (`kcsim.protocol.named_groups`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import msgspec

if TYPE_CHECKING:
    from collections.abc import Collection

    from msgspec import Struct


_Request = TypeVar("_Request", bound=msgspec.Struct)

# API key -> (the request's field of groups, the response's field of per-group entries)
_MANY_GROUPS = {15: ("groups", "groups"), 42: ("groups_names", "results"),
                69: ("group_ids", "groups"), 77: ("group_ids", "groups"),
                89: ("group_ids", "groups"), 90: ("groups", "groups")}


def _many(api_key: int, version: int) -> tuple[str, str] | None:
    if api_key == 9 and version >= 8:
        return ("groups", "groups")
    return _MANY_GROUPS.get(api_key)


def answered_per_group(api_key: int, version: int) -> bool:
    """Whether the API answers each group it names on its own (an error for one, not all)."""
    return _many(api_key, version) is not None


def split_groups(
    api_key: int, version: int, request: _Request, failed: Collection[str]
) -> tuple[_Request | None, _Request]:
    """The request's part naming the groups not in `failed` (None if it names none of
    them) and its part naming the failed ones, each in the request's order."""
    many = _many(api_key, version)
    assert many is not None
    field = many[0]
    healthy: list[object] = []
    unhealthy: list[object] = []
    for entry in getattr(request, field) or []:
        (unhealthy if _group_of(entry) in failed else healthy).append(entry)
    replace = msgspec.structs.replace
    return (replace(request, **{field: healthy}) if healthy else None,
            replace(request, **{field: unhealthy}))


def _group_of(entry: object) -> str:
    """The group id of an entry of a request's groups (OffsetFetch v8+: a struct)."""
    if isinstance(entry, str):
        return entry
    group_id: str = getattr(entry, "group_id", "")
    return group_id


def merge_groups(api_key: int, version: int, request: Struct, *responses: Struct) -> Struct:
    """One response answering every group the request named, in its order, from responses
    that each answered some of them (the first response gives the rest of its fields).

    Walks the request's own entries, a group named twice twice, as the answer has one
    entry per entry of the request."""
    many = _many(api_key, version)
    assert many is not None
    entries: dict[str, list[Struct]] = {}
    for response in responses:
        for entry in getattr(response, many[1]):
            entries.setdefault(entry.group_id, []).append(entry)
    merged = []
    for named in getattr(request, many[0]) or []:
        queue = entries.get(_group_of(named))
        if queue:
            merged.append(queue.pop(0))
    return msgspec.structs.replace(responses[0], **{many[1]: merged})
