"""Computing a group's target assignment for a new group epoch (Kafka's TargetAssignmentBuilder).

The preferred server assignor runs over every member with the partitions of
the subscribed topics, minus the partitions the group has paused (KIP-1249).
Only members whose target changed get a record, then the target epoch moves
to the group epoch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .assignors import ASSIGNORS, MemberSpec
from .model import EMPTY, Assignment, ConsumerGroup
from .records import target_epoch_record, target_record

if TYPE_CHECKING:
    import uuid

    from ..shared.interface import GroupConfig
    from ..shared.paused import PausedSet
    from ..shared.runtime import GroupRuntime
    from .subscriptions import Metadata


def assignable_partitions(meta: Metadata, paused: PausedSet) -> dict[uuid.UUID, list[int]]:
    available = {}
    for topic_id, count in meta.values():
        entry = paused.get(topic_id)
        stopped = entry[1] if entry is not None else frozenset()
        available[topic_id] = [p for p in range(count) if p not in stopped]
    return available


def assignor_name(config: GroupConfig, group: ConsumerGroup) -> str:
    enabled = tuple(config.consumer_group_assignors)
    return group.preferred_assignor(enabled) or enabled[0]


def compute_target(
    rt: GroupRuntime, group: ConsumerGroup, epoch: int, meta: Metadata, paused: PausedSet
) -> dict[str, Assignment]:
    """Write the targets that change and the new target epoch; return every member's target.

    `group` is the group as the records written so far in this call will make it."""
    specs = []
    for member_id, member in group.members.items():
        topics = frozenset(meta[name][0] for name in group.member_topics(member) if name in meta)
        specs.append(MemberSpec(member_id, member.instance_id, topics,
                                group.target.get(member_id, EMPTY)))
    new = ASSIGNORS[assignor_name(rt.config, group)](specs, assignable_partitions(meta, paused))
    gid = group.group_id
    targets = dict(group.target)
    for member_id in group.members:
        assignment = new.get(member_id, EMPTY)
        old = group.target.get(member_id)
        if old is None or old != assignment:
            rt.write(target_record(gid, member_id, assignment))
            targets[member_id] = assignment
    rt.write(target_epoch_record(gid, epoch, rt.now))
    return targets
