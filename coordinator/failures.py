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

from typing import TYPE_CHECKING, TypeVar

import msgspec

from kcsim.protocol.messages.consumer_group import (
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatResponse,
)
from kcsim.protocol.messages.delete_groups import DeleteGroupsResponse
from kcsim.protocol.messages.describe_groups import DescribeGroupsResponse
from kcsim.protocol.messages.list_groups import ListGroupsResponse
from kcsim.protocol.messages.offset_commit import OffsetCommitResponse
from kcsim.protocol.messages.offset_delete import OffsetDeleteResponse
from kcsim.protocol.messages.offset_fetch import OffsetFetchResponse
from kcsim.protocol.messages.pause_partitions import (
    ListPausedPartitionsResponse,
    PausePartitionsResponse,
    ResumePartitionsResponse,
)
from kcsim.protocol.messages.transactions import TxnOffsetCommitResponse

from .groups.responses import heartbeat_response, join_error, leave_response, sync_response
from .shared.interface import by_api_key

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from msgspec import Struct

    from kcsim.protocol.messages.consumer_group import (
        ConsumerGroupDescribeRequest,
        ConsumerGroupHeartbeatRequest,
    )
    from kcsim.protocol.messages.delete_groups import DeleteGroupsRequest
    from kcsim.protocol.messages.describe_groups import DescribeGroupsRequest
    from kcsim.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
    from kcsim.protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
    from kcsim.protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse
    from kcsim.protocol.messages.list_groups import ListGroupsRequest
    from kcsim.protocol.messages.offset_commit import OffsetCommitRequest
    from kcsim.protocol.messages.offset_delete import OffsetDeleteRequest
    from kcsim.protocol.messages.offset_fetch import OffsetFetchRequest
    from kcsim.protocol.messages.pause_partitions import (
        ListPausedPartitionsRequest,
        PausePartitionsRequest,
        ResumePartitionsRequest,
    )
    from kcsim.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse
    from kcsim.protocol.messages.transactions import TxnOffsetCommitRequest


def error_response(api_key: int, version: int, request: Struct, error: int) -> Struct:
    build = _BUILDERS.get(api_key)
    if build is None:
        raise ValueError(f"API key {api_key} is not served by the group coordinator")
    return build(version, request, int(error))


def _offset_commit(version: int, request: OffsetCommitRequest, error: int) -> OffsetCommitResponse:
    R = OffsetCommitResponse
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


def _offset_fetch(version: int, request: OffsetFetchRequest, error: int) -> OffsetFetchResponse:
    R = OffsetFetchResponse
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


def _join_group(version: int, request: JoinGroupRequest, error: int) -> JoinGroupResponse:
    return join_error(version, error)


def _heartbeat(version: int, request: HeartbeatRequest, error: int) -> HeartbeatResponse:
    return heartbeat_response(error)


def _leave_group(version: int, request: LeaveGroupRequest, error: int) -> LeaveGroupResponse:
    return leave_response(version, error, ())


def _sync_group(version: int, request: SyncGroupRequest, error: int) -> SyncGroupResponse:
    return sync_response(error)


def _describe_groups(
    version: int, request: DescribeGroupsRequest, error: int
) -> DescribeGroupsResponse:
    R = DescribeGroupsResponse
    return R(groups=[R.DescribedGroup(group_id=g, error_code=error) for g in request.groups])


def _list_groups(version: int, request: ListGroupsRequest, error: int) -> ListGroupsResponse:
    return ListGroupsResponse(error_code=error, groups=[])


def _delete_groups(version: int, request: DeleteGroupsRequest, error: int) -> DeleteGroupsResponse:
    R = DeleteGroupsResponse
    return R(
        results=[
            R.DeletableGroupResult(group_id=g, error_code=error)
            for g in dict.fromkeys(request.groups_names)
        ]
    )


def _offset_delete(version: int, request: OffsetDeleteRequest, error: int) -> OffsetDeleteResponse:
    return OffsetDeleteResponse(error_code=error, topics=[])


def _consumer_group_heartbeat(
    version: int, request: ConsumerGroupHeartbeatRequest, error: int
) -> ConsumerGroupHeartbeatResponse:
    return ConsumerGroupHeartbeatResponse(error_code=error)


