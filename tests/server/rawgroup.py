"""A classic consumer-group member speaking raw frames through kcsim's codec, over trio.

Enough of the protocol to take a group through join, sync, heartbeats, commits and
offset fetches with no client library: the member does exactly what the test says,
when it says it (no background heartbeats), so time-outs are the test's to cause.
"""

from __future__ import annotations

from typing import Any

import trio

from kcsim.protocol.codecs import data_codec, request_class
from kcsim.protocol.consumer_protocol import (
    decode_assignment,
    encode_assignment,
    encode_subscription,
)

from .rawkafka import TrioWire

JOIN_GROUP, HEARTBEAT, SYNC_GROUP, OFFSET_COMMIT, OFFSET_FETCH, CREATE_TOPICS = 11, 12, 14, 8, 9, 19
FETCH, FIND_COORDINATOR = 1, 10
MEMBER_ID_REQUIRED = 79


async def connect(port: int, client_id: str = "kcsim-tests") -> TrioWire:
    return TrioWire(await trio.open_tcp_stream("127.0.0.1", port), client_id)


async def find_coordinator(wire: TrioWire, group: str) -> int:
    """FindCoordinator v3 of a group: the error code."""
    R = request_class(FIND_COORDINATOR)
    response = await wire.call(FIND_COORDINATOR, 3, R(key=group, key_type=0))
    return int(response.error_code)


async def fetch(wire: TrioWire, topic: str, partition: int, offset: int, max_wait_ms: int) -> Any:
    """Fetch v12 of one partition from `offset`, waiting up to max_wait_ms for one byte."""
    R = request_class(FETCH)
    return await wire.call(FETCH, 12, R(
        replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20,
        isolation_level=0, session_id=0, session_epoch=-1, topics=[R.FetchTopic(
            topic=topic, partitions=[R.FetchPartition(
                partition=partition, fetch_offset=offset, partition_max_bytes=1 << 20)])],
        forgotten_topics_data=[], rack_id=""))


async def create_topic(wire: TrioWire, topic: str, partitions: int) -> None:
    R = request_class(CREATE_TOPICS)
    response = await wire.call(CREATE_TOPICS, 5, R(topics=[R.CreatableTopic(
        name=topic, num_partitions=partitions, replication_factor=1, assignments=[],
        configs=[])], timeout_ms=5000))
    assert response.topics[0].error_code == 0, response


class RawMember:
    """One member of a classic group with the consumer protocol, range-assigned by the test."""

    def __init__(self, wire: TrioWire, group: str, topic: str, session_ms: int = 10_000,
                 rebalance_ms: int = 30_000) -> None:
        self.wire, self.group, self.topic = wire, group, topic
        self.session_ms, self.rebalance_ms = session_ms, rebalance_ms
        self.member_id = ""
        self.generation = -1
        self.leader = ""
        self.members: list[str] = []

    async def join(self) -> int:
        """JoinGroup (v5, retried once with the member id the broker hands out); the error code."""
        R = request_class(JOIN_GROUP)
        metadata = encode_subscription(
            data_codec("ConsumerProtocolSubscription").cls(topics=[self.topic]), 0)
        for _ in range(2):
            response = await self.wire.call(JOIN_GROUP, 5, R(
                group_id=self.group, session_timeout_ms=self.session_ms,
                rebalance_timeout_ms=self.rebalance_ms, member_id=self.member_id,
                group_instance_id=None, protocol_type="consumer",
                protocols=[R.JoinGroupRequestProtocol(name="range", metadata=metadata)]))
            self.member_id = response.member_id or self.member_id
            if response.error_code != MEMBER_ID_REQUIRED:
                break
        self.generation = response.generation_id
        self.leader = response.leader
        self.members = [m.member_id for m in response.members]
        return int(response.error_code)

    async def sync(self, partitions: int = 0) -> tuple[int, list[int]]:
        """SyncGroup; the leader deals `partitions` round-robin. (error code, own partitions)."""
        R = request_class(SYNC_GROUP)
        assignments = []
        if self.member_id == self.leader:
            A = data_codec("ConsumerProtocolAssignment").cls
            for i, member in enumerate(sorted(self.members)):
                mine = [p for p in range(partitions) if p % len(self.members) == i]
                raw = encode_assignment(A(assigned_partitions=[A.TopicPartition(
                    topic=self.topic, partitions=mine)]), 0)
                assignments.append(R.SyncGroupRequestAssignment(member_id=member, assignment=raw))
        response = await self.wire.call(SYNC_GROUP, 3, R(
            group_id=self.group, generation_id=self.generation, member_id=self.member_id,
            group_instance_id=None, assignments=assignments))
        if response.error_code or not response.assignment:
            return int(response.error_code), []
        decoded = decode_assignment(response.assignment)
        return 0, sorted(p for tp in decoded.assigned_partitions for p in tp.partitions)

    async def heartbeat(self) -> int:
        R = request_class(HEARTBEAT)
        response = await self.wire.call(HEARTBEAT, 3, R(
            group_id=self.group, generation_id=self.generation, member_id=self.member_id,
            group_instance_id=None))
        return int(response.error_code)

    async def commit(self, offsets: dict[int, int]) -> list[int]:
        """OffsetCommit v7 as this member; the partitions' error codes."""
        R = request_class(OFFSET_COMMIT)
        response = await self.wire.call(OFFSET_COMMIT, 7, R(
            group_id=self.group, generation_id_or_member_epoch=self.generation,
            member_id=self.member_id, group_instance_id=None, topics=[R.OffsetCommitRequestTopic(
                name=self.topic, partitions=[R.OffsetCommitRequestPartition(
                    partition_index=p, committed_offset=o, committed_metadata="")
                    for p, o in offsets.items()])]))
        return [int(p.error_code) for t in response.topics for p in t.partitions]


async def fetch_offsets(wire: TrioWire, group: str, topic: str, partitions: int) -> tuple[int, dict[int, int]]:
    """OffsetFetch v7 of one group: (error code, committed offsets, -1 left out)."""
    R = request_class(OFFSET_FETCH)
    response: Any = await wire.call(OFFSET_FETCH, 7, R(group_id=group, topics=[
        R.OffsetFetchRequestTopic(name=topic, partition_indexes=list(range(partitions)))]))
    found = {p.partition_index: p.committed_offset for t in response.topics for p in t.partitions
             if p.committed_offset >= 0}
    return int(response.error_code), found
