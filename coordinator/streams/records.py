"""The records a streams group is persisted as, built in one place (Kafka's
StreamsCoordinatorRecordHelpers): the group epoch, the topology, each member's metadata,
target and current assignment, and the target epoch. Tombstones go in Kafka's order, so
replay never sees a member without its metadata record behind it.
"""

from __future__ import annotations

__all__ = ["current_record", "epoch_record", "from_task_ids", "group_tombstones",
           "member_record", "member_tombstones", "target_epoch_record", "target_record",
           "to_task_ids", "topology_record"]

from typing import TYPE_CHECKING

from kcsim.coordinator.records import (
    StreamsGroupCurrentMemberAssignmentKey,
    StreamsGroupCurrentMemberAssignmentValue,
    StreamsGroupMemberKey,
    StreamsGroupMemberValue,
    StreamsGroupMetadataKey,
    StreamsGroupMetadataValue,
    StreamsGroupTargetAssignmentMemberKey,
    StreamsGroupTargetAssignmentMemberValue,
    StreamsGroupTargetAssignmentMetadataKey,
    StreamsGroupTargetAssignmentMetadataValue,
    StreamsGroupTopologyKey,
    StreamsTaskIds,
)
from kcsim.storage.records import Record

from ..shared.record_helpers import streams_group_tombstones as group_tombstones
from ..shared.record_helpers import streams_member_tombstones as member_tombstones
from .model import Tasks, TaskTuple, in_task_order

if TYPE_CHECKING:
    from kcsim.coordinator.records import StreamsGroupTopologyValue

    from .model import StreamsMember


def to_task_ids(tasks: Tasks) -> list[StreamsTaskIds]:
    return [StreamsTaskIds(sub, partitions) for sub, partitions in in_task_order(tasks)]


def from_task_ids(stored: list[StreamsTaskIds]) -> Tasks:
    out: dict[str, frozenset[int]] = {}
    for t in stored:
        if t.partitions:
            out[t.subtopology_id] = out.get(t.subtopology_id, frozenset()) | frozenset(t.partitions)
    return out


def epoch_record(group_id: str, epoch: int, metadata_hash: int, validated: int,
                 configs: tuple[tuple[str, str], ...] | None) -> Record:
    return Record(StreamsGroupMetadataKey(group_id),
                  StreamsGroupMetadataValue(epoch, metadata_hash, validated, configs))


def topology_record(group_id: str, topology: StreamsGroupTopologyValue) -> Record:
    return Record(StreamsGroupTopologyKey(group_id), topology)


def member_record(group_id: str, m: StreamsMember) -> Record:
    return Record(StreamsGroupMemberKey(group_id, m.member_id), StreamsGroupMemberValue(
        instance_id=m.instance_id, rack_id=m.rack_id, client_id=m.client_id,
        client_host=m.client_host, rebalance_timeout_ms=m.rebalance_timeout_ms,
        topology_epoch=m.topology_epoch, process_id=m.process_id,
        user_endpoint=m.user_endpoint, client_tags=list(m.client_tags)))


def target_record(group_id: str, member_id: str, target: TaskTuple) -> Record:
    return Record(StreamsGroupTargetAssignmentMemberKey(group_id, member_id),
                  StreamsGroupTargetAssignmentMemberValue(
                      to_task_ids(target.active), to_task_ids(target.standby),
                      to_task_ids(target.warmup)))


def target_epoch_record(group_id: str, epoch: int, timestamp: int = 0) -> Record:
    return Record(StreamsGroupTargetAssignmentMetadataKey(group_id),
                  StreamsGroupTargetAssignmentMetadataValue(epoch, timestamp))


def current_record(group_id: str, m: StreamsMember) -> Record:
    a, r = m.assigned, m.pending_revocation
    return Record(StreamsGroupCurrentMemberAssignmentKey(group_id, m.member_id),
                  StreamsGroupCurrentMemberAssignmentValue(
                      m.member_epoch, m.previous_member_epoch, int(m.state),
                      to_task_ids(a.active), to_task_ids(a.standby), to_task_ids(a.warmup),
                      to_task_ids(r.active), to_task_ids(r.standby), to_task_ids(r.warmup)))