def _consumer_group_describe(
    version: int, request: ConsumerGroupDescribeRequest, error: int
) -> ConsumerGroupDescribeResponse:
    R = ConsumerGroupDescribeResponse
    return R(groups=[
        R.DescribedGroup(group_id=g, error_code=error, group_state="", assignor_name="")
        for g in request.group_ids
    ])


def _pause(version: int, request: PausePartitionsRequest, error: int) -> PausePartitionsResponse:
    return PausePartitionsResponse(error_code=error, responses=[])


def _resume(version: int, request: ResumePartitionsRequest, error: int) -> ResumePartitionsResponse:
    return ResumePartitionsResponse(error_code=error, responses=[])


def _list_paused(
    version: int, request: ListPausedPartitionsRequest, error: int
) -> ListPausedPartitionsResponse:
    return ListPausedPartitionsResponse(error_code=error, topics=[])


def _txn_offset_commit(
    version: int, request: TxnOffsetCommitRequest, error: int
) -> TxnOffsetCommitResponse:
    R = TxnOffsetCommitResponse
    return R(topics=[
        R.TxnOffsetCommitResponseTopic(name=t.name, partitions=[
            R.TxnOffsetCommitResponsePartition(partition_index=p.partition_index, error_code=error)
            for p in t.partitions])
        for t in request.topics])


_BUILDERS: dict[int, Callable[[int, Struct, int], Struct]] = {
    8: by_api_key(_offset_commit),
    9: by_api_key(_offset_fetch),
    11: by_api_key(_join_group),
    12: by_api_key(_heartbeat),
    13: by_api_key(_leave_group),
    14: by_api_key(_sync_group),
    15: by_api_key(_describe_groups),
    16: by_api_key(_list_groups),
    28: by_api_key(_txn_offset_commit),
    42: by_api_key(_delete_groups),
    47: by_api_key(_offset_delete),
    68: by_api_key(_consumer_group_heartbeat),
    69: by_api_key(_consumer_group_describe),
    1000: by_api_key(_pause),
    1001: by_api_key(_resume),
    1002: by_api_key(_list_paused),
}


# -- requests naming many groups ------------------------------------------------------

_Request = TypeVar("_Request", bound=msgspec.Struct)

# API key -> (the request's field of group ids, the response's field of per-group entries)
_GROUP_ID = "group_id"  # the field of a request naming one group
_MANY_GROUPS = {15: ("groups", "groups"), 42: ("groups_names", "results"),
                69: ("group_ids", "groups")}


def _many(api_key: int, version: int) -> tuple[str, str] | None:
    if api_key == 9 and version >= 8:
        return ("groups", "groups")
    return _MANY_GROUPS.get(api_key)


def group_ids(api_key: int, version: int, request: Struct) -> list[str]:
    """The groups a request names (none for ListGroups)."""
    if api_key == 16:
        return []
    many = _many(api_key, version)
    if many is None:
        return [getattr(request, _GROUP_ID)]
    named = getattr(request, many[0]) or []
    if api_key == 9:
        return [g.group_id for g in named]
    return list(named)


def answered_per_group(api_key: int, version: int) -> bool:
    """Whether the API answers each group it names on its own (an error for one, not all)."""
    return _many(api_key, version) is not None


def only_groups(
    api_key: int, version: int, request: _Request, keep: Collection[str]
) -> _Request:
    """The request narrowed to the groups in `keep`, in their order."""
    many = _many(api_key, version)
    assert many is not None
    named = getattr(request, many[0]) or []
    if api_key == 9:
        kept = [g for g in named if g.group_id in keep]
    else:
        kept = [g for g in named if g in keep]
    return msgspec.structs.replace(request, **{many[0]: kept})


def merge_groups(api_key: int, version: int, request: Struct, *responses: Struct) -> Struct:
    """One response answering every group the request named, in its order, from responses
    that each answered some of them (the first response gives the rest of its fields)."""
    many = _many(api_key, version)
    assert many is not None
    entries: dict[str, list[Struct]] = {}
    for response in responses:
        for entry in getattr(response, many[1]):
            entries.setdefault(entry.group_id, []).append(entry)
    merged = []
    for group_id in group_ids(api_key, version, request):
        queue = entries.get(group_id)
        if queue:
            merged.append(queue.pop(0))
    return msgspec.structs.replace(responses[0], **{many[1]: merged})
