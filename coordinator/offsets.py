"""OffsetCommit, OffsetFetch, OffsetDelete and offset retention for classic and consumer groups.

Topic checks happen first, as in Kafka's KafkaApis (unknown topics and
partitions answer per partition and never reach the group); the group-level
rules follow Kafka's ClassicGroup/ConsumerGroup.validateOffsetCommit (member
epochs from v9) and OffsetMetadataManager. KIP-1249: an admin commit to a
running group is accepted for the partitions the group has paused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, Protocol, TypeVar
from uuid import UUID

from kcsim.coordinator.records import OffsetCommitKey, OffsetCommitValue
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitResponse
from kcsim.protocol.messages.offset_delete import OffsetDeleteResponse
from kcsim.protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchResponse
from kcsim.storage.records import Record

from .groups.membership import validate_member
from .groups.state import RULES, Request, Rule, rule
from .shared import emit
from .shared.paused import paused_by_name
from .shared.record_helpers import offset_record
from .shared.removal import remove_group
from .streams.commits import commit_error

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from kcsim.protocol.messages.offset_delete import OffsetDeleteRequest

    from .consumer.model import ConsumerGroup
    from .groups.classic import ClassicGroup
    from .groups.rebalance import Rebalancer
    from .shared.interface import RequestContext
    from .shared.runtime import GroupRuntime

E = ErrorCode

CommitTopic = OffsetCommitResponse.OffsetCommitResponseTopic
CommitPartition = OffsetCommitResponse.OffsetCommitResponsePartition
RequestPartition = OffsetCommitRequest.OffsetCommitRequestPartition
FetchGroup = OffsetFetchRequest.OffsetFetchRequestGroup
FetchedTopics = OffsetFetchRequest.OffsetFetchRequestTopics  # v8+, with topic ids from v10
DeleteTopic = OffsetDeleteResponse.OffsetDeleteResponseTopic
DeletePartition = OffsetDeleteResponse.OffsetDeleteResponsePartition

INVALID_OFFSET = -1
NONE = int(E.NONE)
UNKNOWN_TOPIC_ID = int(E.UNKNOWN_TOPIC_ID)
UNKNOWN_TOPIC_OR_PARTITION = int(E.UNKNOWN_TOPIC_OR_PARTITION)
OFFSET_METADATA_TOO_LARGE = int(E.OFFSET_METADATA_TOO_LARGE)
# The commit's rules bound once: reading an Enum member is a slow look-up, every commit.
_ON_COMMIT, _ON_OUTSIDE_COMMIT = RULES[Request.COMMIT], RULES[Request.OUTSIDE_COMMIT]
_COMMIT_ALIVE, _COMMIT, _REBALANCING, _UNAVAILABLE = (
    Rule.COMMIT_ALIVE, Rule.COMMIT, Rule.REBALANCING, Rule.UNAVAILABLE)


_K = TypeVar("_K")  # what names a topic: its name or its id
_T = TypeVar("_T")  # a response's topic entry
_P = TypeVar("_P")  # a response's partition entry
_P_co = TypeVar("_P_co", covariant=True)


class _TopicResponses(Generic[_K, _T, _P]):
    """Per-topic response entries in first-seen order, merged as Kafka's response builders do.

    `make_topic` builds a topic's entry around the list its partitions are added to."""

    __slots__ = ("by_key", "make_topic", "order")

    def __init__(self, make_topic: Callable[[_K, list[_P]], _T]) -> None:
        self.order: list[_T] = []
        self.by_key: dict[_K, list[_P]] = {}
        self.make_topic = make_topic

    def add(self, key: _K, partition: _P) -> None:
        partitions = self.by_key.get(key)
        if partitions is None:
            partitions = self.by_key[key] = []
            self.order.append(self.make_topic(key, partitions))
        partitions.append(partition)


_CommitAnswers = _TopicResponses["str | UUID", CommitTopic, CommitPartition]


