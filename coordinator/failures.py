"""Kafka-shaped answers for a request that fails as a whole (coordinator unavailable, loading...).

Where the error goes depends on the API and version, as in Kafka's
getErrorResponse methods: OffsetFetch puts a group error in every partition
before v2, at the top level from v2 and per group from v8; OffsetCommit and
DeleteGroups repeat it per partition or group. A request that raised is
answered UNKNOWN_SERVER_ERROR this way, and one naming a failed group
COORDINATOR_NOT_AVAILABLE: for the APIs that name many groups, only the failed
groups' entries (`group_ids`, `only_groups`, `merge_groups`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from kcsim.protocol.codecs import response_class

from .groups.responses import heartbeat_response, join_error, leave_response, sync_response

if TYPE_CHECKING:
    from collections.abc import Collection


def error_response(api_key: int, version: int, request: Any, error: int) -> Any:
    build = _BUILDERS.get(api_key)
    if build is None:
        raise ValueError(f"API key {api_key} is not served by the group coordinator")
    return build(version, request, int(error))


def _offset_commit(version: int, request: Any, error: int) -> Any:
    R = response_class(8)
    topics = []
    for t in request.topics:
        parts = [
            R.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=error)
            for p in t.partitions
        ]
        if version >= 10:
            topics.append(R.OffsetCommitResponseTopic(topic_id=t.topic_id, partitions=parts))
        else:
            topics.append(R.OffsetCommitResponseTopic(name=t.name, partitions=parts))
    return R(topics=topics)


def _offset_fetch(version: int, request: Any, error: int) -> Any:
    R = response_class(9)
    if version >= 8:
        return R(
            groups=[
                R.OffsetFetchResponseGroup(group_id=g.group_id, topics=[], error_code=error)
                for g in request.groups
            ]
        )
    if version >= 2:
        return R(topics=[], error_code=error)
    # Before v2 there is no top-level error: every requested partition carries it.
    return R(
        topics=[
            R.OffsetFetchResponseTopic(
                name=t.name,
                partitions=[
                    R.OffsetFetchResponsePartition(
                        partition_index=p,
                        committed_offset=-1,
                        committed_leader_epoch=-1,
                        metadata="",
                        error_code=error,
                    )
                    for p in t.partition_indexes
                ],
            )
            for t in request.topics or []
        ]
    )


def _join_group(version: int, request: Any, error: int) -> Any:
    return join_error(version, error)


def _heartbeat(version: int, request: Any, error: int) -> Any:
    return heartbeat_response(error)


def _leave_group(version: int, request: Any, error: int) -> Any:
    return leave_response(version, error, ())


def _sync_group(version: int, request: Any, error: int) -> Any:
    return sync_response(error)


def _describe_groups(version: int, request: Any, error: int) -> Any:
    R = response_class(15)
    return R(groups=[R.DescribedGroup(group_id=g, error_code=error) for g in request.groups])


def _list_groups(version: int, request: Any, error: int) -> Any:
    return response_class(16)(error_code=error, groups=[])


def _delete_groups(version: int, request: Any, error: int) -> Any:
    R = response_class(42)
    return R(
        results=[
            R.DeletableGroupResult(group_id=g, error_code=error)
            for g in dict.fromkeys(request.groups_names)
        ]
    )


def _offset_delete(version: int, request: Any, error: int) -> Any:
    return response_class(47)(error_code=error, topics=[])


def _consumer_group_heartbeat(version: int, request: Any, error: int) -> Any:
    return response_class(68)(error_code=error)


def _consumer_group_describe(version: int, request: Any, error: int) -> Any:
    R = response_class(69)
    return R(groups=[
        R.DescribedGroup(group_id=g, error_code=error, group_state="", assignor_name="")
        for g in request.group_ids
    ])


def _pause_change(api_key: int) -> Any:
    def build(version: int, request: Any, error: int) -> Any:
        return response_class(api_key)(error_code=error, responses=[])

    return build


def _list_paused(version: int, request: Any, error: int) -> Any:
    return response_class(1002)(error_code=error, topics=[])


def _txn_offset_commit(version: int, request: Any, error: int) -> Any:
    R = response_class(28)
    return R(topics=[
        R.TxnOffsetCommitResponseTopic(name=t.name, partitions=[
            R.TxnOffsetCommitResponsePartition(partition_index=p.partition_index, error_code=error)
            for p in t.partitions])
        for t in request.topics])


_BUILDERS = {
    8: _offset_commit,
    9: _offset_fetch,
    11: _join_group,
    12: _heartbeat,
    13: _leave_group,
    14: _sync_group,
    15: _describe_groups,
    16: _list_groups,
    28: _txn_offset_commit,
    42: _delete_groups,
    47: _offset_delete,
    68: _consumer_group_heartbeat,
    69: _consumer_group_describe,
    1000: _pause_change(1000),
    1001: _pause_change(1001),
    1002: _list_paused,
}


# -- requests naming many groups ------------------------------------------------------

# API key -> (the request's field of group ids, the response's field of per-group entries)
_MANY_GROUPS = {15: ("groups", "groups"), 42: ("groups_names", "results"),
                69: ("group_ids", "groups")}


def _many(api_key: int, version: int) -> tuple[str, str] | None:
    if api_key == 9 and version >= 8:
        return ("groups", "groups")
    return _MANY_GROUPS.get(api_key)


def group_ids(api_key: int, version: int, request: Any) -> list[str]:
    """The groups a request names (none for ListGroups)."""
    if api_key == 16:
        return []
    many = _many(api_key, version)
    if many is None:
        return [request.group_id]
    named = getattr(request, many[0]) or []
    if api_key == 9:
        return [g.group_id for g in named]
    return list(named)


def answered_per_group(api_key: int, version: int) -> bool:
    """Whether the API answers each group it names on its own (an error for one, not all)."""
    return _many(api_key, version) is not None


def only_groups(api_key: int, version: int, request: Any, keep: Collection[str]) -> Any:
    """The request narrowed to the groups in `keep`, in their order."""
    many = _many(api_key, version)
    assert many is not None
    named = getattr(request, many[0]) or []
    if api_key == 9:
        kept = [g for g in named if g.group_id in keep]
    else:
        kept = [g for g in named if g in keep]
    return msgspec.structs.replace(request, **{many[0]: kept})


def merge_groups(api_key: int, version: int, request: Any, *responses: Any) -> Any:
    """One response answering every group the request named, in its order, from responses
    that each answered some of them (the first response gives the rest of its fields)."""
    many = _many(api_key, version)
    assert many is not None
    entries: dict[str, list[Any]] = {}
    for response in responses:
        for entry in getattr(response, many[1]):
            entries.setdefault(entry.group_id, []).append(entry)
    merged = []
    for group_id in group_ids(api_key, version, request):
        queue = entries.get(group_id)
        if queue:
            merged.append(queue.pop(0))
    return msgspec.structs.replace(responses[0], **{many[1]: merged})
