"""How a Fetch request uses its fetch session (KIP-227): what to read, and what to answer.

`fetch_context` reads the request's session id and epoch against the broker's cache
(`server/state/fetch_sessions.py`, Kafka's FetchManager.newContext) and gives the
Fetch handler one of four contexts, each with the same two steps: `topics` (the
partitions to read, shaped as the request's) and `answer` (the response built from
them, finished for this kind of fetch, at the time it is sent):

- `SESSIONLESS`: epoch -1 (and every version before 7): the request's partitions, the
  answer as built, session id 0. This is the plain path and costs one test.
- `Full`: epoch 0 opens a session over the partitions answered (when the cache has
  room) and tells its id; either full epoch first closes the session it names.
- `Incremental`: the session's partitions, updated by the request; the answer leaves
  out those with nothing new. Partitions that cannot have anything new (no records to
  read, watermarks as last told, no error) are not read at all, so an idle session
  costs little more than its request.
- `Refused`: a session error, answered at once with no partitions.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, NamedTuple

from kcsim.protocol.codecs import response_class
from kcsim.protocol.errors import ErrorCode

from ..state.fetch_sessions import FINAL_EPOCH, INITIAL_EPOCH, SessionPartition, next_epoch

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..state.fetch_sessions import FetchSession, FetchSessionCache, PartitionKey

FetchResponse = response_class(1)
READ_COMMITTED = 1
_NO_ID = uuid.UUID(int=0)


def _refusal(error: int, session_id: int = 0) -> Any:
    return FetchResponse(throttle_time_ms=0, error_code=error, session_id=session_id,
                         responses=[])


class Sessionless:
    """A fetch without a session: read and answer what the request names."""

    refusal = None

    def topics(self, broker: Any, request: Any) -> list[Any]:
        return request.topics  # type: ignore[no-any-return]

    def answer(self, response: Any, now_ms: int) -> Any:
        return response


SESSIONLESS = Sessionless()


class Refused(Sessionless):
    """A session error: the answer, with no partitions (Kafka's SessionErrorContext)."""

    def __init__(self, error: int) -> None:
        self.refusal = _refusal(error)


class Full(Sessionless):
    """A full fetch that asks for a session: answered whole, then cached if there is room."""

    def __init__(self, cache: FetchSessionCache, request: Any, by_id: bool) -> None:
        self.cache = cache
        self.request = request
        self.by_id = by_id

    def answer(self, response: Any, now_ms: int) -> Any:
        request, by_id = self.request, self.by_id
        partitions: dict[PartitionKey, SessionPartition] = {}
        for (key, p) in _asked(request, by_id):
            partitions[key] = SessionPartition(p.partition, p.fetch_offset,
                                               p.partition_max_bytes, p.current_leader_epoch,
                                               p.log_start_offset)
        for t in response.responses:
            key = t.topic_id if by_id else t.topic
            for p in t.partitions:
                cached = partitions.get((key, p.partition_index))
                if cached is not None:
                    cached.told(p.high_watermark, p.log_start_offset, p.error_code)
        privileged = max(request.replica_id, request.replica_state.replica_id) >= 0
        session = self.cache.create(now_ms, privileged, by_id, partitions)
        if session is not None:
            response.session_id = session.id
        return response


class SessionTopic(NamedTuple):
    """A run of a session's partitions of one topic, read as a request's topic is."""

    topic: str
    topic_id: uuid.UUID
    partitions: list[SessionPartition]


class Incremental(Sessionless):
    """A fetch in a session: read its partitions that may have news, answer only news."""

    def __init__(self, session: FetchSession, by_id: bool, committed: bool) -> None:
        self.session = session
        self.by_id = by_id
        self.committed = committed
        self.epoch = session.epoch  # what the session expects next, once this is answered

    def topics(self, broker: Any, request: Any) -> list[Any]:
        """The session's partitions in order, in runs by topic, leaving out those that
        would be read for nothing: in range, nothing to read, watermarks as told."""
        find = broker.topics.by_id.get if self.by_id else broker.topics.get
        committed = self.committed
        runs: list[SessionTopic] = []
        key_now: Any = None
        topic: Any = None
        run: list[SessionPartition] = []
        for (key, index), p in self.session.partitions.items():
            if key != key_now:
                key_now, topic, run = key, find(key), []
                if isinstance(key, uuid.UUID):
                    runs.append(SessionTopic("", key, run))
                else:
                    runs.append(SessionTopic(key, _NO_ID, run))
            if topic is not None and 0 <= index < len(topic.partitions):
                part = topic.partitions[index]
                hw = part.log_end_offset
                upto = part.last_stable_offset if committed else hw
                if (p.high_watermark == hw and p.told_log_start == part.log_start_offset
                        and upto <= p.fetch_offset <= hw
                        and p.fetch_offset >= part.log_start_offset):
                    continue
            run.append(p)
        return [r for r in runs if r.partitions]

    def answer(self, response: Any, now_ms: int) -> Any:
        """Leave out partitions with nothing new (remembering what the rest tell); those
        that returned records go to the back of the session."""
        session = self.session
        if session.epoch != self.epoch:  # another request of the session was served since
            return _refusal(ErrorCode.INVALID_FETCH_SESSION_EPOCH, session.id)
        partitions = session.partitions
        by_id = self.by_id
        kept: list[Any] = []
        read: list[PartitionKey] = []
        for t in response.responses:
            key = t.topic_id if by_id else t.topic
            told = []
            for p in t.partitions:
                cached = partitions.get((key, p.partition_index))
                if cached is None or cached.must_answer(
                        bool(p.records), p.high_watermark, p.log_start_offset, p.error_code,
                        p.preferred_read_replica):
                    told.append(p)
                    if p.records:
                        read.append((key, p.partition_index))
            if not told:
                continue
            if kept and (kept[-1].topic_id if by_id else kept[-1].topic) == key:
                kept[-1].partitions.extend(told)  # runs the answer left apart meet again
            else:
                t.partitions = told
                kept.append(t)
        for key in read:
            session.to_back(key)
        response.responses = kept
        response.session_id = session.id
        return response


def _asked(request: Any, by_id: bool) -> Iterator[tuple[PartitionKey, Any]]:
    for t in request.topics:
        key = t.topic_id if by_id else t.topic
        for p in t.partitions:
            yield (key, p.partition), p


def _forgotten(request: Any, by_id: bool) -> Iterator[PartitionKey]:
    for t in request.forgotten_topics_data:
        key = t.topic_id if by_id else t.topic
        for index in t.partitions:
            yield key, index


def fetch_context(cache: FetchSessionCache, request: Any, by_id: bool,
                  now_ms: int) -> Sessionless:
    """The context of one Fetch request; an incremental one updates its session now."""
    session_id, epoch = request.session_id, request.session_epoch
    if epoch in (FINAL_EPOCH, INITIAL_EPOCH):
        if session_id:  # a full fetch closes the session it names
            cache.remove(session_id)
        return SESSIONLESS if epoch == FINAL_EPOCH else Full(cache, request, by_id)
    session = cache.get(session_id)
    if session is None:
        return Refused(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
    if session.epoch != epoch:
        return Refused(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
    if session.by_topic_id != by_id:
        return Refused(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
    session.update(_asked(request, by_id), _forgotten(request, by_id))
    if not session.partitions:  # nothing left to fetch: the session closes
        session.shard.remove(session.id)
        return SESSIONLESS
    session.shard.touch(session, now_ms)
    session.epoch = next_epoch(session.epoch)
    return Incremental(session, by_id, request.isolation_level == READ_COMMITTED)
