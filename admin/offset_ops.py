"""A group's committed offsets: list (OffsetFetch, batched per KIP-709), alter (OffsetCommit)
and delete (OffsetDelete)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode

from .coordinators import for_each_group, for_one_group
from .effects import Gather, Step
from .errors import AdminError
from .partitions import by_topic, partition_outcomes
from .results import Node, OffsetAndMetadata, Outcomes, TopicPartition
from .topic_ops import NO_TOPIC_ID
from .wire import negotiate

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from .calls import Call

OFFSET_COMMIT = 8
OFFSET_FETCH = 9
OFFSET_DELETE = 47
OffsetCommitRequest = request_class(OFFSET_COMMIT)
OffsetFetchRequest = request_class(OFFSET_FETCH)
OffsetDeleteRequest = request_class(OFFSET_DELETE)

BATCHED_OFFSET_FETCH = 8  # KIP-709: many groups in one OffsetFetch
OFFSET_FETCH_VERSIONS = (1, 9)  # v10 names topics by id only
ALL_PARTITIONS_VERSION = 2  # null topics ("every partition") needs v2
OFFSET_COMMIT_VERSIONS = (2, 9)
NO_OFFSET = -1

# OffsetCommit reports group-wide problems on every partition; these fail the whole group.
GROUP_LEVEL_COMMIT_ERRORS = frozenset({
    ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.INVALID_GROUP_ID, ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION, ErrorCode.REBALANCE_IN_PROGRESS,
    ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.STALE_MEMBER_EPOCH, ErrorCode.NOT_COORDINATOR,
    ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
})

GroupOffsets = dict[TopicPartition, OffsetAndMetadata]
PartitionsWanted = list[TopicPartition] | None  # None: every partition with an offset


def list_group_offsets(
    call: Call, wanted: Mapping[str, PartitionsWanted], require_stable: bool = False
) -> Step[Outcomes[str, GroupOffsets]]:
    """Each group's committed offsets; groups sharing a coordinator share a request when it
    serves OffsetFetch v8+, and get one request each otherwise."""

    def attempt(node: Node, groups: list[str]) -> Step[dict[str, Any]]:
        served = yield call.served(node)
        version = negotiate(served, OFFSET_FETCH, *OFFSET_FETCH_VERSIONS)
        if version is not None and version >= BATCHED_OFFSET_FETCH:
            return (yield from _fetch_batched(call, node, {g: wanted[g] for g in groups},
                                              require_stable))
        outcomes = yield Gather(tuple(
            _fetch_one(call, node, g, wanted[g], require_stable) for g in groups))
        return dict(zip(groups, outcomes))

    outcomes = yield from for_each_group(call, wanted, attempt, batched=True)
    return Outcomes(outcomes)


def _fetch_batched(
    call: Call, node: Node, wanted: dict[str, PartitionsWanted], require_stable: bool
) -> Step[dict[str, Any]]:
    def build(version: int) -> Any:
        return OffsetFetchRequest(require_stable=require_stable, groups=[
            OffsetFetchRequest.OffsetFetchRequestGroup(
                group_id=group, member_id=None, member_epoch=-1,
                topics=None if parts is None else [
                    OffsetFetchRequest.OffsetFetchRequestTopics(name=t, partition_indexes=ps)
                    for t, ps in by_topic(parts).items()])
            for group, parts in wanted.items()])

    reply = yield call.send(node, OFFSET_FETCH, build, (BATCHED_OFFSET_FETCH, OFFSET_FETCH_VERSIONS[1]))
    out: dict[str, Any] = {}
    for g in reply.body.groups:
        out[g.group_id] = (AdminError(g.error_code) if g.error_code
                           else _committed(g.topics))
    return out


def _fetch_one(
    call: Call, node: Node, group: str, parts: PartitionsWanted, require_stable: bool
) -> Step[GroupOffsets]:
    def build(version: int) -> Any:
        return OffsetFetchRequest(group_id=group, require_stable=require_stable,
                                  topics=None if parts is None else [
                                      OffsetFetchRequest.OffsetFetchRequestTopic(
                                          name=t, partition_indexes=ps)
                                      for t, ps in by_topic(parts).items()])

    lowest = ALL_PARTITIONS_VERSION if parts is None else OFFSET_FETCH_VERSIONS[0]
    reply = yield call.send(node, OFFSET_FETCH, build, (lowest, BATCHED_OFFSET_FETCH - 1))
    if reply.body.error_code:
        raise AdminError(reply.body.error_code)
    return _committed(reply.body.topics)


def _committed(topics: Any) -> GroupOffsets:
    """Partitions with a committed offset. A partition still in an open transaction makes the
    whole group retriable (UNSTABLE_OFFSET_COMMIT); other partition errors leave it out."""
    out: GroupOffsets = {}
    for t in topics:
        for p in t.partitions:
            if p.error_code == ErrorCode.UNSTABLE_OFFSET_COMMIT:
                raise AdminError(p.error_code)
            if p.error_code or p.committed_offset == NO_OFFSET:
                continue
            epoch = p.committed_leader_epoch if p.committed_leader_epoch >= 0 else None
            out[TopicPartition(t.name, p.partition_index)] = OffsetAndMetadata(
                p.committed_offset, p.metadata or "", epoch)
    return dict(sorted(out.items()))


STABLE_OFFSET_FETCH = 7  # RequireStable (KIP-447)


def pending_transactional_offsets(
    call: Call, group: str, partitions: Iterable[TopicPartition]
) -> Step[set[TopicPartition]]:
    """The partitions among `partitions` whose group offset is pending in an open
    transaction: what OffsetFetch with RequireStable answers UNSTABLE_OFFSET_COMMIT for."""
    wanted = list(dict.fromkeys(partitions))

    def build(version: int) -> Any:
        return OffsetFetchRequest(group_id=group, require_stable=True, topics=[
            OffsetFetchRequest.OffsetFetchRequestTopic(name=t, partition_indexes=ps)
            for t, ps in by_topic(wanted).items()])

    def attempt(node: Node) -> Step[set[TopicPartition]]:
        reply = yield call.send(node, OFFSET_FETCH, build,
                                (STABLE_OFFSET_FETCH, BATCHED_OFFSET_FETCH - 1))
        if reply.body.error_code:
            raise AdminError(reply.body.error_code)
        return {TopicPartition(t.name, p.partition_index) for t in reply.body.topics
                for p in t.partitions if p.error_code == ErrorCode.UNSTABLE_OFFSET_COMMIT}

    if not wanted:
        return set()
    return (yield from for_one_group(call, group, attempt))


def alter_group_offsets(
    call: Call, group: str, offsets: Mapping[TopicPartition, OffsetAndMetadata]
) -> Step[Outcomes[TopicPartition, None]]:
    """Commit offsets for a group as an admin (no member, generation -1)."""
    offsets = dict(offsets)

    def build(version: int) -> Any:
        by_topic: dict[str, list[Any]] = {}
        for tp, om in offsets.items():
            by_topic.setdefault(tp.topic, []).append(OffsetCommitRequest.OffsetCommitRequestPartition(
                partition_index=tp.partition, committed_offset=om.offset,
                committed_leader_epoch=-1 if om.leader_epoch is None else om.leader_epoch,
                commit_timestamp=-1, committed_metadata=om.metadata))
        return OffsetCommitRequest(
            group_id=group, generation_id_or_member_epoch=-1, member_id="",
            group_instance_id=None, retention_time_ms=-1,
            topics=[OffsetCommitRequest.OffsetCommitRequestTopic(
                name=t, topic_id=NO_TOPIC_ID, partitions=ps) for t, ps in by_topic.items()])

    def attempt(node: Node) -> Step[Outcomes[TopicPartition, None]]:
        reply = yield call.send(node, OFFSET_COMMIT, build, OFFSET_COMMIT_VERSIONS)
        return partition_outcomes(reply.body.topics, offsets, GROUP_LEVEL_COMMIT_ERRORS)

    if not offsets:
        return Outcomes({})
    return (yield from for_one_group(call, group, attempt))


def delete_group_offsets(
    call: Call, group: str, partitions: Iterable[TopicPartition]
) -> Step[Outcomes[TopicPartition, None]]:
    """Remove a group's committed offsets; the group must not be consuming those topics."""
    partitions = list(dict.fromkeys(partitions))

    def build(version: int) -> Any:
        return OffsetDeleteRequest(group_id=group, topics=[
            OffsetDeleteRequest.OffsetDeleteRequestTopic(name=t, partitions=[
                OffsetDeleteRequest.OffsetDeleteRequestPartition(partition_index=p) for p in ps])
            for t, ps in by_topic(partitions).items()])

    def attempt(node: Node) -> Step[Outcomes[TopicPartition, None]]:
        reply = yield call.send(node, OFFSET_DELETE, build, (0, 0))
        if reply.body.error_code:
            raise AdminError(reply.body.error_code)
        return partition_outcomes(reply.body.topics, partitions)

    if not partitions:
        return Outcomes({})
    return (yield from for_one_group(call, group, attempt))
