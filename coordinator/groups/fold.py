"""The fold of classic group metadata and committed offsets, at replay and live alike.

A group metadata record holds the group's whole durable view (Kafka's
GroupMetadataValue); a tombstone removes the group. Offsets committed under an
id no group holds make Kafka's "simple" group: Empty, with no protocol type.
"""

from __future__ import annotations

from sys import intern
from typing import TYPE_CHECKING

from kcsim.storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
)

from ..shared.record_helpers import group_record
from .classic import ClassicGroup, Member
from .state import DEAD, EMPTY, STABLE

if TYPE_CHECKING:
    from ..shared.runtime import GroupRuntime


class ClassicFold:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.rt = runtime

    def register(self) -> None:
        self.rt.folds[OffsetCommitKey] = self.offset
        self.rt.folds[GroupMetadataKey] = self.group

    def offset(self, record: Record) -> None:
        key: OffsetCommitKey = record.key
        value: OffsetCommitValue | None = record.value
        rt = self.rt
        if value is None:
            rt.offsets.remove(key.group, key.topic, key.partition)
            return
        if key.group not in rt.groups and key.group not in rt.consumer_groups:
            # Offsets without a group: Kafka's "simple" group, Empty with no protocol type.
            rt.groups[key.group] = ClassicGroup(key.group, rt.now)
        rt.offsets.put(key.group, key.topic, key.partition, value)

    def group(self, record: Record) -> None:
        group_id: str = record.key.group
        value: GroupMetadataValue | None = record.value
        rt = self.rt
        existing = rt.groups.get(group_id)
        if value is None:
            if existing is not None:
                existing.transition_to(DEAD, rt.now)
                rt.forget_group(existing)
            return
        if existing is not None and (existing.persisted is value or existing.persisted == value):
            existing.persisted = value
            return
        if existing is not None:
            rt.forget_group(existing)
        group = group_from_metadata(group_id, value, rt.now)
        rt.groups[group_id] = group
        if group.members:
            rt.mark_loaded(group_id)


def stored_offsets(rt: GroupRuntime, group_id: str, topic: str) -> dict[int, OffsetCommitValue]:
    """The partition -> offset map a commit writes into; the group exists once it has one."""
    if group_id not in rt.groups and group_id not in rt.consumer_groups:
        rt.groups[group_id] = ClassicGroup(group_id, rt.now)
    return rt.offsets.partitions_of(group_id, topic)


def persist_group(rt: GroupRuntime, group: ClassicGroup, value: GroupMetadataValue) -> None:
    group.persisted = value
    rt.write(group_record(group.group_id, value))


def group_from_metadata(group_id: str, value: GroupMetadataValue, now_ms: int) -> ClassicGroup:
    """A group as Kafka loads it: Empty without members, else Stable with the stored assignment."""
    group = ClassicGroup(
        group_id,
        now_ms,
        state=STABLE if value.members else EMPTY,
        generation=value.generation,
        protocol_type=value.protocol_type or None,
        protocol_name=value.protocol,
        leader_id=value.leader,
        state_timestamp=None if value.state_timestamp == -1 else value.state_timestamp,
    )
    for stored in value.members:
        rebalance_timeout = stored.rebalance_timeout_ms
        if rebalance_timeout == -1:
            rebalance_timeout = stored.session_timeout_ms
        group.add(
            Member(
                stored.member_id,
                stored.group_instance_id,
                stored.client_id,
                stored.client_host,
                rebalance_timeout,
                stored.session_timeout_ms,
                value.protocol_type,
                [(intern(name), bytes(metadata)) for name, metadata in stored.protocols],
                bytes(stored.assignment),
            )
        )
    group.subscribed_topics = group.compute_subscribed_topics()
    group.persisted = value
    return group