class _FetchedPartition(Protocol[_P_co]):
    """The partition class of an OffsetFetch response (its two shapes have the same fields)."""

    def __call__(self, *, partition_index: int, committed_offset: int,
                 committed_leader_epoch: int, metadata: str | None, error_code: int) -> _P_co: ...


def _all_below(partitions: list[RequestPartition], count: int) -> bool:
    """Whether every partition index is in 0..count-1 (a plain loop: the hot path)."""
    for p in partitions:  # noqa: SIM110 (all() over a generator costs twice as much)
        if not 0 <= p.partition_index < count:
            return False
    return True


def _commit_topic(key: str | UUID, partitions: list[CommitPartition]) -> CommitTopic:
    if isinstance(key, UUID):  # v10+ names topics by id
        return CommitTopic(topic_id=key, partitions=partitions)
    return CommitTopic(name=key, partitions=partitions)


def _reject(
    rejected: _CommitAnswers | None, key: str | UUID, partitions: list[RequestPartition],
    error: int,
) -> _CommitAnswers:
    """Answer partitions the broker refuses before the group sees them."""
    if rejected is None:
        rejected = _TopicResponses(_commit_topic)
    for p in partitions:
        rejected.add(key, CommitPartition(partition_index=p.partition_index, error_code=error))
    return rejected


def _merge(
    rejected: _CommitAnswers | None,
    answered: list[tuple[str | UUID, list[CommitPartition]]],
) -> list[CommitTopic]:
    """Refused topics first, then the group's answers, merged per topic as Kafka does."""
    if rejected is None:
        return [_commit_topic(key, parts) for key, parts in answered]
    for key, parts in answered:
        for part in parts:
            rejected.add(key, part)
    return rejected.order


