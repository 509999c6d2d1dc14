"""The coordinator's records in Kafka's own `__consumer_offsets` format.

Lag monitors (Burrow, the Prometheus consumer-group exporters) and Kafka's own
`GroupCoordinatorRecordSerde` read that topic: a record's key is its record type
(int16) then the key body, its value the value version (int16) then the value
body, a tombstone has no value. This module turns one kcsim record into that
key and value, and says which partition of the topic it belongs in; it is pure
(no I/O), so the server's topic view and the tests share it.

Record types are Kafka 4.x's (1 offset commit, 2 classic group, 3 and 5-8 the
KIP-848 consumer group, 17 and 19-23 the KIP-1071 streams group; 4, the partition metadata Kafka 4.x no longer writes,
kcsim never had). KIP-1249 gives its paused-partitions record no type id, so
kcsim writes it under :data:`PAUSED_RECORD_TYPE`, far above Kafka's range
(0-21 in Kafka 4.4): a reader built on Kafka's serde meets it as an unknown
type and can skip it, as Kafka's own loader skips types it does not know.
"""

from __future__ import annotations

import functools
import struct
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, cast

from kcsim.protocol.codecs import data_codec
from kcsim.protocol.messages import coordinator_records as wire
from kcsim.protocol.primitives import uvarint_bytes

from .records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberKey,
    ConsumerGroupMemberValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    PausedTopic,
    PausedTopicPartitionsKey,
    PausedTopicPartitionsValue,
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
    StreamsGroupTopologyValue,
    StreamsTaskIds,
    StreamsTopicInfo,
    TopicPartitions,
)
from .shared.java import java_string_hash

if TYPE_CHECKING:
    from kcsim.storage.records import Record

# A record's key and value in kcsim's classes, and its key or value body in Kafka's.
_Key = TypeVar("_Key")
_Value = TypeVar("_Value")
_Body = TypeVar("_Body", covariant=True)

OFFSETS_TOPIC = "__consumer_offsets"
DEFAULT_PARTITIONS = 50  # Kafka's offsets.topic.num.partitions

OFFSET_COMMIT_TYPE = 1
GROUP_METADATA_TYPE = 2
CONSUMER_GROUP_METADATA_TYPE = 3
CONSUMER_GROUP_MEMBER_TYPE = 5
TARGET_ASSIGNMENT_METADATA_TYPE = 6
TARGET_ASSIGNMENT_MEMBER_TYPE = 7
CURRENT_MEMBER_ASSIGNMENT_TYPE = 8
STREAMS_GROUP_METADATA_TYPE = 17
STREAMS_GROUP_MEMBER_TYPE = 19
STREAMS_TARGET_METADATA_TYPE = 20
STREAMS_TARGET_MEMBER_TYPE = 21
STREAMS_CURRENT_MEMBER_TYPE = 22
STREAMS_GROUP_TOPOLOGY_TYPE = 23
PAUSED_RECORD_TYPE = 1249  # kcsim's choice for KIP-1249's record: the KIP's number

_SHORT = struct.Struct(">h")
_ZERO_ID = uuid.UUID(int=0)


