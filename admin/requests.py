"""The public calls of the admin client, as Steps; both clients run these same plans.

Arguments are normalised here once, so the blocking and the trio client accept
exactly the same inputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from . import group_ops, offset_ops, pause_ops, share_ops, streams_ops, topic_ops
from .results import (
    ClusterInfo,
    GroupDescription,
    GroupListing,
    ListOffsetsResultInfo,
    OffsetAndMetadata,
    Outcomes,
    ShareGroupDescription,
    SharePartitionOffset,
    StreamsGroupDescription,
    TopicDescription,
    TopicPartition,
)

if TYPE_CHECKING:
    from .calls import Call
    from .effects import Step

GroupsWanted = str | Iterable[str] | Mapping[str, Iterable[TopicPartition] | None]


def served_versions(call: Call) -> Step[dict[int, tuple[int, int]]]:
    return (yield call.served())


def describe_cluster(call: Call) -> Step[ClusterInfo]:
    return topic_ops.metadata(call, [])


def describe_topics(call: Call, names: Iterable[str]) -> Step[Outcomes[str, TopicDescription]]:
    return topic_ops.describe_topics(call, [names] if isinstance(names, str) else names)


def list_groups(
    call: Call, states: Iterable[str], types: Iterable[str], protocol_types: Iterable[str]
) -> Step[list[GroupListing]]:
    return group_ops.list_groups(call, states, types, protocol_types)


def describe_groups(call: Call, groups: str | Iterable[str]) -> Step[Outcomes[str, GroupDescription]]:
    return group_ops.describe_groups(call, [groups] if isinstance(groups, str) else groups)


def describe_streams_groups(
    call: Call, groups: str | Iterable[str]
) -> Step[Outcomes[str, StreamsGroupDescription]]:
    return streams_ops.describe_streams_groups(call, [groups] if isinstance(groups, str) else groups)


def describe_share_groups(
    call: Call, groups: str | Iterable[str]
) -> Step[Outcomes[str, ShareGroupDescription]]:
    return share_ops.describe_share_groups(call, [groups] if isinstance(groups, str) else groups)


def list_share_group_offsets(
    call: Call, groups: GroupsWanted
) -> Step[Outcomes[str, dict[TopicPartition, SharePartitionOffset]]]:
    return share_ops.list_share_group_offsets(call, _wanted(groups))


def alter_share_group_offsets(
    call: Call, group: str, offsets: Mapping[TopicPartition, int]
) -> Step[Outcomes[TopicPartition, None]]:
    return share_ops.alter_share_group_offsets(call, group, offsets)


def delete_share_group_offsets(
    call: Call, group: str, topics: str | Iterable[str]
) -> Step[Outcomes[str, None]]:
    return share_ops.delete_share_group_offsets(
        call, group, [topics] if isinstance(topics, str) else topics)


def _wanted(groups: GroupsWanted) -> dict[str, list[TopicPartition] | None]:
    """One group, many, or {group: partitions or None (every partition)}."""
    if isinstance(groups, str):
        return {groups: None}
    if isinstance(groups, Mapping):
        return {g: None if ps is None else list(ps) for g, ps in groups.items()}
    return dict.fromkeys(groups)


def list_group_offsets(
    call: Call, groups: GroupsWanted, require_stable: bool
) -> Step[Outcomes[str, dict[TopicPartition, OffsetAndMetadata]]]:
    return offset_ops.list_group_offsets(call, _wanted(groups), require_stable)


def pending_transactional_offsets(
    call: Call, group: str, partitions: Iterable[TopicPartition]
) -> Step[set[TopicPartition]]:
    return offset_ops.pending_transactional_offsets(call, group, partitions)


def alter_group_offsets(
    call: Call, group: str, offsets: Mapping[TopicPartition, int | OffsetAndMetadata]
) -> Step[Outcomes[TopicPartition, None]]:
    normalised = {tp: om if isinstance(om, OffsetAndMetadata) else OffsetAndMetadata(int(om))
                  for tp, om in offsets.items()}
    return offset_ops.alter_group_offsets(call, group, normalised)


def delete_group_offsets(
    call: Call, group: str, partitions: Iterable[TopicPartition]
) -> Step[Outcomes[TopicPartition, None]]:
    return offset_ops.delete_group_offsets(call, group, partitions)


def delete_groups(call: Call, groups: str | Iterable[str]) -> Step[Outcomes[str, None]]:
    return group_ops.delete_groups(call, [groups] if isinstance(groups, str) else groups)


def list_offsets(
    call: Call, specs: Mapping[TopicPartition, int], isolation_level: int
) -> Step[Outcomes[TopicPartition, ListOffsetsResultInfo]]:
    return topic_ops.list_offsets(call, specs, isolation_level)


supports_pause = pause_ops.supports_pause
pause_partitions = pause_ops.pause_partitions
resume_partitions = pause_ops.resume_partitions
list_paused_partitions = pause_ops.list_paused_partitions