class OffsetHandlers:
    def __init__(self, runtime: GroupRuntime, rebalancer: Rebalancer) -> None:
        self.rt = runtime
        self.rb = rebalancer
        self.summary = emit.CommitSummary()
        self.committed = 0  # partitions' offsets OffsetCommit wrote (Kafka's offset-commit-count)

    # -- OffsetCommit -------------------------------------------------------

    def commit(
        self, version: int, request: OffsetCommitRequest, ctx: RequestContext
    ) -> OffsetCommitResponse:
        topics = self.rt.topics
        use_ids = version >= 10
        rejected: _CommitAnswers | None = None
        valid: list[tuple[str | UUID, str, list[RequestPartition]]] = []
        for topic in request.topics:
            key: str | UUID
            partitions = topic.partitions
            if use_ids:
                key = topic.topic_id
                found = topics.topic_name(key)
                if found is None:
                    rejected = _reject(rejected, key, partitions, UNKNOWN_TOPIC_ID)
                    continue
                name = found
            else:
                key = name = topic.name
            count = topics.partition_count(name)
            if count is None:
                rejected = _reject(rejected, key, partitions, UNKNOWN_TOPIC_OR_PARTITION)
                continue
            if not _all_below(partitions, count):
                bad = [p for p in partitions if not 0 <= p.partition_index < count]
                rejected = _reject(rejected, key, bad, UNKNOWN_TOPIC_OR_PARTITION)
                partitions = [p for p in partitions if 0 <= p.partition_index < count]
            if partitions:
                valid.append((key, name, partitions))
        if not valid:
            return OffsetCommitResponse(topics=rejected.order if rejected is not None else [])

        error = self._validate_commit(version, request)
        refused = None
        if error == E.UNKNOWN_MEMBER_ID and _is_admin_commit(version, request):
            # KIP-1249: an admin may reset the offsets of paused partitions of a running group.
            paused = paused_by_name(self.rt.paused, self.rt.topics, request.group_id)
            if paused:
                error = E.NONE
                refused = paused
        if error:
            answered = [
                (
                    key,
                    [
                        CommitPartition(partition_index=p.partition_index, error_code=error)
                        for p in partitions
                    ],
                )
                for key, _, partitions in valid
            ]
            return OffsetCommitResponse(topics=_merge(rejected, answered))

        group_id = request.group_id
        group = self.rt.groups.get(group_id)
        if (
            group is not None
            and request.member_id in group.members
            and _ON_COMMIT[group.state] is _COMMIT_ALIVE
        ):
            # Commits keep a classic member's session alive.
            self.rb.reschedule_heartbeat(group, group.members[request.member_id])
        now = self.rt.now
        max_metadata = self.rt.config.offset_metadata_max_bytes
        retention = request.retention_time_ms if 2 <= version <= 4 else -1
        expire = now + retention if retention != -1 else -1
        explicit_timestamps = version == 1
        with_epoch = version >= 6
        committed = _COMMITTED
        answered = []
        events = self.rt.config.events
        # KIP-1249: an admin resetting paused partitions of a running group (else: commits).
        reset: list[Record] | None = [] if events and refused is not None else None
        written = 0
        for key, name, partitions in valid:
            parts: list[CommitPartition] = []
            append = parts.append
            run: list[Record] = []
            queue = run.append
            not_paused = None if refused is None else refused.get(name, frozenset())
            for p in partitions:
                index = p.partition_index
                if not_paused is not None and index not in not_paused:
                    append(CommitPartition(partition_index=index, error_code=E.UNKNOWN_MEMBER_ID))
                    continue
                metadata = p.committed_metadata
                if metadata is None:
                    metadata = ""
                elif len(metadata) > max_metadata:
                    append(CommitPartition(partition_index=index,
                                           error_code=OFFSET_METADATA_TOO_LARGE))
                    continue
                commit_ts = now
                if explicit_timestamps and p.commit_timestamp != -1:
                    commit_ts = p.commit_timestamp
                value = OffsetCommitValue(
                    p.committed_offset,
                    p.committed_leader_epoch if with_epoch else -1,
                    metadata,
                    commit_ts,
                    expire,
                )
                queue(Record(OffsetCommitKey(group_id, name, index), value))
                answer = committed.get(index)
                append(answer if answer is not None else _committed(index))
            if run:
                self.rt.write_commits(run)
                written += len(run)
                if reset is not None:
                    reset += run
            answered.append((key, parts))
        self.committed += written
        if events and written:
            if reset is None:
                counts = self.summary.counts.get(group_id)
                if counts is not None and now < counts[2]:  # `note`, inline: not due yet
                    counts[0] += 1
                    counts[1] += written
                else:
                    self.summary.note(self.rt, group_id, written)
            else:
                self._reset_event(group_id, reset)
        return OffsetCommitResponse(topics=_merge(rejected, answered))

    def _reset_event(self, group_id: str, records: list[Record]) -> None:
        """An admin set the group's offsets (a reset, as AlterConsumerGroupOffsets does)."""
        keys: list[OffsetCommitKey] = [r.key for r in records]
        emit.event(self.rt, group_id, emit.group_type(self.rt, group_id), "offsets-reset",
                   "request", "", {
                       "partitions": [f"{k.topic}-{k.partition}" for k in keys],
                       "offsets": [str(v.offset) for r in records if (v := r.value) is not None]})

    def _validate_commit(self, version: int, request: OffsetCommitRequest) -> int:
        """Kafka's ClassicGroup.validateOffsetCommit; a manual commit to an unknown id makes a
        simple group (the fold creates it with the first offset)."""
        generation = request.generation_id_or_member_epoch if version >= 1 else -1
        member_id = request.member_id if version >= 1 else ""
        instance_id = request.group_instance_id if version >= 7 else None
        consumer_group = self.rt.consumer_groups.get(request.group_id)
        if consumer_group is not None:
            return validate_consumer_commit(consumer_group, version, member_id, generation)
        group = self.rt.groups.get(request.group_id)
        if group is None:
            streams_group = (self.rt.streams_groups.get(request.group_id)
                             if self.rt.streams_groups else None)
            if streams_group is not None:
                return commit_error(streams_group, member_id, generation, version)
            if generation >= 0:
                return E.GROUP_ID_NOT_FOUND if version >= 9 else E.ILLEGAL_GENERATION
            return E.NONE
        outside = _ON_OUTSIDE_COMMIT[group.state]
        if outside is _UNAVAILABLE:
            return E.COORDINATOR_NOT_AVAILABLE
        if generation < 0 and outside is _COMMIT:
            return E.NONE  # an Empty group takes any commit without a generation
        if generation >= 0 or member_id or instance_id is not None:
            error = validate_member(group, member_id, instance_id)
            if error:
                return error
            if generation != group.generation:
                return E.ILLEGAL_GENERATION
            if _ON_COMMIT[group.state] is _REBALANCING:
                return E.REBALANCE_IN_PROGRESS
            return E.NONE
        # MEMBERS_ONLY: a commit without member id and generation only works while nobody
        # is in the group.
        return E.UNKNOWN_MEMBER_ID

    # -- OffsetFetch --------------------------------------------------------

    def fetch(
        self, version: int, request: OffsetFetchRequest, ctx: RequestContext
    ) -> OffsetFetchResponse:
        R = OffsetFetchResponse
        if version >= 8:
            group_cls = R.OffsetFetchResponseGroup
            fetch_group = self._fetch_group
            answered = []
            for g in request.groups:
                error = self._validate_fetch(g) if version >= 9 else E.NONE
                if error:
                    answered.append(group_cls(group_id=g.group_id, topics=[], error_code=error))
                    continue
                topics = fetch_group(version, g.group_id, g.topics, _topics_v8,
                                     R.OffsetFetchResponsePartitions)
                if request.require_stable:
                    self._mark_unstable(version, g.group_id, topics)
                answered.append(group_cls(group_id=g.group_id, topics=topics))
            return R(groups=answered)
        requested = request.topics
        if requested is None and version < 2:
            requested = []
        answer = self._fetch_group(version, request.group_id, requested, _topic_v0,
                                   R.OffsetFetchResponsePartition)
        if version >= 7 and request.require_stable:
            self._mark_unstable(version, request.group_id, answer)
        return R(topics=answer, error_code=E.NONE)

    def _mark_unstable(
        self,
        version: int,
        group_id: str,
        topics: list[OffsetFetchResponse.OffsetFetchResponseTopic]
        | list[OffsetFetchResponse.OffsetFetchResponseTopics],
    ) -> None:
        """RequireStable (KIP-447): a partition with an offset pending in an open
        transaction is answered UNSTABLE_OFFSET_COMMIT, so the consumer retries."""
        pending = self.rt.pending
        if not pending.has_group(group_id):
            return
        for topic in topics:
            name = (self.rt.topics.topic_name(topic.topic_id)
                    if isinstance(topic, OffsetFetchResponse.OffsetFetchResponseTopics)
                    and version >= 10 else topic.name)
            if name is None:
                continue
            for p in topic.partitions:
                if pending.is_pending(group_id, name, p.partition_index):
                    p.committed_offset = INVALID_OFFSET
                    p.error_code = E.UNSTABLE_OFFSET_COMMIT

    def _fetch_group(
        self,
        version: int,
        group_id: str,
        requested: Sequence[OffsetFetchRequest.OffsetFetchRequestTopic | FetchedTopics] | None,
        topic_cls: Callable[[str, UUID | None, list[_P]], _T],
        partition_cls: _FetchedPartition[_P],
    ) -> list[_T]:
        """One group's offsets. Unknown groups have no offsets and no error, as in Kafka."""
        offsets = None
        if self.rt.group_exists(group_id):
            offsets = self.rt.offsets.group(group_id)
        use_ids = version >= 10
        lookup = self.rt.topics
        result: list[_T] = []
        if requested is None:
            if not offsets:
                return result
            for topic, partitions in offsets.items():
                parts = [
                    partition_cls(
                        partition_index=p,
                        committed_offset=v.offset,
                        committed_leader_epoch=v.leader_epoch,
                        metadata=v.metadata,
                        error_code=0,
                    )
                    for p, v in partitions.items()
                ]
                if use_ids:
                    topic_id = lookup.topic_id(topic)
                    if topic_id is None:
                        continue
                    result.append(topic_cls("", topic_id, parts))
                else:
                    result.append(topic_cls(topic, None, parts))
            return result
        for t in requested:
            topic_id = None
            if use_ids:
                assert isinstance(t, FetchedTopics)  # v10 is a v8+ request
                topic_id = t.topic_id
                name = lookup.topic_name(topic_id)
                if name is None:
                    result.append(
                        topic_cls(
                            "",
                            topic_id,
                            [
                                partition_cls(
                                    partition_index=p,
                                    committed_offset=INVALID_OFFSET,
                                    committed_leader_epoch=-1,
                                    metadata="",
                                    error_code=E.UNKNOWN_TOPIC_ID,
                                )
                                for p in t.partition_indexes
                            ],
                        )
                    )
                    continue
            else:
                name = t.name
            committed = offsets.get(name) if offsets else None
            parts = []
            for p in t.partition_indexes:
                v = committed.get(p) if committed else None
                if v is None:
                    parts.append(
                        partition_cls(
                            partition_index=p,
                            committed_offset=INVALID_OFFSET,
                            committed_leader_epoch=-1,
                            metadata="",
                            error_code=0,
                        )
                    )
                else:
                    parts.append(
                        partition_cls(
                            partition_index=p,
                            committed_offset=v.offset,
                            committed_leader_epoch=v.leader_epoch,
                            metadata=v.metadata,
                            error_code=0,
                        )
                    )
            result.append(topic_cls("" if use_ids else name, topic_id, parts))
        return result

    # -- OffsetDelete -------------------------------------------------------

    def delete(
        self, version: int, request: OffsetDeleteRequest, ctx: RequestContext
    ) -> OffsetDeleteResponse:
        group_id = request.group_id
        if not group_id:
            return OffsetDeleteResponse(error_code=E.INVALID_GROUP_ID)
        out: _TopicResponses[str, DeleteTopic, DeletePartition] = _TopicResponses(
            lambda name, partitions: DeleteTopic(name=name, partitions=partitions))
        lookup = self.rt.topics
        valid = []
        for topic in request.topics:
            count = lookup.partition_count(topic.name)
            good = []
            for p in topic.partitions:
                if count is not None and 0 <= p.partition_index < count:
                    good.append(p.partition_index)
                else:
                    out.add(
                        topic.name,
                        DeletePartition(
                            partition_index=p.partition_index,
                            error_code=E.UNKNOWN_TOPIC_OR_PARTITION,
                        ),
                    )
            if good:
                valid.append((topic.name, good))

        consumer_group = self.rt.consumer_groups.get(group_id)
        streams_group = self.rt.streams_groups.get(group_id) if self.rt.streams_groups else None
        group = self.rt.groups.get(group_id)
        subscribed: Callable[[str], bool]
        if consumer_group is not None:
            subscribed = consumer_group.subscribed_topics().__contains__
        elif streams_group is not None:
            subscribed = streams_group.source_topics().__contains__
        else:
            does = Rule.NOT_FOUND if group is None else rule(Request.OFFSET_DELETE, group.state)
            if does is Rule.NOT_FOUND:
                return OffsetDeleteResponse(error_code=E.GROUP_ID_NOT_FOUND)
            assert group is not None
            if does is Rule.DELETE_UNSUBSCRIBED and not group.uses_consumer_protocol():
                return OffsetDeleteResponse(error_code=E.NON_EMPTY_GROUP)
            subscribed = group.is_subscribed_to_topic
        gone: list[tuple[str, int]] = []
        for name, partitions in valid:
            if subscribed(name):
                for index in partitions:
                    out.add(name, DeletePartition(partition_index=index,
                                                  error_code=E.GROUP_SUBSCRIBED_TO_TOPIC))
                continue
            deleted = set()
            for index in partitions:
                out.add(name, DeletePartition(partition_index=index, error_code=E.NONE))
                if index not in deleted and self.rt.offsets.get(group_id, name, index) is not None:
                    deleted.add(index)
                    self.rt.write(offset_record(group_id, name, index, None))
            gone.extend((name, index) for index in deleted)
        if gone:
            emit.event(self.rt, group_id, emit.group_type(self.rt, group_id), "offsets-deleted",
                       "request", "", {"partitions": emit.partitions(gone)})
        return OffsetDeleteResponse(error_code=E.NONE, topics=out.order)

    # -- retention (KIP-211) --------------------------------------------------

    def expire_offsets(self) -> None:
        """Kafka's cleanupGroupMetadata: drop expired offsets, then Empty groups left with none."""
        rt = self.rt
        for group_id, group in rt.groups.items():
            if group_id in rt.failed:
                continue
            expired, all_expired = self._expired_offsets(
                group_id, expiration_base(group), group.is_subscribed_to_topic)
            if all_expired and rule(Request.DELETE, group.state) is Rule.DELETE_GROUP:
                self._expire_group(group_id, expired)
            else:
                self._delete_offsets(group_id, expired)
        for group_id, consumer_group in rt.consumer_groups.items():
            if group_id in rt.failed:
                continue
            subscribed = consumer_group.subscribed_topics()
            expired, all_expired = self._expired_offsets(group_id, _commit_time,
                                                         subscribed.__contains__)
            if all_expired and not consumer_group.members:
                self._expire_group(group_id, expired)
            else:
                self._delete_offsets(group_id, expired)
        for group_id, streams_group in rt.streams_groups.items():
            if group_id in rt.failed:
                continue
            expired, all_expired = self._expired_offsets(
                group_id, _commit_time, streams_group.source_topics().__contains__)
            if all_expired and not streams_group.members:
                self._expire_group(group_id, expired)
            else:
                self._delete_offsets(group_id, expired)

    def _expire_group(self, group_id: str, expired: list[tuple[str, int]]) -> None:
        """Retention: the group's last offsets expired, and the group goes with them."""
        if expired:
            emit.event(self.rt, group_id, emit.group_type(self.rt, group_id), "offsets-expired",
                       "retention", "", {"partitions": emit.partitions(expired)})
        remove_group(self.rt, group_id, "retention")

    def _delete_offsets(self, group_id: str, partitions: list[tuple[str, int]]) -> None:
        """Retention: the expired offsets go (then, when they were all, the group may)."""
        if partitions:
            emit.event(self.rt, group_id, emit.group_type(self.rt, group_id), "offsets-expired",
                       "retention", "", {"partitions": emit.partitions(partitions)})
        for topic, partition in partitions:
            self.rt.write(offset_record(group_id, topic, partition, None))

    def _validate_fetch(self, request_group: FetchGroup) -> int:
        """Kafka's ConsumerGroup/StreamsGroup.validateOffsetFetch (v9+); classic groups
        check nothing."""
        group_id = request_group.group_id
        consumer_group = self.rt.consumer_groups.get(group_id)
        streams = self.rt.streams_groups
        streams_group = streams.get(group_id) if streams and consumer_group is None else None
        if consumer_group is None and streams_group is None:
            return E.NONE
        member_id, epoch = request_group.member_id, request_group.member_epoch
        if member_id is None and epoch < 0:
            return E.NONE
        member = None if member_id is None else (
            consumer_group.members.get(member_id) if consumer_group is not None
            else streams_group.members.get(member_id) if streams_group is not None else None)
        if member is None:
            return E.UNKNOWN_MEMBER_ID
        if epoch != member.member_epoch:
            return E.STALE_MEMBER_EPOCH
        return E.NONE

    def _expired_offsets(
        self,
        group_id: str,
        base: Callable[[OffsetCommitValue], int] | None,
        is_subscribed: Callable[[str], bool],
    ) -> tuple[list[tuple[str, int]], bool]:
        """The group's expired offsets, and whether that is all of them."""
        offsets = self.rt.offsets.group(group_id)
        pending = self.rt.pending
        waiting = pending.has_group(group_id)  # offsets of open transactions keep the group
        if offsets is None:
            return [], not waiting
        if base is None:
            return [], False
        now = self.rt.now
        retention = self.rt.config.offsets_retention_ms
        all_expired = True
        expired = []
        for topic, partitions in offsets.items():
            if is_subscribed(topic):
                all_expired = False
                continue
            for partition, value in partitions.items():
                if waiting and pending.is_pending(group_id, topic, partition):
                    all_expired = False  # Kafka waits for the transaction to end
                elif is_expired(value, now, retention, base):
                    expired.append((topic, partition))
                else:
                    all_expired = False
        return expired, all_expired and not waiting