def partition_for(group_id: str, partitions: int) -> int:
    """The `__consumer_offsets` partition of a group, as Kafka's coordinator picks it:
    `Utils.abs(groupId.hashCode()) % partitions`, where `Utils.abs(Integer.MIN_VALUE)`
    is 0 (not Java's `Math.abs`, which stays negative there)."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


class _Codec(Generic[_Key, _Value]):
    """One record type: its key and value bodies (Kafka's classes), compiled once."""

    __slots__ = ("_encode_key", "_encode_value", "key_cls", "type_prefix", "value_cls")

    def __init__(self, type_id: int, key: type[_Key], value: type[_Value]) -> None:
        key_codec, value_codec = data_codec(key.__name__), data_codec(value.__name__)
        self.type_prefix = _SHORT.pack(type_id)
        self.key_cls = key
        self.value_cls = value
        self._encode_key = key_codec.encoder(0)
        self._encode_value = {v: value_codec.encoder(v) for v in (0, 1, 3, 4)
                              if v in value_codec.message.valid}

    def key(self, body: _Key) -> bytes:
        out = bytearray(self.type_prefix)
        self._encode_key(body, out)
        return bytes(out)

    def value(self, body: _Value, version: int) -> bytes:
        out = bytearray(_SHORT.pack(version))
        self._encode_value[version](body, out)
        return bytes(out)


_OFFSET = _Codec(OFFSET_COMMIT_TYPE, wire.OffsetCommitKey, wire.OffsetCommitValue)
_GROUP = _Codec(GROUP_METADATA_TYPE, wire.GroupMetadataKey, wire.GroupMetadataValue)
_MEMBER_METADATA = wire.GroupMetadataValue.MemberMetadata
_CG_EPOCH = _Codec(CONSUMER_GROUP_METADATA_TYPE, wire.ConsumerGroupMetadataKey,
                   wire.ConsumerGroupMetadataValue)
_CG_MEMBER = _Codec(CONSUMER_GROUP_MEMBER_TYPE, wire.ConsumerGroupMemberMetadataKey,
                    wire.ConsumerGroupMemberMetadataValue)
_CG_TARGET_EPOCH = _Codec(TARGET_ASSIGNMENT_METADATA_TYPE,
                          wire.ConsumerGroupTargetAssignmentMetadataKey,
                          wire.ConsumerGroupTargetAssignmentMetadataValue)
_CG_TARGET = _Codec(TARGET_ASSIGNMENT_MEMBER_TYPE, wire.ConsumerGroupTargetAssignmentMemberKey,
                    wire.ConsumerGroupTargetAssignmentMemberValue)
_CG_CURRENT = _Codec(CURRENT_MEMBER_ASSIGNMENT_TYPE,
                     wire.ConsumerGroupCurrentMemberAssignmentKey,
                     wire.ConsumerGroupCurrentMemberAssignmentValue)
_SG_EPOCH = _Codec(STREAMS_GROUP_METADATA_TYPE, wire.StreamsGroupMetadataKey,
                   wire.StreamsGroupMetadataValue)
_SG_TOPOLOGY = _Codec(STREAMS_GROUP_TOPOLOGY_TYPE, wire.StreamsGroupTopologyKey,
                      wire.StreamsGroupTopologyValue)
_SG_MEMBER = _Codec(STREAMS_GROUP_MEMBER_TYPE, wire.StreamsGroupMemberMetadataKey,
                    wire.StreamsGroupMemberMetadataValue)
_SG_TARGET_EPOCH = _Codec(STREAMS_TARGET_METADATA_TYPE,
                          wire.StreamsGroupTargetAssignmentMetadataKey,
                          wire.StreamsGroupTargetAssignmentMetadataValue)
_SG_TARGET = _Codec(STREAMS_TARGET_MEMBER_TYPE, wire.StreamsGroupTargetAssignmentMemberKey,
                    wire.StreamsGroupTargetAssignmentMemberValue)
_SG_CURRENT = _Codec(STREAMS_CURRENT_MEMBER_TYPE, wire.StreamsGroupCurrentMemberAssignmentKey,
                     wire.StreamsGroupCurrentMemberAssignmentValue)
_PAUSED = _Codec(PAUSED_RECORD_TYPE, wire.PausedTopicPartitionsKey,
                 wire.PausedTopicPartitionsValue)


class _TopicPartitionsBody(Protocol[_Body]):
    """The class of a (topic id, partitions) entry in one of Kafka's record values."""

    def __call__(self, *, topic_id: uuid.UUID, partitions: list[int]) -> _Body: ...


def _ids(
    cls: _TopicPartitionsBody[_Body], stored: list[TopicPartitions] | list[PausedTopic]
) -> list[_Body]:
    return [cls(topic_id=uuid.UUID(bytes=bytes(tp.topic_id)), partitions=list(tp.partitions))
            for tp in stored]


def _offset_commit_declared(
    key: OffsetCommitKey, value: OffsetCommitValue | None, version: int
) -> tuple[bytes, bytes | None]:
    """An offset commit through the declared schemas: the reference the packed form below
    is tested against, and the way for the rare value version 1."""
    body = _OFFSET.key(_OFFSET.key_cls(group=key.group, topic=key.topic,
                                       partition=key.partition))
    if value is None:
        return body, None
    expires = value.expire_timestamp
    return body, _OFFSET.value(_OFFSET.value_cls(
        offset=value.offset, leader_epoch=value.leader_epoch, metadata=value.metadata or "",
        commit_timestamp=value.commit_timestamp, expire_timestamp=expires,
        topic_id=_ZERO_ID), 1 if expires != -1 else version)


@functools.lru_cache(maxsize=1 << 16)
def _offset_key_prefix(group: str, topic: str) -> bytes:
    g, t = group.encode(), topic.encode()
    return b"".join((_SHORT.pack(OFFSET_COMMIT_TYPE), _SHORT.pack(len(g)), g,
                     _SHORT.pack(len(t)), t))


_INT = struct.Struct(">i")
_V3_HEAD = struct.Struct(">hqih")
_V4_HEAD = struct.Struct(">hqi")
_V4_NO_METADATA = struct.Struct(">hqibqb")  # the usual commit: empty metadata, no tags
_LONG = struct.Struct(">q")


def offset_commit(
    key: OffsetCommitKey, value: OffsetCommitValue | None, version: int = 4
) -> tuple[bytes, bytes | None]:
    """An offset commit's key and value, packed directly: it is the record written on
    every commit (:func:`kafka_record` gives the same, for any record)."""
    body = _offset_key_prefix(key.group, key.topic) + _INT.pack(key.partition)
    if value is None:
        return body, None
    if value.expire_timestamp != -1:
        return _offset_commit_declared(key, value, version)
    if version == 4 and not value.metadata:
        return body, _V4_NO_METADATA.pack(4, value.offset, value.leader_epoch, 1,
                                          value.commit_timestamp, 0)
    metadata = (value.metadata or "").encode()
    if version == 4:  # flexible: compact string, empty tag section
        n = len(metadata) + 1
        size = bytes((n,)) if n < 0x80 else uvarint_bytes(n)
        return body, b"".join((_V4_HEAD.pack(4, value.offset, value.leader_epoch), size,
                               metadata, _LONG.pack(value.commit_timestamp), b"\x00"))
    return body, b"".join((_V3_HEAD.pack(3, value.offset, value.leader_epoch, len(metadata)),
                           metadata, _LONG.pack(value.commit_timestamp)))


def _group_metadata(
    key: GroupMetadataKey, value: GroupMetadataValue | None
) -> tuple[bytes, bytes | None]:
    body = _GROUP.key(_GROUP.key_cls(group=key.group))
    if value is None:
        return body, None
    members = [
        _MEMBER_METADATA(
            member_id=m.member_id, group_instance_id=m.group_instance_id,
            client_id=m.client_id, client_host=m.client_host,
            rebalance_timeout=m.rebalance_timeout_ms, session_timeout=m.session_timeout_ms,
            subscription=m.protocols[0][1] if m.protocols else b"", assignment=m.assignment)
        for m in value.members
    ]
    return body, _GROUP.value(_GROUP.value_cls(
        protocol_type=value.protocol_type, generation=value.generation,
        protocol=value.protocol, leader=value.leader,
        current_state_timestamp=value.state_timestamp, members=members), 3)


def _consumer_group_epoch(
    key: ConsumerGroupMetadataKey, value: ConsumerGroupMetadataValue | None
) -> tuple[bytes, bytes | None]:
    body = _CG_EPOCH.key(_CG_EPOCH.key_cls(group_id=key.group))
    if value is None:
        return body, None
    return body, _CG_EPOCH.value(_CG_EPOCH.value_cls(
        epoch=value.epoch, metadata_hash=value.metadata_hash), 0)


def _consumer_group_member(
    key: ConsumerGroupMemberKey, value: ConsumerGroupMemberValue | None
) -> tuple[bytes, bytes | None]:
    body = _CG_MEMBER.key(_CG_MEMBER.key_cls(group_id=key.group, member_id=key.member_id))
    if value is None:
        return body, None
    return body, _CG_MEMBER.value(_CG_MEMBER.value_cls(
        instance_id=value.instance_id, rack_id=value.rack_id, client_id=value.client_id,
        client_host=value.client_host, subscribed_topic_names=list(value.subscribed_topic_names),
        subscribed_topic_regex=value.subscribed_topic_regex,
        rebalance_timeout_ms=value.rebalance_timeout_ms,
        server_assignor=value.server_assignor), 0)


def _target_epoch(
    key: ConsumerGroupTargetAssignmentMetadataKey,
    value: ConsumerGroupTargetAssignmentMetadataValue | None,
) -> tuple[bytes, bytes | None]:
    body = _CG_TARGET_EPOCH.key(_CG_TARGET_EPOCH.key_cls(group_id=key.group))
    if value is None:
        return body, None
    return body, _CG_TARGET_EPOCH.value(_CG_TARGET_EPOCH.value_cls(
        assignment_epoch=value.assignment_epoch,
        assignment_timestamp=value.assignment_timestamp), 0)


def _target_member(
    key: ConsumerGroupTargetAssignmentMemberKey,
    value: ConsumerGroupTargetAssignmentMemberValue | None,
) -> tuple[bytes, bytes | None]:
    body = _CG_TARGET.key(_CG_TARGET.key_cls(group_id=key.group, member_id=key.member_id))
    if value is None:
        return body, None
    cls = _CG_TARGET.value_cls
    return body, _CG_TARGET.value(cls(
        topic_partitions=_ids(cls.TopicPartition, value.topic_partitions)), 0)


def _current_member(
    key: ConsumerGroupCurrentMemberAssignmentKey,
    value: ConsumerGroupCurrentMemberAssignmentValue | None,
) -> tuple[bytes, bytes | None]:
    body = _CG_CURRENT.key(_CG_CURRENT.key_cls(group_id=key.group, member_id=key.member_id))
    if value is None:
        return body, None
    cls = _CG_CURRENT.value_cls
    return body, _CG_CURRENT.value(cls(
        member_epoch=value.member_epoch, previous_member_epoch=value.previous_member_epoch,
        state=value.state, assigned_partitions=_ids(cls.TopicPartitions, value.assigned),
        partitions_pending_revocation=_ids(cls.TopicPartitions,
                                           value.partitions_pending_revocation)), 0)


def _paused(
    key: PausedTopicPartitionsKey, value: PausedTopicPartitionsValue | None
) -> tuple[bytes, bytes | None]:
    body = _PAUSED.key(_PAUSED.key_cls(group_id=key.group))
    if value is None:
        return body, None
    cls = _PAUSED.value_cls
    return body, _PAUSED.value(cls(
        paused_topic_partitions=_ids(cls.PausedTopicPartitions, value.topics)), 0)


# -- KIP-1071 streams groups ----------------------------------------------------


def _streams_epoch(
    key: StreamsGroupMetadataKey, value: StreamsGroupMetadataValue | None
) -> tuple[bytes, bytes | None]:
    body = _SG_EPOCH.key(_SG_EPOCH.key_cls(group_id=key.group))
    if value is None:
        return body, None
    cls = _SG_EPOCH.value_cls
    configs = value.last_assignment_configs
    return body, _SG_EPOCH.value(cls(
        epoch=value.epoch, metadata_hash=value.metadata_hash,
        validated_topology_epoch=value.validated_topology_epoch,
        last_assignment_configs=None if configs is None else [
            cls.LastAssignmentConfig(key=k, value=v) for k, v in configs]), 0)


def _streams_topology(
    key: StreamsGroupTopologyKey, value: StreamsGroupTopologyValue | None
) -> tuple[bytes, bytes | None]:
    body = _SG_TOPOLOGY.key(_SG_TOPOLOGY.key_cls(group_id=key.group))
    if value is None:
        return body, None
    cls = _SG_TOPOLOGY.value_cls
    info, config = cls.TopicInfo, cls.TopicConfig

    def infos(topics: list[StreamsTopicInfo]) -> list[wire.StreamsGroupTopologyValue.TopicInfo]:
        return [info(name=t.name, partitions=t.partitions, replication_factor=t.replication_factor,
                     topic_configs=[config(key=k, value=v) for k, v in t.topic_configs])
                for t in topics]

    return body, _SG_TOPOLOGY.value(cls(epoch=value.epoch, subtopologies=[
        cls.Subtopology(
            subtopology_id=s.subtopology_id, source_topics=list(s.source_topics),
            source_topic_regex=list(s.source_topic_regex),
            state_changelog_topics=infos(s.state_changelog_topics),
            repartition_sink_topics=list(s.repartition_sink_topics),
            repartition_source_topics=infos(s.repartition_source_topics),
            copartition_groups=[cls.CopartitionGroup(
                source_topics=list(g.source_topics), source_topic_regex=list(g.source_topic_regex),
                repartition_source_topics=list(g.repartition_source_topics))
                for g in s.copartition_groups])
        for s in value.subtopologies]), 0)


def _streams_member(
    key: StreamsGroupMemberKey, value: StreamsGroupMemberValue | None
) -> tuple[bytes, bytes | None]:
    body = _SG_MEMBER.key(_SG_MEMBER.key_cls(group_id=key.group, member_id=key.member_id))
    if value is None:
        return body, None
    cls = _SG_MEMBER.value_cls
    endpoint = value.user_endpoint
    return body, _SG_MEMBER.value(cls(
        instance_id=value.instance_id, rack_id=value.rack_id, client_id=value.client_id,
        client_host=value.client_host, rebalance_timeout_ms=value.rebalance_timeout_ms,
        topology_epoch=value.topology_epoch, process_id=value.process_id,
        user_endpoint=None if endpoint is None else cls.Endpoint(host=endpoint[0],
                                                                 port=endpoint[1]),
        client_tags=[cls.KeyValue(key=k, value=v) for k, v in value.client_tags]), 0)


def _streams_target_epoch(
    key: StreamsGroupTargetAssignmentMetadataKey,
    value: StreamsGroupTargetAssignmentMetadataValue | None,
) -> tuple[bytes, bytes | None]:
    body = _SG_TARGET_EPOCH.key(_SG_TARGET_EPOCH.key_cls(group_id=key.group))
    if value is None:
        return body, None
    return body, _SG_TARGET_EPOCH.value(_SG_TARGET_EPOCH.value_cls(
        assignment_epoch=value.assignment_epoch,
        assignment_timestamp=value.assignment_timestamp), 0)


class _TaskIdsBody(Protocol[_Body]):
    """The class of a (subtopology, partitions) entry in one of Kafka's streams records."""

    def __call__(self, *, subtopology_id: str, partitions: list[int]) -> _Body: ...


def _tasks(cls: _TaskIdsBody[_Body], stored: list[StreamsTaskIds]) -> list[_Body]:
    return [cls(subtopology_id=t.subtopology_id, partitions=list(t.partitions)) for t in stored]


def _streams_target(
    key: StreamsGroupTargetAssignmentMemberKey,
    value: StreamsGroupTargetAssignmentMemberValue | None,
) -> tuple[bytes, bytes | None]:
    body = _SG_TARGET.key(_SG_TARGET.key_cls(group_id=key.group, member_id=key.member_id))
    if value is None:
        return body, None
    cls = _SG_TARGET.value_cls
    return body, _SG_TARGET.value(cls(
        active_tasks=_tasks(cls.TaskIds, value.active_tasks),
        standby_tasks=_tasks(cls.TaskIds, value.standby_tasks),
        warmup_tasks=_tasks(cls.TaskIds, value.warmup_tasks)), 0)


def _streams_current(
    key: StreamsGroupCurrentMemberAssignmentKey,
    value: StreamsGroupCurrentMemberAssignmentValue | None,
) -> tuple[bytes, bytes | None]:
    body = _SG_CURRENT.key(_SG_CURRENT.key_cls(group_id=key.group, member_id=key.member_id))
    if value is None:
        return body, None
    cls = _SG_CURRENT.value_cls
    ids = cls.TaskIds
    return body, _SG_CURRENT.value(cls(
        member_epoch=value.member_epoch, previous_member_epoch=value.previous_member_epoch,
        state=value.state,
        active_tasks=_tasks(ids, value.active_tasks),
        standby_tasks=_tasks(ids, value.standby_tasks),
        warmup_tasks=_tasks(ids, value.warmup_tasks),
        active_tasks_pending_revocation=_tasks(ids, value.active_tasks_pending_revocation),
        standby_tasks_pending_revocation=_tasks(ids, value.standby_tasks_pending_revocation),
        warmup_tasks_pending_revocation=_tasks(ids, value.warmup_tasks_pending_revocation)), 0)


_Encoder = Callable[[object, object], tuple[bytes, bytes | None]]


def _by_key_type(encode: Callable[[_Key, _Value | None], tuple[bytes, bytes | None]]) -> _Encoder:
    """`encode` as `_ENCODERS` holds it: called only with a key of the type it is filed
    under and that record's value (the one promise mypy cannot check here)."""
    return cast("_Encoder", encode)


_ENCODERS: dict[type, _Encoder] = {
    GroupMetadataKey: _by_key_type(_group_metadata),
    ConsumerGroupMetadataKey: _by_key_type(_consumer_group_epoch),
    ConsumerGroupMemberKey: _by_key_type(_consumer_group_member),
    ConsumerGroupTargetAssignmentMetadataKey: _by_key_type(_target_epoch),
    ConsumerGroupTargetAssignmentMemberKey: _by_key_type(_target_member),
    ConsumerGroupCurrentMemberAssignmentKey: _by_key_type(_current_member),
    PausedTopicPartitionsKey: _by_key_type(_paused),
    StreamsGroupMetadataKey: _by_key_type(_streams_epoch),
    StreamsGroupTopologyKey: _by_key_type(_streams_topology),
    StreamsGroupMemberKey: _by_key_type(_streams_member),
    StreamsGroupTargetAssignmentMetadataKey: _by_key_type(_streams_target_epoch),
    StreamsGroupTargetAssignmentMemberKey: _by_key_type(_streams_target),
    StreamsGroupCurrentMemberAssignmentKey: _by_key_type(_streams_current),
}


OFFSET_VALUE_VERSIONS = (3, 4)
"""OffsetCommitValue versions a topic may be written in: 4 is what Kafka 4.x writes; 3 is
what Kafka 2.1 to 3.x wrote, the newest some lag monitors decode (Burrow 1.2)."""


def kafka_record(record: Record, offset_value_version: int = 4
                 ) -> tuple[str, bytes, bytes | None] | None:
    """(group id, key, value or None for a tombstone) of a coordinator record in Kafka's
    format; None for a record that is not the coordinator's (the broker's topics).
    An offset commit's value is written in `offset_value_version` (see
    :data:`OFFSET_VALUE_VERSIONS`), or in version 1 when it carries an explicit expiry,
    as Kafka does."""
    key_type = type(record.key)
    if key_type is OffsetCommitKey:
        key, value = offset_commit(record.key, record.value, offset_value_version)
        return record.key.group, key, value
    encode = _ENCODERS.get(key_type)
    if encode is None:
        return None
    key, value = encode(record.key, record.value)
    return record.key.group, key, value


def record_timestamp(record: Record) -> int | None:
    """The time a record says it was written (an offset commit's commit time), if any."""
    if type(record.key) is OffsetCommitKey and record.value is not None:
        value: OffsetCommitValue = record.value
        return value.commit_timestamp
    return None
