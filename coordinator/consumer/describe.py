"""ConsumerGroupDescribe: a consumer group's epochs, members, assignments and targets.

Every other kind of group answers GROUP_ID_NOT_FOUND with Kafka 4.x's message
"Group X is not a consumer group.", which is what makes Java's and librdkafka's
admins fall back to DescribeGroups for classic groups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.consumer_group import ConsumerGroupDescribeResponse

from ..shared.describing import describe_each
from .heartbeat import not_consumer_message
from .model import EMPTY, Assignment, ConsumerGroup, in_topic_order
from .target import assignor_name

if TYPE_CHECKING:
    from kcsim.protocol.messages.consumer_group import ConsumerGroupDescribeRequest

    from ..shared.interface import RequestContext
    from ..shared.runtime import GroupRuntime

DescribeResponse = ConsumerGroupDescribeResponse
DescribedGroup = DescribeResponse.DescribedGroup
Member = DescribeResponse.Member
DescribeAssignment = DescribeResponse.Assignment
DescribeTopicPartitions = DescribeResponse.TopicPartitions

CONSUMER_MEMBER_TYPE = 1  # KIP-1099: the member speaks the consumer protocol


class DescribeHandler:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.rt = runtime

    def describe(
        self, version: int, request: ConsumerGroupDescribeRequest, ctx: RequestContext
    ) -> ConsumerGroupDescribeResponse:
        return DescribeResponse(groups=describe_each(
            request.group_ids, self.rt.consumer_groups, self._describe,
            request.include_authorized_operations))

    def _describe(self, group_id: str, group: ConsumerGroup | None) -> DescribedGroup:
        if group is None:
            return DescribedGroup(
                group_id=group_id,
                error_code=ErrorCode.GROUP_ID_NOT_FOUND,
                error_message=not_consumer_message(self.rt, group_id),
                group_state="", assignor_name="",
            )
        return DescribedGroup(
            error_code=ErrorCode.NONE,
            group_id=group.group_id,
            group_state=group.state.value,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=assignor_name(self.rt.config, group),
            members=[
                Member(
                    member_id=m.member_id,
                    instance_id=m.instance_id,
                    rack_id=m.rack_id,
                    member_epoch=m.member_epoch,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    subscribed_topic_names=sorted(m.subscribed_topic_names),
                    # Kafka describes a member without a regex with an empty one.
                    subscribed_topic_regex=m.subscribed_topic_regex or "",
                    assignment=self._assignment(m.assigned),
                    target_assignment=self._assignment(group.target.get(m.member_id, EMPTY)),
                    member_type=CONSUMER_MEMBER_TYPE,
                )
                for m in group.members.values()
            ],
        )

    def _assignment(self, assignment: Assignment) -> DescribeAssignment:
        topics = self.rt.topics
        out = []
        for topic_id, partitions in in_topic_order(assignment):
            name = topics.topic_name(topic_id)
            if name is not None:
                out.append(DescribeTopicPartitions(topic_id=topic_id, topic_name=name,
                                                   partitions=partitions))
        return DescribeAssignment(topic_partitions=out)
