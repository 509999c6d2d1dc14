"""Computing a group's target assignment for a new group epoch (Kafka's TargetAssignmentBuilder).

The preferred server assignor runs over every member with the partitions of
the subscribed topics, minus the partitions the group has paused (KIP-1249).
Only members whose target changed get a record, then the target epoch moves
to the group epoch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .assignors import ASSIGNORS, MemberSpec
from .model import EMPTY, ConsumerGroup
from .records import target_epoch_record, target_record

if TYPE_CHECKING:
    import uuid

    from ..shared.runtime import GroupRuntime
    from .subscriptions import Metadata


def assignable_partitions(
    rt: GroupRuntime, group: ConsumerGroup, meta: Metadata
) -> dict[uuid.UUID, list[int]]:
    available = {}
    for topic_id, count in meta.values():
        paused = rt.paused.partitions(group.group_id, topic_id)
        available[topic_id] = [p for p in range(count) if p not in paused]
    return available


def assignor_name(rt: GroupRuntime, group: ConsumerGroup) -> str:
    enabled = tuple(rt.config.consumer_group_assignors)
    return group.preferred_assignor(enabled) or enabled[0]


def compute_target(rt: GroupRuntime, group: ConsumerGroup, epoch: int, meta: Metadata) -> None:
    specs = []
    for member_id, member in group.members.items():
        topics = frozenset(meta[name][0] for name in group.member_topics(member) if name in meta)
        specs.append(MemberSpec(member_id, member.instance_id, topics,
                                group.target.get(member_id, EMPTY)))
    new = ASSIGNORS[assignor_name(rt, group)](specs, assignable_partitions(rt, group, meta))
    gid = group.group_id
    for member_id in list(group.members):
        assignment = new.get(member_id, EMPTY)
        old = group.target.get(member_id)
        if old is None or old != assignment:
            rt.write(target_record(gid, member_id, assignment))
    rt.write(target_epoch_record(gid, epoch))
