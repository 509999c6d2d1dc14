"""What a decoded request names (groups, topics, partitions) and what its answer reports (errors).

Read by field names, the same across the APIs: fault rules match on them, and
the request log derives them only when a test asks. Nothing here runs per
request unless a rule that needs it is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable, Iterator

_TOPIC_LISTS = ("topics", "topic_data")
_PARTITION_LISTS = ("partitions", "partition_data", "partition_indexes")
_PARTITION_FIELDS = ("partition_index", "partition", "index")
_GROUP_KEY_TYPE = 0  # FindCoordinator key_type of a group


_GROUP_LISTS = ("groups", "groups_names", "group_ids")
_GROUP_READERS: dict[type, Callable[[Any], tuple[str, ...]]] = {}  # request class -> reader


def groups_of(request: Any) -> tuple[str, ...]:
    """The group ids a request is about, in the order it names them: the one reading of
    them (fault rules naming a group, the request log)."""
    reader = _GROUP_READERS.get(type(request)) or _group_reader(type(request))
    return reader(request)


def _group_reader(cls: type) -> Callable[[Any], tuple[str, ...]]:
    """How to read the groups of a request class (kept in _GROUP_READERS): most name one
    `group_id` and nothing else, read with one attribute access (fault rules naming a
    group read it per request)."""
    fields = getattr(cls, "__struct_fields__", None)
    if fields is None or not {*_GROUP_LISTS, "key_type"}.isdisjoint(fields):
        reader = _groups_named
    elif "group_id" in fields:
        reader = _group_id_only
    else:
        reader = _no_groups
    _GROUP_READERS[cls] = reader
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



def fetch_session_of(request: Any) -> tuple[int, int] | None:
    """(session id, epoch) a Fetch names (KIP-227); None for a request of another API."""
    epoch = getattr(request, "session_epoch", None)
    return None if epoch is None else (request.session_id, epoch)


def topics_of(request: Any, name_of: Callable[[uuid.UUID], str | None]) -> Iterator[tuple[str | None, int | None]]:
    """(topic, partition) pairs a request names; partition None where it names a whole topic.

    Topics named by id are resolved with `name_of`."""
    holders = [request, *(g for g in getattr(request, "groups", None) or () if not isinstance(g, str))]
    for holder in holders:
        for field in _TOPIC_LISTS:
            for topic in getattr(holder, field, None) or ():
                yield from _partitions_of(topic, name_of)
    for name in getattr(request, "subscribed_topic_names", None) or ():  # ConsumerGroupHeartbeat
        yield name, None


def _partitions_of(topic: Any, name_of: Callable[[uuid.UUID], str | None]) -> Iterator[tuple[str | None, int | None]]:
    if isinstance(topic, str):
        yield topic, None
        return
    name = getattr(topic, "name", None) or getattr(topic, "topic", None)
    if not name:
        topic_id = getattr(topic, "topic_id", None)
        name = name_of(topic_id) if topic_id is not None else None
    partitions = None
    for field in _PARTITION_LISTS:
        partitions = getattr(topic, field, None)
        if partitions is not None:
            break
    if not partitions:
        yield name, None
        return
    for p in partitions:
        if isinstance(p, int):
            yield name, p
            continue
        for field in _PARTITION_FIELDS:
            index = getattr(p, field, None)
            if index is not None:
                yield name, index
                break


def error_codes_of(response: Any) -> tuple[int, ...]:
    """Every non-zero error code in a response, each once, in the order they appear."""
    found: dict[int, None] = {}
    _collect_errors(response, found)
    return tuple(found)


def _collect_errors(value: Any, found: dict[int, None]) -> None:
    # Only the fields the codec marked as holding error codes (`error_fields`) are read:
    # a ListGroups answer of 10,000 groups has one.
    for name in getattr(value, "error_fields", ()):
        item = getattr(value, name, None)
        if name == "error_code":
            if item:
                found[item] = None
        elif isinstance(item, list):
            for element in item:
                _collect_errors(element, found)
        elif item is not None:
            _collect_errors(item, found)
