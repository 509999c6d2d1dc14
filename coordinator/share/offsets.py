"""DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets: a share
group's start offsets as an administrator sees and moves them.

What is described is the written state (:class:`~.persisted.ShareStateFold`), as Kafka's
group coordinator reads it from the share coordinator: each partition's start offset, and
in v1 its lag (KIP-1226: the records from the start offset to the end of the log whose
delivery is not complete). A partition no member has fetched yet has no state: start
offset -1. Altering and deleting need an empty group (a member could hold records):
altering writes a fresh snapshot at the new start offset with the state epoch one up
(Kafka's InitializeShareGroupState), so every record from there on is AVAILABLE again
with a delivery count of 0 and the in-flight window starts afresh; deleting writes the
tombstones of a topic's share state, so the next fetch starts it at
share.auto.offset.reset. Both drop the live partition, which the next fetch rebuilds
from what was written.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.share_group_offsets import (
    AlterShareGroupOffsetsResponse,
    DeleteShareGroupOffsetsResponse,
    DescribeShareGroupOffsetsResponse,
)

from .membership import not_share_message
from .persisted import ShareKey

if TYPE_CHECKING:
    from kcsim.protocol.messages.share_group_offsets import (
        AlterShareGroupOffsetsRequest,
        DeleteShareGroupOffsetsRequest,
        DescribeShareGroupOffsetsRequest,
    )

    from ..shared.interface import RequestContext
    from ..shared.runtime import GroupRuntime
    from .partitions import SharePartitions

__all__ = ["ShareOffsetHandlers"]

E = ErrorCode
_D = DescribeShareGroupOffsetsResponse
_A = AlterShareGroupOffsetsResponse
_X = DeleteShareGroupOffsetsResponse
NO_TOPIC_ID = uuid.UUID(int=0)
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."
UNINITIALIZED = -1  # the start offset of a partition that has no share state yet


class ShareOffsetHandlers:
    def __init__(self, runtime: GroupRuntime, partitions: SharePartitions) -> None:
        self.rt = runtime
        self.partitions = partitions

    # -- DescribeShareGroupOffsets -----------------------------------------------------

    def describe(self, version: int, request: DescribeShareGroupOffsetsRequest,
                 ctx: RequestContext) -> DescribeShareGroupOffsetsResponse:
        return _D(groups=[self._describe_group(g) for g in request.groups])

    def _describe_group(self, wanted: DescribeShareGroupOffsetsRequest.
                        DescribeShareGroupOffsetsRequestGroup
                        ) -> _D.DescribeShareGroupOffsetsResponseGroup:
        group_id = wanted.group_id
        if group_id not in self.rt.share_groups:
            return _D.DescribeShareGroupOffsetsResponseGroup(
                group_id=group_id, topics=[], error_code=E.GROUP_ID_NOT_FOUND,
                error_message=not_share_message(self.rt, group_id))
        if wanted.topics is None:
            asked = self._written_topics(group_id)
        else:
            asked = [(t.topic_name, list(t.partitions)) for t in wanted.topics]
        return _D.DescribeShareGroupOffsetsResponseGroup(
            group_id=group_id, error_code=E.NONE,
            topics=[self._describe_topic(group_id, name, parts) for name, parts in asked])

    def _written_topics(self, group_id: str) -> list[tuple[str, list[int]]]:
        """Every topic of the group that has share state, with its partitions, by name."""
        by_topic: dict[str, list[int]] = defaultdict(list)
        for key in self.partitions.fold.partitions:
            if key.group == group_id:
                name = self.rt.topics.topic_name(uuid.UUID(bytes=key.topic_id))
                if name is not None:
                    by_topic[name].append(key.partition)
        return [(name, sorted(parts)) for name, parts in sorted(by_topic.items())]

    def _describe_topic(self, group_id: str, name: str, partitions: list[int]
                        ) -> _D.DescribeShareGroupOffsetsResponseTopic:
        topics = self.rt.topics
        topic_id, count = topics.topic_id(name), topics.partition_count(name)
        described = []
        for p in partitions:
            if topic_id is None or count is None or not 0 <= p < count:
                described.append(_D.DescribeShareGroupOffsetsResponsePartition(
                    partition_index=p, start_offset=UNINITIALIZED, leader_epoch=-1,
                    error_code=E.UNKNOWN_TOPIC_OR_PARTITION,
                    error_message=UNKNOWN_TOPIC_MESSAGE))
                continue
            persisted = self.partitions.fold.get(ShareKey(group_id, topic_id.bytes, p))
            if persisted is None:
                described.append(_D.DescribeShareGroupOffsetsResponsePartition(
                    partition_index=p, start_offset=UNINITIALIZED, leader_epoch=-1,
                    lag=-1, error_code=E.NONE))
                continue
            end = topics.end_offset(name, p)
            lag = -1 if end is None else max(
                0, end - persisted.start_offset - persisted.delivery_complete_count())
            described.append(_D.DescribeShareGroupOffsetsResponsePartition(
                partition_index=p, start_offset=persisted.start_offset,
                leader_epoch=max(persisted.leader_epoch, 0), lag=lag, error_code=E.NONE))
        return _D.DescribeShareGroupOffsetsResponseTopic(
            topic_name=name, topic_id=topic_id or NO_TOPIC_ID, partitions=described)

    # -- AlterShareGroupOffsets ----------------------------------------------------------

    def alter(self, version: int, request: AlterShareGroupOffsetsRequest,
              ctx: RequestContext) -> AlterShareGroupOffsetsResponse:
        error = self._not_alterable(request.group_id)
        if error is not None:
            return _A(error_code=error[0], error_message=error[1], responses=[])
        topics, rt = self.rt.topics, self.rt
        answered = []
        for topic in request.topics:
            topic_id, count = topics.topic_id(topic.topic_name), topics.partition_count(
                topic.topic_name)
            results = []
            for p in topic.partitions:
                if topic_id is None or count is None or not 0 <= p.partition_index < count:
                    results.append(_A.AlterShareGroupOffsetsResponsePartition(
                        partition_index=p.partition_index,
                        error_code=E.UNKNOWN_TOPIC_OR_PARTITION,
                        error_message=UNKNOWN_TOPIC_MESSAGE))
                    continue
                if p.start_offset < 0:
                    results.append(_A.AlterShareGroupOffsetsResponsePartition(
                        partition_index=p.partition_index, error_code=E.INVALID_REQUEST,
                        error_message="The start offset must not be negative."))
                    continue
                key = ShareKey(request.group_id, topic_id.bytes, p.partition_index)
                rt.write(self.partitions.reset(key, p.start_offset, rt.now))
                results.append(_A.AlterShareGroupOffsetsResponsePartition(
                    partition_index=p.partition_index, error_code=E.NONE))
            answered.append(_A.AlterShareGroupOffsetsResponseTopic(
                topic_name=topic.topic_name, topic_id=topic_id or NO_TOPIC_ID,
                partitions=results))
        return _A(error_code=E.NONE, responses=answered)

    # -- DeleteShareGroupOffsets ---------------------------------------------------------

    def delete(self, version: int, request: DeleteShareGroupOffsetsRequest,
               ctx: RequestContext) -> DeleteShareGroupOffsetsResponse:
        error = self._not_alterable(request.group_id)
        if error is not None:
            return _X(error_code=error[0], error_message=error[1], responses=[])
        answered = []
        for topic in request.topics:
            topic_id = self.rt.topics.topic_id(topic.topic_name)
            if topic_id is None:
                answered.append(_X.DeleteShareGroupOffsetsResponseTopic(
                    topic_name=topic.topic_name, topic_id=NO_TOPIC_ID,
                    error_code=E.UNKNOWN_TOPIC_OR_PARTITION,
                    error_message=UNKNOWN_TOPIC_MESSAGE))
                continue
            for record in self.partitions.delete_topic(request.group_id, topic_id.bytes):
                self.rt.write(record)
            answered.append(_X.DeleteShareGroupOffsetsResponseTopic(
                topic_name=topic.topic_name, topic_id=topic_id, error_code=E.NONE))
        return _X(error_code=E.NONE, responses=answered)

    def _not_alterable(self, group_id: str) -> tuple[int, str] | None:
        group = self.rt.share_groups.get(group_id)
        if group is None:
            return E.GROUP_ID_NOT_FOUND, not_share_message(self.rt, group_id)
        if group.members:
            return E.NON_EMPTY_GROUP, "The group is not empty."
        return None
