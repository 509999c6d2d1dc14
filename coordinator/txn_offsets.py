"""TxnOffsetCommit, all its rules, and the end of a transaction on the group side
(KIP-98, KIP-447).

A TxnOffsetCommit is first checked against the producer's transaction
(`producer_error`: the current producer, a group added to its open transaction),
then against the group; the shell refuses it as a whole (`protocol/error_answers.py`)
when the first check fails.

Offsets a transactional producer commits are pending, per (group, producer), until
its transaction ends: the commit marker makes them the group's committed offsets,
the abort marker drops them (Kafka's OffsetMetadataManager). The group checks follow
Kafka's validateOffsetCommit for transactional commits: a producer without group
membership (generation -1, no member id) is accepted, a member must be one of the
current generation (KIP-447; a KIP-848 member of its current epoch), and a rebalance in
progress does not refuse it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.coordinator.records import OffsetCommitValue, PendingTxnOffsetKey
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.transactions import TxnOffsetCommitResponse
from kcsim.storage.records import Record

from .groups.classic import ClassicGroup
from .groups.membership import validate_member
from .groups.state import Request, Rule, rule
from .shared.record_helpers import offset_record
from .shared.states import DEAD, EMPTY
from .streams.commits import commit_error
from .transactions.coordinator import fenced
from .transactions.state import TxnState

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kcsim.protocol.messages.transactions import TxnOffsetCommitRequest

    from .shared.interface import RequestContext
    from .shared.runtime import GroupRuntime
    from .transactions.metadata import TxnMetadata

E = ErrorCode
_Topic = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic
_Partition = TxnOffsetCommitResponse.TxnOffsetCommitResponsePartition


def producer_error(txns: Mapping[str, TxnMetadata], version: int,
                   request: TxnOffsetCommitRequest) -> int:
    """Accepted only from the current producer of `txns` (the transaction coordinator's,
    by transactional id) for a group added to its open transaction."""
    meta = txns.get(request.transactional_id)
    if meta is None or meta.producer_id != request.producer_id:
        return E.INVALID_PRODUCER_ID_MAPPING
    if request.producer_epoch != meta.producer_epoch:
        return fenced(28, version)
    if meta.state is not TxnState.ONGOING or request.group_id not in meta.groups:
        return E.INVALID_TXN_STATE
    return E.NONE


class TxnOffsetHandlers:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.rt = runtime

    def register(self) -> None:
        self.rt.folds[PendingTxnOffsetKey] = self.fold

    def fold(self, record: Record) -> None:
        key: PendingTxnOffsetKey = record.key
        if record.value is None:
            self.rt.pending.remove(key.group, key.producer_id, key.topic, key.partition)
        else:
            rt = self.rt
            if (key.group not in rt.groups and key.group not in rt.consumer_groups
                    and key.group not in rt.streams_groups):
                # As Kafka's TxnOffsetCommit, an unknown group becomes an Empty simple group.
                rt.groups[key.group] = ClassicGroup(key.group, rt.now, journal=rt.journal,
                                                    from_log=True)
            rt.pending.put(key.group, key.producer_id, key.topic, key.partition, record.value)

    def commit(self, version: int, request: TxnOffsetCommitRequest,
               ctx: RequestContext) -> TxnOffsetCommitResponse:
        topics = self.rt.topics
        group_error = self._validate(version, request)
        max_metadata = self.rt.config.offset_metadata_max_bytes
        now = self.rt.now
        out = []
        for t in request.topics:
            # v6 names topics by id only (KIP-1319); answers name them as asked.
            name = t.name if version < 6 else topics.topic_name(t.topic_id)
            count = None if name is None else topics.partition_count(name)
            parts = []
            for p in t.partitions:
                index = p.partition_index
                error: int
                if name is None:
                    error = E.UNKNOWN_TOPIC_ID
                elif count is None or not 0 <= index < count:
                    error = E.UNKNOWN_TOPIC_OR_PARTITION
                elif group_error:
                    error = group_error
                elif p.committed_metadata is not None and len(p.committed_metadata) > max_metadata:
                    error = E.OFFSET_METADATA_TOO_LARGE
                else:
                    error = E.NONE
                    value = OffsetCommitValue(
                        p.committed_offset, p.committed_leader_epoch if version >= 2 else -1,
                        p.committed_metadata or "", now, -1)
                    self.rt.write(Record(PendingTxnOffsetKey(
                        request.group_id, request.producer_id, name, index), value))
                parts.append(_Partition(partition_index=index, error_code=error))
            out.append(_Topic(name=t.name, topic_id=t.topic_id, partitions=parts))
        return TxnOffsetCommitResponse(throttle_time_ms=0, topics=out)

    def _validate(self, version: int, request: TxnOffsetCommitRequest) -> int:
        generation = request.generation_id_or_member_epoch if version >= 3 else -1
        member_id = request.member_id if version >= 3 else ""
        instance_id = request.group_instance_id if version >= 3 else None
        without_membership = generation < 0 and not member_id and instance_id is None
        consumer_group = self.rt.consumer_groups.get(request.group_id)
        if consumer_group is not None:
            if (generation < 0 and not consumer_group.members) or without_membership:
                return E.NONE
            member = consumer_group.members.get(member_id)
            if member is None:
                return E.UNKNOWN_MEMBER_ID
            # Kafka's validateMemberEpoch: a KIP-848 member's stale epoch is STALE_MEMBER_EPOCH.
            return E.NONE if generation == member.member_epoch else E.STALE_MEMBER_EPOCH
        group = self.rt.groups.get(request.group_id)
        if group is None:
            streams_group = (self.rt.streams_groups.get(request.group_id)
                             if self.rt.streams_groups else None)
            if streams_group is not None:
                return commit_error(streams_group, member_id, generation, version,
                                    transactional=True, instance_id=instance_id)
            if generation < 0:
                return E.NONE
            return E.GROUP_ID_NOT_FOUND if version >= 6 else E.ILLEGAL_GENERATION
        if group.state is DEAD or rule(Request.OUTSIDE_COMMIT, group.state) is Rule.UNAVAILABLE:
            return E.COORDINATOR_NOT_AVAILABLE
        if (generation < 0 and group.state is EMPTY) or without_membership:
            return E.NONE
        error = validate_member(group, member_id, instance_id)
        if error:
            return error
        return E.NONE if generation == group.generation else E.ILLEGAL_GENERATION

    def complete(self, producer_id: int, commit: bool) -> None:
        """The producer's transaction ended: its pending offsets become committed or vanish."""
        for group, (topic, partition), value in self.rt.pending.of_producer(producer_id):
            if commit:
                self.rt.write(offset_record(group, topic, partition, value))
            self.rt.write(Record(PendingTxnOffsetKey(group, producer_id, topic, partition), None))
