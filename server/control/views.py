"""What tests see of a group: its state, members and their partitions (a streams group's
members: their tasks), and a share group's partitions with their in-flight records, as
plain data.

Read from the live coordinator on the broker's trio thread, for waits and for
the messages of waits that time out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from kcsim.coordinator.share.persisted import ShareKey
from kcsim.coordinator.share.rules import RecordState
from kcsim.protocol.consumer_protocol import decode_assignment
from kcsim.protocol.primitives import DecodeError

if TYPE_CHECKING:
    from kcsim.coordinator import GroupCoordinator
    from kcsim.coordinator.streams.model import StreamsGroup, StreamsMember

    from ..state.topics import TopicRegistry


class TasksView(msgspec.Struct, kw_only=True):
    """A streams member's tasks, each (subtopology id, partition), sorted."""

    active: list[tuple[str, int]]
    standby: list[tuple[str, int]]
    warmup: list[tuple[str, int]]


class MemberView(msgspec.Struct, kw_only=True, omit_defaults=True):
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    partitions: list[tuple[str, int]]  # assigned, sorted (a streams member's: its active
    # tasks' source topic partitions)
    tasks: TasksView | None = None  # streams groups only


class GroupView(msgspec.Struct, kw_only=True):
    group: str
    type: str  # "classic", "consumer" (KIP-848) or "streams" (KIP-1071)
    state: str  # Kafka's name: Empty, Stable, PreparingRebalance, Reconciling, NotReady, ...
    generation: int  # the classic generation, or the KIP-848 or KIP-1071 group epoch
    protocol: str | None  # the classic group's chosen protocol (assignor)
    members: list[MemberView]


def group_view(groups: GroupCoordinator | None, topic_name: Any, group: str) -> GroupView | None:
    """The group as the coordinator holds it now; None when there is no such group."""
    if groups is None:
        return None
    consumer = groups.consumer_group(group)
    if consumer is not None:
        members = [
            MemberView(member_id=m.member_id, instance_id=m.instance_id, client_id=m.client_id,
                       client_host=m.client_host,
                       partitions=sorted((topic_name(t) or str(t), p)
                                         for t, ps in m.assigned.items() for p in ps))
            for m in consumer.members.values()]
        return GroupView(group=group, type="consumer", state=consumer.state.value,
                         generation=consumer.group_epoch, protocol=None, members=members)
    streams = groups.streams_group(group)
    if streams is not None:
        return _streams_view(streams)
    classic = groups.group(group)
    if classic is None:
        return None
    return GroupView(
        group=group, type="classic", state=classic.state.value, generation=classic.generation,
        protocol=classic.protocol_name,
        members=[MemberView(member_id=m.member_id, instance_id=m.group_instance_id,
                            client_id=m.client_id, client_host=m.client_host,
                            partitions=_classic_partitions(classic.protocol_type, m.assignment))
                 for m in classic.members.values()])


def _streams_view(group: StreamsGroup) -> GroupView:
    sources: dict[str, list[str]] = {}
    for sub in group.topology.subtopologies if group.topology is not None else ():
        sources[sub.subtopology_id] = list(sub.source_topics)

    def member(m: StreamsMember) -> MemberView:
        active, standby, warmup = (sorted((s, p) for s, ps in tasks.items() for p in ps)
                                   for tasks in m.assigned)
        partitions = sorted({(t, p) for s, p in active for t in sources.get(s, ())})
        return MemberView(member_id=m.member_id, instance_id=m.instance_id,
                          client_id=m.client_id, client_host=m.client_host,
                          partitions=partitions,
                          tasks=TasksView(active=active, standby=standby, warmup=warmup))

    return GroupView(group=group.group_id, type="streams", state=group.state.value,
                     generation=group.group_epoch, protocol=None,
                     members=[member(m) for m in group.members.values()])


def _classic_partitions(protocol_type: str | None, assignment: bytes) -> list[tuple[str, int]]:
    if protocol_type != "consumer" or not assignment:
        return []
    try:
        decoded = decode_assignment(assignment)
    except DecodeError:
        return []
    return sorted((tp.topic, p) for tp in decoded.assigned_partitions for p in tp.partitions)


def committed_view(groups: GroupCoordinator | None, group: str) -> dict[tuple[str, int], int]:
    """The group's committed offsets by (topic, partition)."""
    if groups is None:
        return {}
    return {tp: value.offset for tp, value in groups.committed_offsets(group).items()}


def paused_view(groups: GroupCoordinator | None, group: str) -> dict[str, list[int]]:
    """The group's paused partitions (KIP-1249) by topic name, each list sorted."""
    if groups is None:
        return {}
    return {topic: sorted(ps) for topic, ps in sorted(groups.paused_partitions(group).items())}


class LagView(msgspec.Struct, kw_only=True):
    """How far a group's committed offset is behind the log end of one partition."""

    topic: str
    partition: int
    committed: int
    log_end: int | None  # None: the topic or partition is gone
    lag: int | None  # log_end - committed, never below 0; None with log_end


def lag_view(groups: GroupCoordinator | None, topics: TopicRegistry,
             group: str) -> list[LagView]:
    """The group's lag per committed (topic, partition), sorted, computed now (as lag
    exporters do: the log end offset minus the committed offset)."""
    found = []
    for (topic, partition), committed in sorted(committed_view(groups, group).items()):
        known = topics.get(topic)
        log_end = (known.partitions[partition].log_end_offset
                   if known is not None and 0 <= partition < len(known.partitions) else None)
        found.append(LagView(topic=topic, partition=partition, committed=committed,
                             log_end=log_end,
                             lag=None if log_end is None else max(0, log_end - committed)))
    return found


class InFlightRecord(msgspec.Struct, kw_only=True):
    """One record of a share partition's in-flight window."""

    offset: int
    state: str  # Available, Acquired, Acknowledged or Archived
    delivery_count: int
    member: str | None  # who holds it while Acquired
    lock_deadline_ms: int | None  # when its lock runs out on the broker's clock, while Acquired


class SharePartitionView(msgspec.Struct, kw_only=True):
    """A share group's partition (KIP-932): its start and end offsets and the records
    between them; what a record's state counts are is in `counts`."""

    group: str
    topic: str
    partition: int
    start_offset: int
    end_offset: int  # the first offset never fetched
    records: list[InFlightRecord]

    def counts(self) -> dict[str, int]:
        """How many in-flight records are in each state (states with none left out)."""
        found: dict[str, int] = {}
        for r in self.records:
            found[r.state] = found.get(r.state, 0) + 1
        return found


def share_partition_view(groups: GroupCoordinator | None, topics: TopicRegistry, group: str,
                         topic: str, partition: int) -> SharePartitionView | None:
    """The share partition as the coordinator holds it now; None while no member of the
    group has fetched it (or the topic is gone)."""
    known = topics.get(topic)
    if groups is None or known is None:
        return None
    live = groups.shares.live.get(ShareKey(group, known.topic_id.bytes, partition))
    if live is None:
        return None
    records = [
        InFlightRecord(offset=offset, state=r.state.name.capitalize(),
                       delivery_count=r.delivery_count,
                       member=r.member if r.state is RecordState.ACQUIRED else None,
                       lock_deadline_ms=r.deadline if r.state is RecordState.ACQUIRED else None)
        for offset, r in live.in_flight()]
    return SharePartitionView(group=group, topic=topic, partition=partition,
                              start_offset=live.start_offset, end_offset=live.end_offset,
                              records=records)
