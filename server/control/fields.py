"""What a decoded request names (topics, partitions) and what its answer reports (errors).

Read by field names, the same across the APIs: fault rules match on them, and
the request log derives them only when a test asks. Nothing here runs per
request unless a rule that needs it is installed. The groups a request names are
the protocol's reading (`kcsim.protocol.named_groups`), which the group coordinator
shares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable, Iterator

_TOPIC_LISTS = ("topics", "topic_data")
_PARTITION_LISTS = ("partitions", "partition_data", "partition_indexes")
_PARTITION_FIELDS = ("partition_index", "partition", "index")


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