def validate_consumer_commit(
    group: ConsumerGroup, version: int, member_id: str, epoch: int
) -> int:
    """Kafka's ConsumerGroup.validateOffsetCommit: members commit with their current epoch."""
    if epoch < 0 and not group.members:
        return E.NONE
    member = group.members.get(member_id)
    if member is None:
        return E.UNKNOWN_MEMBER_ID
    if version < 9:
        # Members of KIP-848 groups must commit with OffsetCommit v9+.
        return E.UNSUPPORTED_VERSION
    if epoch != member.member_epoch:
        return E.STALE_MEMBER_EPOCH
    return E.NONE


def _is_admin_commit(version: int, request: OffsetCommitRequest) -> bool:
    """No member id and no generation: a commit from outside the group (an admin tool)."""
    generation = request.generation_id_or_member_epoch if version >= 1 else -1
    member_id = request.member_id if version >= 1 else ""
    instance_id = request.group_instance_id if version >= 7 else None
    return generation < 0 and not member_id and instance_id is None


def expiration_base(group: ClassicGroup) -> Callable[[OffsetCommitValue], int] | None:
    """What retention counts from (Kafka's offsetExpirationCondition); None: never expires."""
    if not group.protocol_type:
        return _commit_time  # a simple group: offsets expire counting from their commit
    does = rule(Request.RETENTION, group.state)
    if does is Rule.EXPIRE_SINCE_EMPTY:
        since_empty = group.state_timestamp
        if since_empty is not None:
            return lambda value: since_empty
        return _commit_time
    if (
        does is Rule.EXPIRE_UNSUBSCRIBED
        and group.uses_consumer_protocol()
        and group.subscribed_topics is not None
    ):
        return _commit_time
    return None


