"""A fake clock and client for driving the classic group coordinator in unit tests."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

from kcsim.coordinator import Caller, GroupConfig, GroupCoordinator
from kcsim.protocol.codecs import codec, data_codec, request_class
from kcsim.protocol.consumer_protocol import encode_assignment, encode_subscription

JoinGroupRequest = request_class(11)
HeartbeatRequest = request_class(12)
LeaveGroupRequest = request_class(13)
SyncGroupRequest = request_class(14)
DescribeGroupsRequest = request_class(15)
ListGroupsRequest = request_class(16)
OffsetCommitRequest = request_class(8)
OffsetFetchRequest = request_class(9)
DeleteGroupsRequest = request_class(42)
OffsetDeleteRequest = request_class(47)

MEMBER_ID_REQUIRED = 79


class FakeTopics:
    """Topic metadata with deterministic ids."""

    def __init__(self, partitions: dict[str, int]) -> None:
        self.partitions = dict(partitions)
        self.ids = {name: uuid.uuid5(uuid.NAMESPACE_URL, name) for name in partitions}
        self.names = {v: k for k, v in self.ids.items()}

    def partition_count(self, name: str) -> int | None:
        return self.partitions.get(name)

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self.names.get(topic_id)

    def topic_id(self, name: str) -> uuid.UUID | None:
        return self.ids.get(name)


class Token:
    __slots__ = ("api_key", "label", "n", "version")

    def __init__(self, n: int, api_key: int, version: int) -> None:
        self.n = n
        self.label = f"{api_key}v{version}"
        self.api_key = api_key
        self.version = version

    def __repr__(self) -> str:
        return f"<{self.label} #{self.n}>"


def subscription(*topics: str, version: int = 0) -> bytes:
    cls = data_codec("ConsumerProtocolSubscription").cls
    return encode_subscription(cls(topics=list(topics)), version)


def assignment(partitions: dict[str, list[int]]) -> bytes:
    cls = data_codec("ConsumerProtocolAssignment").cls
    tp = data_codec("ConsumerProtocolAssignment").structs["TopicPartition"]
    return encode_assignment(
        cls(assigned_partitions=[tp(topic=t, partitions=ps) for t, ps in partitions.items()]), 0
    )


def decode_assignment(raw: bytes) -> dict[str, list[int]]:
    from kcsim.protocol.consumer_protocol import decode_assignment as decode

    return {tp.topic: list(tp.partitions) for tp in decode(raw).assigned_partitions}


class Harness:
    """One coordinator, a fake clock and every response and record it produced."""

    def __init__(
        self,
        config: GroupConfig | None = None,
        topics: dict[str, int] | None = None,
        now: int = 1_000,
    ) -> None:
        self.config = config or GroupConfig(initial_rebalance_delay_ms=100)
        self.topics = FakeTopics(topics if topics is not None else {"t": 6, "u": 3})
        counter = itertools.count(1)
        self.gc = GroupCoordinator(
            self.config, self.topics, new_uuid=lambda: uuid.UUID(int=next(counter))
        )
        self.now = now
        self.records: list[Any] = []
        self.responses: dict[Token, Any] = {}
        self.order: list[Token] = []
        self._tokens = itertools.count(1)

    # -- plumbing -----------------------------------------------------------

    def _collect(self, outcome: Any) -> None:
        self.records.extend(outcome.records)
        for token, response in outcome.responses:
            assert token not in self.responses, f"{token} answered twice"
            # Every response must be encodable at the version it answers.
            codec(token.api_key, "response").encode(response, token.version)
            self.responses[token] = response
            self.order.append(token)

    def call(
        self,
        api_key: int,
        version: int,
        request: Any,
        client_id: str = "client",
        host: str = "127.0.0.1",
    ) -> Token:
        token = Token(next(self._tokens), api_key, version)
        ctx = Caller(token=token, client_id=client_id, client_host=host)
        self._collect(self.gc.handle(api_key, version, request, ctx, self.now))
        return token

    def answer(self, api_key: int, version: int, request: Any, **kw: Any) -> Any:
        """Call and return the immediate response (fails if the request was parked)."""
        token = self.call(api_key, version, request, **kw)
        assert token in self.responses, f"{token} was parked"
        return self.responses[token]

    def response(self, token: Token) -> Any | None:
        return self.responses.get(token)

    def advance(self, ms: int) -> None:
        self.now += ms
        self._collect(self.gc.tick(self.now))

    def tick(self) -> None:
        self._collect(self.gc.tick(self.now))

    def until_answered(self, tokens: list[Token], limit_ms: int = 600_000) -> None:
        """Advance the clock deadline by deadline until every token has its response."""
        self.tick()
        start = self.now
        while any(t not in self.responses for t in tokens):
            deadline = self.gc.next_deadline()
            assert deadline is not None and deadline - start <= limit_ms, "never answered"
            self.now = max(self.now, deadline)
            self.tick()

    # -- requests -----------------------------------------------------------

    def join(
        self,
        group: str,
        member_id: str = "",
        *,
        version: int = 9,
        instance: str | None = None,
        protocols: list[tuple[str, bytes]] | None = None,
        session: int = 10_000,
        rebalance: int = 30_000,
        protocol_type: str = "consumer",
        client_id: str = "client",
        host: str = "127.0.0.1",
    ) -> Token:
        cls = JoinGroupRequest
        if protocols is None:
            protocols = [("range", subscription("t"))]
        request = cls(
            group_id=group,
            session_timeout_ms=session,
            rebalance_timeout_ms=rebalance,
            member_id=member_id,
            group_instance_id=instance,
            protocol_type=protocol_type,
            protocols=[cls.JoinGroupRequestProtocol(name=n, metadata=m) for n, m in protocols],
            reason=None,
        )
        return self.call(11, version, request, client_id=client_id, host=host)

    def join_dynamic(self, group: str, **kw: Any) -> Token:
        """The two-step v4+ join: get a member id, then join with it (returns the parked token)."""
        first = self.response(self.join(group, **kw))
        assert first is not None and first.error_code == MEMBER_ID_REQUIRED, first
        return self.join(group, first.member_id, **kw)

    def sync(
        self,
        group: str,
        member_id: str,
        generation: int,
        *,
        version: int = 5,
        assignments: dict[str, bytes] | None = None,
        instance: str | None = None,
        protocol_type: str | None = "consumer",
        protocol_name: str | None = "range",
    ) -> Token:
        cls = SyncGroupRequest
        request = cls(
            group_id=group,
            generation_id=generation,
            member_id=member_id,
            group_instance_id=instance,
            protocol_type=protocol_type,
            protocol_name=protocol_name,
            assignments=[
                cls.SyncGroupRequestAssignment(member_id=m, assignment=a)
                for m, a in (assignments or {}).items()
            ],
        )
        return self.call(14, version, request)

    def heartbeat(
        self,
        group: str,
        member_id: str,
        generation: int,
        *,
        version: int = 4,
        instance: str | None = None,
    ) -> Any:
        return self.answer(
            12,
            version,
            HeartbeatRequest(
                group_id=group,
                generation_id=generation,
                member_id=member_id,
                group_instance_id=instance,
            ),
        )

    def leave(self, group: str, *members: tuple[str, str | None], version: int = 5) -> Any:
        cls = LeaveGroupRequest
        if version >= 3:
            request = cls(
                group_id=group,
                members=[
                    cls.MemberIdentity(member_id=m, group_instance_id=i, reason=None)
                    for m, i in members
                ],
            )
        else:
            request = cls(group_id=group, member_id=members[0][0])
        return self.answer(13, version, request)

    def commit(
        self,
        group: str,
        offsets: dict[tuple[str, int], int],
        *,
        generation: int = -1,
        member_id: str = "",
        instance: str | None = None,
        version: int = 9,
        metadata: str | None = "",
        retention: int = -1,
    ) -> Any:
        cls = OffsetCommitRequest
        by_topic: dict[str, list[Any]] = {}
        for (topic, partition), offset in offsets.items():
            by_topic.setdefault(topic, []).append(
                cls.OffsetCommitRequestPartition(
                    partition_index=partition,
                    committed_offset=offset,
                    committed_leader_epoch=-1,
                    commit_timestamp=-1,
                    committed_metadata=metadata,
                )
            )
        topics = []
        for topic, parts in by_topic.items():
            if version >= 10:
                topic_id = self.topics.topic_id(topic) or uuid.uuid5(uuid.NAMESPACE_DNS, topic)
                topics.append(cls.OffsetCommitRequestTopic(topic_id=topic_id, partitions=parts))
            else:
                topics.append(cls.OffsetCommitRequestTopic(name=topic, partitions=parts))
        request = cls(
            group_id=group,
            generation_id_or_member_epoch=generation,
            member_id=member_id,
            group_instance_id=instance,
            retention_time_ms=retention,
            topics=topics,
        )
        return self.answer(8, version, request)

    def fetch(
        self, group: str, partitions: dict[str, list[int]] | None, *, version: int = 7
    ) -> Any:
        cls = OffsetFetchRequest
        topics = (
            None
            if partitions is None
            else [
                cls.OffsetFetchRequestTopic(name=t, partition_indexes=ps)
                for t, ps in partitions.items()
            ]
        )
        return self.answer(9, version, cls(group_id=group, topics=topics))

    def fetch_many(
        self, groups: dict[str, dict[str, list[int]] | None], *, version: int = 9
    ) -> Any:
        cls = OffsetFetchRequest
        request_groups = []
        for group, partitions in groups.items():
            if partitions is None:
                topics = None
            elif version >= 10:
                topics = [
                    cls.OffsetFetchRequestTopics(
                        topic_id=self.topics.topic_id(t) or uuid.uuid5(uuid.NAMESPACE_DNS, t),
                        partition_indexes=ps,
                    )
                    for t, ps in partitions.items()
                ]
            else:
                topics = [
                    cls.OffsetFetchRequestTopics(name=t, partition_indexes=ps)
                    for t, ps in partitions.items()
                ]
            request_groups.append(cls.OffsetFetchRequestGroup(group_id=group, topics=topics))
        return self.answer(9, version, cls(groups=request_groups))

    def describe(self, *groups: str, version: int = 5, operations: bool = False) -> Any:
        return self.answer(
            15,
            version,
            DescribeGroupsRequest(groups=list(groups), include_authorized_operations=operations),
        )

    def list_groups(
        self, *, version: int = 5, states: list[str] | None = None, types: list[str] | None = None
    ) -> Any:
        return self.answer(
            16, version, ListGroupsRequest(states_filter=states or [], types_filter=types or [])
        )

    def delete_groups(self, *groups: str, version: int = 2) -> Any:
        return self.answer(42, version, DeleteGroupsRequest(groups_names=list(groups)))

    def delete_offsets(self, group: str, partitions: dict[str, list[int]]) -> Any:
        cls = OffsetDeleteRequest
        return self.answer(
            47,
            0,
            cls(
                group_id=group,
                topics=[
                    cls.OffsetDeleteRequestTopic(
                        name=t,
                        partitions=[
                            cls.OffsetDeleteRequestPartition(partition_index=p) for p in ps
                        ],
                    )
                    for t, ps in partitions.items()
                ],
            ),
        )

    # -- composite flows ----------------------------------------------------

    def stable_group(
        self, group: str, n: int = 2, *, topic: str = "t", static: bool = False
    ) -> list[str]:
        """n members joined and synced, partitions assigned round-robin; returns the member ids."""
        tokens = []
        for i in range(n):
            if static:
                tokens.append(self.join(group, instance=f"inst-{i}", client_id=f"c{i}"))
            else:
                tokens.append(self.join_dynamic(group, client_id=f"c{i}"))
        self.until_answered(tokens)
        joined = [self.responses[t] for t in tokens]
        assert all(r.error_code == 0 for r in joined), joined
        generation = joined[0].generation_id
        leader = joined[0].leader
        members = [r.member_id for r in joined]
        count = self.topics.partitions[topic]
        plan = {
            m: assignment({topic: [p for p in range(count) if p % n == i]})
            for i, m in enumerate(members)
        }
        sync_tokens = []
        for m in members:
            if m != leader:
                sync_tokens.append(self.sync(group, m, generation))
        sync_tokens.append(self.sync(group, leader, generation, assignments=plan))
        for t in sync_tokens:
            assert self.responses[t].error_code == 0, self.responses[t]
        assert self.gc.group_state(group) == "Stable"
        return members
