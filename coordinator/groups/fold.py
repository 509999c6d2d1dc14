"""The fold of classic group metadata and committed offsets, at replay and live alike.

A group metadata record holds the group's whole durable view (Kafka's
GroupMetadataValue); a tombstone removes the group. A group the fold itself
built (read back from the log, or a simple group) is rebuilt from each record
for it; a group a request has changed since is what wrote the record, and the
record moves only its durable view (`persisted`): its members parked in a
rebalance stay. Offsets committed under an id no group holds make Kafka's
"simple" group: Empty, with no protocol type.
"""

from __future__ import annotations

from sys import intern
from typing import TYPE_CHECKING

from kcsim.coordinator.records import GroupMetadataKey, GroupMetadataValue, OffsetCommitKey

from ..shared.record_helpers import group_record
from .classic import ClassicGroup, Member
from .state import DEAD, EMPTY, STABLE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kcsim.storage.records import Record

    from ..shared.runtime import GroupRuntime


class ClassicFold:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.rt = runtime

    def register(self) -> None:
        self.rt.folds[OffsetCommitKey] = self.offset
        self.rt.folds[GroupMetadataKey] = self.group
        self.rt.fold_commits = self.commits

    def offset(self, record: Record) -> None:
        key: OffsetCommitKey = record.key
        if record.value is None:
            self.rt.offsets.remove(key.group, key.topic, key.partition)
        else:
            self.commits([record], 0, 1)

    def commits(self, records: Sequence[Record], start: int, end: int) -> int:
        """Fold offsets committed to one topic of one group, from records[start] for as long
        as the records are such commits; return the index of the first one not folded.

        The one fold of committed offsets: a whole topic of an OffsetCommit folds in one
        call (the hot path), a record read back at replay through `offset`."""
        rt = self.rt
        first: OffsetCommitKey = records[start].key
        group_id, topic = first.group, first.topic
        if (group_id not in rt.groups and group_id not in rt.consumer_groups
                and group_id not in rt.streams_groups):
            # Offsets without a group: Kafka's "simple" group, Empty with no protocol type.
            rt.groups[group_id] = ClassicGroup(group_id, rt.now, journal=rt.journal, from_log=True)
        partitions = rt.offsets.partitions_of(group_id, topic)
        run = rt.commit_runs.get(start)
        if run is not None and run[0] is records[start] and run[1] <= end:
            # The run as `write_commits` queued it: one group and topic, every value set.
            end = run[1]
            for record in records[start:end]:
                partitions[record.key.partition] = record.value  # type: ignore[assignment]  # set, as above
            return end
        for i in range(start, end):
            record = records[i]
            key = record.key
            value = record.value
            if (value is None or type(key) is not OffsetCommitKey
                    or key.topic != topic or key.group != group_id):
                return i
            partitions[key.partition] = value
        return end

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
        if existing is not None and not existing.from_log:
            existing.persisted = value
            return
        if existing is not None:
            rt.forget_group(existing)
        group = group_from_metadata(group_id, value, rt)
        rt.groups[group_id] = group
        if group.members:
            rt.mark_loaded(group_id)


def persist_group(rt: GroupRuntime, group: ClassicGroup, value: GroupMetadataValue) -> None:
    """Write the group's durable view; the fold makes it `persisted` once the call returns."""
    rt.write(group_record(group.group_id, value))


def group_from_metadata(group_id: str, value: GroupMetadataValue, rt: GroupRuntime) -> ClassicGroup:
    """A group as Kafka loads it: Empty without members, else Stable with the stored assignment."""
    group = ClassicGroup(
        group_id,
        rt.now,
        state=STABLE if value.members else EMPTY,
        generation=value.generation,
        protocol_type=value.protocol_type or None,
        protocol_name=value.protocol,
        leader_id=value.leader,
        state_timestamp=None if value.state_timestamp == -1 else value.state_timestamp,
        journal=rt.journal,
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
    group.from_log = True
    return group
