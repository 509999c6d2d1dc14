"""PausePartitions, ResumePartitions and ListPausedPartitions (KIP-1249).

A change is written as the group's whole paused set, then takes effect: a
consumer group gets a new group epoch and target assignment without the paused
partitions (members revoke them at their next heartbeat); a classic group of
the consumer protocol rebalances, and SyncGroup hands out assignments without
them (a kcsim extension, see `classic`); a streams group gets a new group epoch
and target without the tasks that read the paused partitions (`streams.pausing`).
Pausing a paused partition or resuming one that is not paused succeeds and
changes nothing. A streams group pauses only the topics its topology reads (its
source and repartition topics): any other topic is answered INVALID_REQUEST.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Protocol, TypeVar

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.pause_partitions import (
    ListPausedPartitionsResponse,
    PausePartitionsResponse,
    ResumePartitionsResponse,
)

from ..groups.state import Request, Rule, rule
from ..shared import emit
from ..shared.paused import PausedSet, paused_record
from ..streams.pausing import NOT_READ_MESSAGE, reads

if TYPE_CHECKING:
    from kcsim.protocol.messages.pause_partitions import (
        ListPausedPartitionsRequest,
        PausePartitionsRequest,
        ResumePartitionsRequest,
    )

    from ..consumer.groups import ConsumerGroups
    from ..groups.classic import ClassicGroup
    from ..groups.rebalance import Rebalancer
    from ..shared.interface import RequestContext
    from ..shared.runtime import GroupRuntime
    from ..streams.groups import StreamsGroups

E = ErrorCode
NO_TOPIC = uuid.UUID(int=0)
UNKNOWN_PARTITION_MESSAGE = E.UNKNOWN_TOPIC_OR_PARTITION.message

_P = TypeVar("_P")  # a response's partition entry
_T = TypeVar("_T")  # a response's topic entry
_P_co = TypeVar("_P_co", covariant=True)
_T_co = TypeVar("_T_co", covariant=True)
_R_co = TypeVar("_R_co", covariant=True)


# Pause and Resume answer in classes of the same shape: what `_change` builds them with.
class _Partition(Protocol[_P_co]):
    def __call__(self, *, partition_index: int, error_code: int,
                 error_message: str | None = ...) -> _P_co: ...


class _Topic(Protocol[_P, _T_co]):
    def __call__(self, *, topic_name: str, topic_id: uuid.UUID,
                 partitions: list[_P]) -> _T_co: ...


class _Response(Protocol[_T, _R_co]):
    def __call__(self, *, error_code: int, error_message: str | None = ...,
                 responses: list[_T]) -> _R_co: ...


class PauseHandlers:
    def __init__(
        self, runtime: GroupRuntime, consumer_groups: ConsumerGroups, rebalancer: Rebalancer,
        streams_groups: StreamsGroups,
    ) -> None:
        self.rt = runtime
        self.consumer = consumer_groups
        self.streams = streams_groups
        self.rb = rebalancer

    def pause(
        self, version: int, request: PausePartitionsRequest, ctx: RequestContext
    ) -> PausePartitionsResponse:
        R = PausePartitionsResponse
        return self._change(request, True, R, R.PausePartitionsResponseTopic,
                            R.PausePartitionsResponsePartition)

    def resume(
        self, version: int, request: ResumePartitionsRequest, ctx: RequestContext
    ) -> ResumePartitionsResponse:
        R = ResumePartitionsResponse
        return self._change(request, False, R, R.ResumePartitionsResponseTopic,
                            R.ResumePartitionsResponsePartition)

    def _change(
        self,
        request: PausePartitionsRequest | ResumePartitionsRequest,
        pausing: bool,
        response_cls: _Response[_T, _R_co],
        topic_cls: _Topic[_P, _T],
        partition_cls: _Partition[_P],
    ) -> _R_co:
        rt = self.rt
        gid = request.group_id
        if not rt.group_exists(gid):
            return response_cls(error_code=E.GROUP_ID_NOT_FOUND,
                                error_message=f"Group {gid} not found.", responses=[])
        paused: PausedSet = dict(rt.paused.get(gid))
        streams = rt.streams_groups.get(gid) if pausing else None
        changed: dict[str, list[int]] = {}  # the partitions whose pause changed, by topic
        answers: dict[str, list[_P]] = {}  # each topic's partitions, in the order first named
        topics: list[_T] = []
        for topic in request.topics:
            topic_id = rt.topics.topic_id(topic.name)
            count = rt.topics.partition_count(topic.name)
            answer = answers.get(topic.name)
            if answer is None:
                answer = answers[topic.name] = []
                topics.append(topic_cls(
                    topic_name=topic.name, topic_id=topic_id or NO_TOPIC, partitions=answer))
            for index in dict.fromkeys(p.partition_index for p in topic.partitions):
                if topic_id is None or count is None or not 0 <= index < count:
                    answer.append(partition_cls(
                        partition_index=index, error_code=E.UNKNOWN_TOPIC_OR_PARTITION,
                        error_message=UNKNOWN_PARTITION_MESSAGE))
                    continue
                if streams is not None and not reads(streams.topology, topic.name):
                    answer.append(partition_cls(
                        partition_index=index, error_code=E.INVALID_REQUEST,
                        error_message=NOT_READ_MESSAGE))
                    continue
                _, current = paused.get(topic_id, (topic.name, frozenset()))
                updated = current | {index} if pausing else current - {index}
                if updated != current:
                    changed.setdefault(topic.name, []).append(index)
                    paused[topic_id] = (topic.name, updated)
                answer.append(partition_cls(partition_index=index, error_code=E.NONE))
        if changed:
            rt.write(paused_record(gid, paused))
            if rt.config.events:
                kind = "partitions-paused" if pausing else "partitions-resumed"
                of_type = emit.group_type(rt, gid)
                for name, indexes in changed.items():
                    emit.event(rt, gid, of_type, kind, "request", "",
                               {"topic": name, "partitions": [str(i) for i in sorted(indexes)]})
            self.take_effect(gid, paused, pausing)
        return response_cls(error_code=E.NONE, responses=topics)

    def take_effect(self, group_id: str, paused: PausedSet, pausing: bool) -> None:
        """Re-assign the group without (or again with) the partitions whose pause changed
        (`paused`: the group's paused set as this call wrote it)."""
        cause = "partitions-paused" if pausing else "partitions-resumed"
        group = self.rt.consumer_groups.get(group_id)
        if group is not None:
            if group.members:
                self.consumer.reassign_now(group, paused, cause)
            return
        streams = self.rt.streams_groups.get(group_id)
        if streams is not None:
            if streams.members:
                self.streams.reassign_now(streams, paused, cause)
            return
        classic: ClassicGroup | None = self.rt.groups.get(group_id)
        if (classic is not None and classic.uses_consumer_protocol()
                and rule(Request.PAUSE, classic.state) is Rule.REBALANCE):
            self.rb.prepare_rebalance(classic, cause)

    def list_paused(
        self, version: int, request: ListPausedPartitionsRequest, ctx: RequestContext
    ) -> ListPausedPartitionsResponse:
        rt = self.rt
        gid = request.group_id
        if not rt.group_exists(gid):
            return ListPausedPartitionsResponse(error_code=E.GROUP_ID_NOT_FOUND,
                                      error_message=f"Group {gid} not found.", topics=[])
        topic_cls = ListPausedPartitionsResponse.ListPausedPartitionsTopic
        partition_cls = ListPausedPartitionsResponse.ListPausedPartitionsPartition
        listed = []
        for topic_id, (_, partitions) in rt.paused.get(gid).items():
            name = rt.topics.topic_name(topic_id)
            if name is None:
                continue  # the topic is gone: its pause no longer means anything
            parts = []
            for p in sorted(partitions):
                committed = rt.offsets.get(gid, name, p)
                parts.append(partition_cls(partition_index=p,
                                           offset=-1 if committed is None else committed.offset))
            listed.append(topic_cls(name=name, topic_id=topic_id, partitions=parts))
        listed.sort(key=lambda t: t.name)
        return ListPausedPartitionsResponse(error_code=E.NONE, topics=listed)

    # -- topics going away -----------------------------------------------------------

    def topic_deleted(self, topic_id: uuid.UUID) -> None:
        for group_id in sorted(self.rt.paused.groups_of_topic(topic_id)):
            paused = dict(self.rt.paused.get(group_id))
            paused.pop(topic_id, None)
            self.rt.write(paused_record(group_id, paused))

    def drop_missing_topics(self) -> None:
        """At start-up: forget pauses of topics deleted while the log was written."""
        topics = self.rt.topics
        for group_id, paused in list(self.rt.paused.by_group.items()):
            kept = {t: v for t, v in paused.items() if topics.topic_name(t) is not None}
            if len(kept) != len(paused):
                self.rt.write(paused_record(group_id, kept))
