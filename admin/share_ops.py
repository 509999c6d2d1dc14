"""Share groups (KIP-932): describe them (ShareGroupDescribe) and read, move or forget their
start offsets (DescribeShareGroupOffsets, AlterShareGroupOffsets, DeleteShareGroupOffsets).

Listing and deleting share groups go through the calls every group kind shares, as in
Kafka's Admin: ListGroups with type "share", and DeleteGroups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode

from .coordinators import for_each_group, for_one_group
from .errors import AdminError
from .group_ops import canonical_state, describe_each
from .partitions import by_topic, partition_outcomes
from .results import (
    Node,
    Outcomes,
    ShareGroupDescription,
    ShareMemberDescription,
    SharePartitionOffset,
    TopicPartition,
)
from .wire import negotiate

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from .calls import Call
    from .effects import Step

SHARE_GROUP_DESCRIBE = 77
DESCRIBE_OFFSETS, ALTER_OFFSETS, DELETE_OFFSETS = 90, 91, 92
DescribeOffsets = request_class(DESCRIBE_OFFSETS)
AlterOffsets = request_class(ALTER_OFFSETS)
DeleteOffsets = request_class(DELETE_OFFSETS)

SharePartitionsWanted = list[TopicPartition] | None  # None: every partition with share state


def describe_share_groups(
    call: Call, groups: Iterable[str]
) -> Step[Outcomes[str, ShareGroupDescription]]:
    """Each share group's state, epochs and members with their assignments;
    GROUP_ID_NOT_FOUND for a group that does not exist or is of another kind."""
    outcomes = yield from for_each_group(call, groups, lambda node, gs: _describe_on(call, node, gs),
                                         batched=True)
    return Outcomes(outcomes)


def _describe_on(call: Call, node: Node, groups: list[str]) -> Step[dict[str, Any]]:
    served = yield call.served(node)
    if negotiate(served, SHARE_GROUP_DESCRIBE, 1, 1) is None:
        raise AdminError(ErrorCode.UNSUPPORTED_VERSION,
                         "the broker does not serve ShareGroupDescribe (share groups)")
    return (yield from describe_each(call, node, SHARE_GROUP_DESCRIBE, (1, 1), groups,
                                     _share_group))


def _share_group(g: Any, node: Node) -> ShareGroupDescription:
    return ShareGroupDescription(
        group_id=g.group_id, state=canonical_state(g.group_state), group_epoch=g.group_epoch,
        target_assignment_epoch=g.assignment_epoch, coordinator=node, assignor=g.assignor_name,
        members=tuple(ShareMemberDescription(
            member_id=m.member_id, member_epoch=m.member_epoch, client_id=m.client_id,
            host=m.client_host, rack_id=m.rack_id,
            subscribed_topics=tuple(m.subscribed_topic_names),
            assignment=tuple(sorted(TopicPartition(t.topic_name, p)
                                    for t in m.assignment.topic_partitions
                                    for p in t.partitions)))
            for m in g.members))


def list_share_group_offsets(
    call: Call, wanted: Mapping[str, SharePartitionsWanted]
) -> Step[Outcomes[str, dict[TopicPartition, SharePartitionOffset]]]:
    """Each share group's start offsets (and lag where the broker says it), in one
    DescribeShareGroupOffsets per coordinator."""

    def attempt(node: Node, groups: list[str]) -> Step[dict[str, Any]]:
        def build(version: int) -> Any:
            R = DescribeOffsets
            return R(groups=[R.DescribeShareGroupOffsetsRequestGroup(
                group_id=g, topics=None if wanted[g] is None else [
                    R.DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps)
                    for t, ps in by_topic(wanted[g] or ()).items()])
                for g in groups])

        reply = yield call.send(node, DESCRIBE_OFFSETS, build, (0, 1))
        return {g.group_id: AdminError(g.error_code, g.error_message) if g.error_code
                else _start_offsets(g.topics) for g in reply.body.groups}

    outcomes = yield from for_each_group(call, wanted, attempt, batched=True)
    return Outcomes(outcomes)


def _start_offsets(topics: Any) -> dict[TopicPartition, SharePartitionOffset]:
    """The partitions answered without an error, sorted."""
    return dict(sorted(
        (TopicPartition(t.topic_name, p.partition_index), SharePartitionOffset(
            p.start_offset, p.leader_epoch if p.leader_epoch >= 0 else None, p.lag))
        for t in topics for p in t.partitions if not p.error_code))


def alter_share_group_offsets(
    call: Call, group: str, offsets: Mapping[TopicPartition, int]
) -> Step[Outcomes[TopicPartition, None]]:
    """Set an empty share group's start offsets: the records before are done with, every
    record from the offset on is delivered afresh (NON_EMPTY_GROUP while members remain)."""
    offsets = dict(offsets)

    def build(version: int) -> Any:
        R = AlterOffsets
        grouped: dict[str, list[Any]] = {}
        for tp, offset in offsets.items():
            grouped.setdefault(tp.topic, []).append(R.AlterShareGroupOffsetsRequestPartition(
                partition_index=tp.partition, start_offset=offset))
        return R(group_id=group, topics=[R.AlterShareGroupOffsetsRequestTopic(
            topic_name=t, partitions=ps) for t, ps in grouped.items()])

    def attempt(node: Node) -> Step[Outcomes[TopicPartition, None]]:
        reply = yield call.send(node, ALTER_OFFSETS, build, (0, 0))
        if reply.body.error_code:
            raise AdminError(reply.body.error_code, reply.body.error_message)
        return partition_outcomes(reply.body.responses, offsets)

    if not offsets:
        return Outcomes({})
    return (yield from for_one_group(call, group, attempt))


def delete_share_group_offsets(
    call: Call, group: str, topics: Iterable[str]
) -> Step[Outcomes[str, None]]:
    """Forget an empty share group's state of these topics: the next fetch starts them
    where share.auto.offset.reset says."""
    topics = list(dict.fromkeys(topics))

    def build(version: int) -> Any:
        R = DeleteOffsets
        return R(group_id=group, topics=[R.DeleteShareGroupOffsetsRequestTopic(topic_name=t)
                                         for t in topics])

    def attempt(node: Node) -> Step[Outcomes[str, None]]:
        reply = yield call.send(node, DELETE_OFFSETS, build, (0, 0))
        if reply.body.error_code:
            raise AdminError(reply.body.error_code, reply.body.error_message)
        answered = {t.topic_name: AdminError(t.error_code, t.error_message) if t.error_code
                    else None for t in reply.body.responses}
        missing = AdminError(ErrorCode.UNKNOWN_SERVER_ERROR, "the broker did not answer for it")
        return Outcomes({t: answered.get(t, missing) for t in topics})

    if not topics:
        return Outcomes({})
    return (yield from for_one_group(call, group, attempt))