def _commit_time(value: OffsetCommitValue) -> int:
    return value.commit_timestamp


def is_expired(
    value: OffsetCommitValue,
    now_ms: int,
    retention_ms: int,
    base: Callable[[OffsetCommitValue], int],
) -> bool:
    if value.expire_timestamp != -1:
        return now_ms >= value.expire_timestamp
    return now_ms - base(value) >= retention_ms


def _topic_v0(
    name: str, topic_id: UUID | None, partitions: list[OffsetFetchResponse.OffsetFetchResponsePartition]
) -> OffsetFetchResponse.OffsetFetchResponseTopic:
    """An OffsetFetch topic before v8 (named, never by id)."""
    return OffsetFetchResponse.OffsetFetchResponseTopic(name=name, partitions=partitions)


def _topics_v8(
    name: str, topic_id: UUID | None, partitions: list[OffsetFetchResponse.OffsetFetchResponsePartitions]
) -> OffsetFetchResponse.OffsetFetchResponseTopics:
    """An OffsetFetch topic of v8+: by id from v10."""
    if topic_id is not None:
        return OffsetFetchResponse.OffsetFetchResponseTopics(topic_id=topic_id, partitions=partitions)
    return OffsetFetchResponse.OffsetFetchResponseTopics(name=name, partitions=partitions)


_COMMITTED: dict[int, CommitPartition] = {}


def _committed(index: int) -> CommitPartition:
    """The (shared, never mutated) answer for a partition whose commit was accepted."""
    answer = _COMMITTED.get(index)
    if answer is None:
        answer = CommitPartition(partition_index=index, error_code=NONE)
        if index < 4096:
            _COMMITTED[index] = answer
    return answer
