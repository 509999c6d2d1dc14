"""Classic group requests (offsets, membership, admin) and the floor's answers to them.

Members speak the consumer protocol: JoinGroup metadata is a real
ConsumerProtocolSubscription and SyncGroup assignments real
ConsumerProtocolAssignments, so kcsim parses what a Java consumer would send.
Floor answers are built with the same codec and shaped like kcsim's (same
fields, similar sizes), so the floor moves the same bytes.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from kcsim.protocol.codecs import data_codec
from kcsim.protocol.consumer_protocol import encode_assignment, encode_subscription

from .admin import fixed_response
from .client import Frame, message_class, request

OFFSET_COMMIT, OFFSET_FETCH, JOIN_GROUP, HEARTBEAT = 8, 9, 11, 12
LEAVE_GROUP, SYNC_GROUP, DESCRIBE_GROUPS, LIST_GROUPS = 13, 14, 15, 16
COMMIT_V, FETCH_V, JOIN_V, HEARTBEAT_V = 8, 8, 9, 4
LEAVE_V, SYNC_V, DESCRIBE_V, LIST_V = 5, 5, 5, 5

MEMBER_ID_REQUIRED = 79
REBALANCE_IN_PROGRESS = 27
ILLEGAL_GENERATION = 22
UNKNOWN_MEMBER_ID = 25

TOPIC = "bench-groups"
PARTITIONS = 10  # of TOPIC: every commit and fetch names all of them
ASSIGNED_PARTITIONS = 200  # what leaders hand out round-robin (no topic is needed for that)
PROTOCOL_TYPE = "consumer"
PROTOCOL = "roundrobin"


# -- offsets ----------------------------------------------------------------------


def commit_frame(group: str, offset: int, member_id: str = "", generation: int = -1) -> Frame:
    """OffsetCommit of every partition of TOPIC; without member and generation it is a
    simple (admin-style) commit, which Kafka accepts while the group is Empty."""
    cls = message_class(OFFSET_COMMIT, "request")
    return request(
        OFFSET_COMMIT, COMMIT_V, group_id=group, generation_id_or_member_epoch=generation,
        member_id=member_id, group_instance_id=None, retention_time_ms=-1,
        topics=[cls.OffsetCommitRequestTopic(name=TOPIC, partitions=[
            cls.OffsetCommitRequestPartition(partition_index=p, committed_offset=offset + p,
                                             committed_leader_epoch=-1, committed_metadata="")
            for p in range(PARTITIONS)])])


def fetch_frame(groups: list[str]) -> Frame:
    """OffsetFetch v8 of every partition of TOPIC in each group (KIP-709 when several)."""
    cls = message_class(OFFSET_FETCH, "request")
    topics = [cls.OffsetFetchRequestTopics(name=TOPIC, partition_indexes=list(range(PARTITIONS)))]
    return request(OFFSET_FETCH, FETCH_V, require_stable=False, groups=[
        cls.OffsetFetchRequestGroup(group_id=g, topics=topics) for g in groups])


def floor_commit() -> bytes:
    r = message_class(OFFSET_COMMIT, "response")
    return fixed_response(OFFSET_COMMIT, COMMIT_V, throttle_time_ms=0, topics=[
        r.OffsetCommitResponseTopic(name=TOPIC, partitions=[
            r.OffsetCommitResponsePartition(partition_index=p, error_code=0)
            for p in range(PARTITIONS)])])


def floor_fetch(groups: list[str], offset: int) -> bytes:
    r = message_class(OFFSET_FETCH, "response")
    topic = r.OffsetFetchResponseTopics(name=TOPIC, partitions=[
        r.OffsetFetchResponsePartitions(partition_index=p, committed_offset=offset + p,
                                        committed_leader_epoch=-1, metadata="", error_code=0)
        for p in range(PARTITIONS)])
    return fixed_response(OFFSET_FETCH, FETCH_V, throttle_time_ms=0, groups=[
        r.OffsetFetchResponseGroup(group_id=g, topics=[topic], error_code=0) for g in groups])


# -- membership -------------------------------------------------------------------


@cache
def subscription() -> bytes:
    cls = data_codec("ConsumerProtocolSubscription").cls
    return encode_subscription(cls(topics=[TOPIC], user_data=None, owned_partitions=[],
                                   generation_id=-1, rack_id=None), 3)


@cache
def assignment(index: int, members: int) -> bytes:
    """Partitions index, index + members, ... of the round-robin split among `members`."""
    cls: Any = data_codec("ConsumerProtocolAssignment").cls
    tp = cls.TopicPartition
    parts = list(range(index, ASSIGNED_PARTITIONS, members))
    return encode_assignment(cls(assigned_partitions=[tp(topic=TOPIC, partitions=parts)],
                                 user_data=None), 3)


def join_frame(group: str, member_id: str, session_ms: int, rebalance_ms: int) -> Frame:
    cls = message_class(JOIN_GROUP, "request")
    return request(JOIN_GROUP, JOIN_V, group_id=group, session_timeout_ms=session_ms,
                   rebalance_timeout_ms=rebalance_ms, member_id=member_id,
                   group_instance_id=None, protocol_type=PROTOCOL_TYPE,
                   protocols=[cls.JoinGroupRequestProtocol(name=PROTOCOL,
                                                           metadata=subscription())],
                   reason=None)


def sync_frame(group: str, generation: int, member_id: str, members: list[str]) -> Frame:
    """SyncGroup; `members` (the leader's view, else empty) get round-robin assignments."""
    cls = message_class(SYNC_GROUP, "request")
    ordered = sorted(members)
    return request(SYNC_GROUP, SYNC_V, group_id=group, generation_id=generation,
                   member_id=member_id, group_instance_id=None, protocol_type=PROTOCOL_TYPE,
                   protocol_name=PROTOCOL, assignments=[
                       cls.SyncGroupRequestAssignment(member_id=m,
                                                      assignment=assignment(i, len(ordered)))
                       for i, m in enumerate(ordered)])


def heartbeat_frame(group: str, generation: int, member_id: str) -> Frame:
    return request(HEARTBEAT, HEARTBEAT_V, group_id=group, generation_id=generation,
                   member_id=member_id, group_instance_id=None)


def leave_frame(group: str, member_ids: list[str]) -> Frame:
    cls = message_class(LEAVE_GROUP, "request")
    return request(LEAVE_GROUP, LEAVE_V, group_id=group, members=[
        cls.MemberIdentity(member_id=m, group_instance_id=None, reason=None)
        for m in member_ids])


def member_id_of(client_id: str, n: int) -> str:
    """A member id shaped like Kafka's (client id, dash, UUID)."""
    return f"{client_id}-{n:08x}-0000-4000-8000-000000000000"


def floor_join(member_id: str) -> bytes:
    """A follower's answer: generation, leader and protocol, no member list."""
    return fixed_response(JOIN_GROUP, JOIN_V, throttle_time_ms=0, error_code=0, generation_id=1,
                          protocol_type=PROTOCOL_TYPE, protocol_name=PROTOCOL,
                          leader=member_id_of("kcsim-bench", 0), skip_assignment=False,
                          member_id=member_id, members=[])


def floor_sync(group_size: int) -> bytes:
    return fixed_response(SYNC_GROUP, SYNC_V, throttle_time_ms=0, error_code=0,
                          protocol_type=PROTOCOL_TYPE, protocol_name=PROTOCOL,
                          assignment=assignment(0, group_size))


def floor_heartbeat() -> bytes:
    return fixed_response(HEARTBEAT, HEARTBEAT_V, throttle_time_ms=0, error_code=0)


def floor_leave(member_ids: list[str]) -> bytes:
    r = message_class(LEAVE_GROUP, "response")
    return fixed_response(LEAVE_GROUP, LEAVE_V, throttle_time_ms=0, error_code=0, members=[
        r.MemberResponse(member_id=m, group_instance_id=None, error_code=0) for m in member_ids])


# -- admin ------------------------------------------------------------------------


def list_groups_frame() -> Frame:
    return request(LIST_GROUPS, LIST_V, states_filter=[], types_filter=[])


def describe_frame(groups: list[str]) -> Frame:
    return request(DESCRIBE_GROUPS, DESCRIBE_V, groups=groups, include_authorized_operations=False)


def floor_list_groups(groups: list[str]) -> bytes:
    r = message_class(LIST_GROUPS, "response")
    return fixed_response(LIST_GROUPS, LIST_V, throttle_time_ms=0, error_code=0, groups=[
        r.ListedGroup(group_id=g, protocol_type=PROTOCOL_TYPE, group_state="Stable",
                      group_type="classic") for g in groups])


def floor_describe(groups: list[str]) -> bytes:
    """One-member Stable groups, as kcsim describes the bench's groups."""
    r = message_class(DESCRIBE_GROUPS, "response")
    return fixed_response(DESCRIBE_GROUPS, DESCRIBE_V, throttle_time_ms=0, groups=[
        r.DescribedGroup(error_code=0, group_id=g, group_state="Stable",
                         protocol_type=PROTOCOL_TYPE, protocol_data=PROTOCOL, members=[
                             r.DescribedGroupMember(
                                 member_id=member_id_of("kcsim-bench", i), group_instance_id=None,
                                 client_id="kcsim-bench", client_host="/127.0.0.1",
                                 member_metadata=subscription(),
                                 member_assignment=assignment(0, 1))],
                         authorized_operations=-(2**31))
        for i, g in enumerate(groups)])
