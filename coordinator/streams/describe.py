"""StreamsGroupDescribe: a streams group's epochs, topology, members and their tasks.

Every other kind of group answers GROUP_ID_NOT_FOUND with Kafka's message "Group X is
not a streams group." The topology is described as stored; members are described with
their current and target tasks and the task offsets they last reported. kcsim keeps no
topology description (KIP-1331), as Kafka without its plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.streams_group import StreamsGroupDescribeResponse

from ..shared.describing import describe_each
from .heartbeat import not_streams_message
from .internal_topics import configure
from .model import EMPTY_TASKS, StreamsGroup, StreamsMember, TaskTuple, in_task_order
from .topology import InvalidTopology

if TYPE_CHECKING:
    from kcsim.coordinator.records import StreamsGroupTopologyValue, StreamsTopicInfo
    from kcsim.protocol.messages.streams_group import StreamsGroupDescribeRequest

    from ..shared.interface import RequestContext, TopicLookup
    from ..shared.runtime import GroupRuntime
    from .groups import StreamsGroups

R = StreamsGroupDescribeResponse
DescribedGroup = R.DescribedGroup

STICKY_ASSIGNOR = "sticky"  # Kafka's name of its one streams assignor


def _topic_infos(infos: list[StreamsTopicInfo], counts: dict[str, int]) -> list[R.TopicInfo]:
    return [R.TopicInfo(name=t.name, partitions=counts.get(t.name, t.partitions),
                        replication_factor=t.replication_factor,
                        topic_configs=[R.KeyValue(key=k, value=v) for k, v in t.topic_configs])
            for t in infos]


def describe_topology(topology: StreamsGroupTopologyValue | None,
                      topics: TopicLookup) -> R.Topology | None:
    """The topology as stored; once its topics are all there (Kafka describes the configured
    topology then), with the partition count of each internal topic."""
    if topology is None:
        return None
    try:
        counts = configure(topology, topics).internal_counts or {}
    except InvalidTopology:
        counts = {}
    return R.Topology(epoch=topology.epoch, subtopologies=[
        R.Subtopology(subtopology_id=s.subtopology_id, source_topics=list(s.source_topics),
                      repartition_sink_topics=list(s.repartition_sink_topics),
                      state_changelog_topics=_topic_infos(s.state_changelog_topics, counts),
                      repartition_source_topics=_topic_infos(s.repartition_source_topics,
                                                             counts))
        for s in topology.subtopologies])


def _offsets(by_task: dict[tuple[str, int], int]) -> list[R.TaskOffset]:
    return [R.TaskOffset(subtopology_id=s, partition=p, offset=o)
            for (s, p), o in sorted(by_task.items())]


def describe_tasks(tasks: TaskTuple) -> R.Assignment:
    def ids(t: dict[str, frozenset[int]]) -> list[R.TaskIds]:
        return [R.TaskIds(subtopology_id=s, partitions=ps) for s, ps in in_task_order(t)]

    return R.Assignment(active_tasks=ids(tasks.active), standby_tasks=ids(tasks.standby),
                        warmup_tasks=ids(tasks.warmup))


class DescribeHandler:
    def __init__(self, runtime: GroupRuntime, groups: StreamsGroups) -> None:
        self.rt = runtime
        self.task_offsets = groups.task_offsets

    def describe(self, version: int, request: StreamsGroupDescribeRequest,
                 ctx: RequestContext) -> StreamsGroupDescribeResponse:
        return R(groups=describe_each(request.group_ids, self.rt.streams_groups,
                                      lambda gid, g: self._describe(version, gid, g),
                                      request.include_authorized_operations))

    def _describe(self, version: int, group_id: str, group: StreamsGroup | None
                  ) -> DescribedGroup:
        if group is None:
            return DescribedGroup(group_id=group_id, error_code=ErrorCode.GROUP_ID_NOT_FOUND,
                                  error_message=not_streams_message(self.rt, group_id),
                                  group_state="")
        return DescribedGroup(
            error_code=ErrorCode.NONE,
            group_id=group.group_id,
            group_state=group.state.value,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            topology=describe_topology(group.topology, self.rt.topics),
            members=[self._member(group, m) for m in group.members.values()],
            assignor_name=STICKY_ASSIGNOR if version >= 1 else None,
        )

    def _member(self, group: StreamsGroup, m: StreamsMember) -> R.Member:
        offsets, end_offsets = self.task_offsets.of(group.group_id, m.member_id)
        return R.Member(
            member_id=m.member_id, member_epoch=m.member_epoch,
            instance_id=m.instance_id, rack_id=m.rack_id, client_id=m.client_id,
            client_host=m.client_host, topology_epoch=m.topology_epoch,
            process_id=m.process_id,
            user_endpoint=None if m.user_endpoint is None else R.Endpoint(
                host=m.user_endpoint[0], port=m.user_endpoint[1]),
            client_tags=[R.KeyValue(key=k, value=v) for k, v in m.client_tags],
            task_offsets=_offsets(offsets), task_end_offsets=_offsets(end_offsets),
            assignment=describe_tasks(m.assigned),
            target_assignment=describe_tasks(group.target.get(m.member_id, EMPTY_TASKS)),
            is_classic=False,
        )
