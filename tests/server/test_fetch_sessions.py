"""Fetch sessions (KIP-227), walked case by case against a served broker.

Every case opens a session over partitions 0 and 1 of a topic with one record in
partition 0 (a full fetch, epoch 0, at Fetch v12 unless it says otherwise), reads it
up to date, then sends one request and checks what Kafka's broker answers: the error,
which session the answer names (none, the same, a new one), the partitions it carries,
and whether the first session is still there afterwards (and at which epoch).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.protocol.codecs import codec
from kcsim.protocol.errors import ErrorCode as E

from .fuzz.batches import batch
from .fuzz.wire import Connection

if TYPE_CHECKING:
    from kcsim.server.embedded import EmbeddedServer

PRODUCE, FETCH, CREATE_TOPICS = 0, 1, 19
TOPIC = "sessions"
Fetch = codec(FETCH, "request").cls
Produce = codec(PRODUCE, "request").cls
CreateTopics = codec(CREATE_TOPICS, "request").cls

SAME, NEW, NONE = "same", "new", "none"
GONE = -1


@dataclass
class World:
    conn: Connection
    topic_id: uuid.UUID
    session: int = 0  # the session the case starts from
    epoch: int = 0  # the epoch it expects next
    offsets: dict[int, int] = field(default_factory=dict)  # the next offset to read

    def fetch(self, session_id: int, epoch: int, partitions: dict[int, int] | None = None,
              forget: tuple[int, ...] = (), version: int = 12, max_bytes: int = 1 << 20) -> Any:
        by_id = version >= 13
        topic = {"topic": "" if by_id else TOPIC, "topic_id": self.topic_id if by_id else uuid.UUID(int=0)}
        request = Fetch(
            replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=max_bytes, isolation_level=0,
            session_id=session_id, session_epoch=epoch, rack_id="",
            topics=[Fetch.FetchTopic(**topic, partitions=[
                Fetch.FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=max_bytes)
                for p, o in (partitions or {}).items()])] if partitions else [],
            forgotten_topics_data=[Fetch.ForgottenTopic(**topic, partitions=list(forget))]
            if forget else [])
        response, _ = self.conn.call(FETCH, version, request)
        return response

    def produce(self, partition: int) -> None:
        response, _ = self.conn.call(PRODUCE, 9, Produce(
            transactional_id=None, acks=-1, timeout_ms=5000, topic_data=[
                Produce.TopicProduceData(name=TOPIC, partition_data=[
                    Produce.PartitionProduceData(index=partition, records=batch([b"v"]))])]))
        assert response.responses[0].partition_responses[0].error_code == 0

    def incremental(self, partitions: dict[int, int] | None = None, **kw: Any) -> Any:
        """The next incremental fetch of the case's session."""
        response = self.fetch(self.session, self.epoch, partitions, **kw)
        if response.error_code == 0 and response.session_id == self.session:
            self.epoch += 1
        return response


def answered(response: Any) -> list[tuple[int, int]]:
    """(partition, record batches' bytes > 0) of each partition the answer carries."""
    return [(p.partition_index, int(bool(p.records))) for t in response.responses
            for p in t.partitions]


@dataclass(frozen=True)
class Case:
    request: Any  # World -> response
    error: E
    session: str  # SAME / NEW / NONE: the session the answer names
    partitions: list[tuple[int, int]]  # (partition, carries records)
    then: int  # the epoch the first session expects afterwards, or GONE
    before: Any = None  # World -> None, run once the session is up to date


CASES: dict[str, Case] = {
    "incremental-with-nothing-new-answers-no-partition": Case(
        lambda w: w.incremental(), E.NONE, SAME, [], 3),
    "incremental-answers-only-the-partition-with-new-records": Case(
        lambda w: w.incremental(), E.NONE, SAME, [(1, 1)], 3, before=lambda w: w.produce(1)),
    "incremental-answers-a-partition-whose-offset-it-moves-back": Case(
        lambda w: w.incremental({0: 0}), E.NONE, SAME, [(0, 1)], 3),
    "incremental-adding-a-partition-answers-it-once": Case(
        lambda w: w.incremental({2: 0}), E.NONE, SAME, [(2, 0)], 3),
    "incremental-naming-an-unknown-partition-answers-its-error": Case(
        lambda w: w.incremental({9: 0}), E.UNKNOWN_TOPIC_OR_PARTITION, SAME, [(9, 0)], 3),
    "incremental-forgetting-one-partition-keeps-the-session": Case(
        lambda w: w.incremental(forget=(1,)), E.NONE, SAME, [], 3),
    "incremental-forgetting-every-partition-closes-the-session": Case(
        lambda w: w.incremental(forget=(0, 1)), E.NONE, NONE, [], GONE),
    "incremental-at-a-later-epoch-is-refused": Case(
        lambda w: w.fetch(w.session, w.epoch + 1), E.INVALID_FETCH_SESSION_EPOCH, NONE, [], 2),
    "incremental-at-a-used-epoch-is-refused": Case(
        lambda w: w.fetch(w.session, w.epoch - 1), E.INVALID_FETCH_SESSION_EPOCH, NONE, [], 2),
    "incremental-at-a-negative-epoch-is-refused": Case(
        lambda w: w.fetch(w.session, -2), E.INVALID_FETCH_SESSION_EPOCH, NONE, [], 2),
    "incremental-of-an-unknown-session-is-refused": Case(
        lambda w: w.fetch(w.session ^ 1, w.epoch), E.FETCH_SESSION_ID_NOT_FOUND, NONE, [], 2),
    "incremental-of-session-0-is-refused": Case(
        lambda w: w.fetch(0, 1), E.FETCH_SESSION_ID_NOT_FOUND, NONE, [], 2),
    "incremental-naming-topics-by-id-in-a-session-by-name-is-refused": Case(
        lambda w: w.fetch(w.session, w.epoch, version=13), E.FETCH_SESSION_TOPIC_ID_ERROR,
        NONE, [], 2),
    "sessionless-fetch-leaves-the-session-alone": Case(
        lambda w: w.fetch(0, -1, {0: 0, 1: 0}), E.NONE, NONE, [(0, 1), (1, 0)], 2),
    "full-fetch-opens-a-new-session": Case(
        lambda w: w.fetch(0, 0, {0: 0}), E.NONE, NEW, [(0, 1)], 2),
    "full-fetch-naming-the-session-closes-it-and-opens-another": Case(
        lambda w: w.fetch(w.session, 0, {0: 1}), E.NONE, NEW, [(0, 0)], GONE),
    "final-fetch-closes-the-session-and-opens-none": Case(
        lambda w: w.fetch(w.session, -1, {0: 1}), E.NONE, NONE, [(0, 0)], GONE),
    "final-fetch-of-an-unknown-session-is-sessionless": Case(
        lambda w: w.fetch(w.session ^ 1, -1, {0: 1}), E.NONE, NONE, [(0, 0)], 2),
}


@pytest.fixture
def world(kcsim: EmbeddedServer) -> Any:
    assert kcsim.port is not None
    with Connection(kcsim.port) as conn:
        created, _ = conn.call(CREATE_TOPICS, 7, CreateTopics(topics=[
            CreateTopics.CreatableTopic(name=TOPIC, num_partitions=3, replication_factor=1)],
            timeout_ms=5000))
        assert created.topics[0].error_code == 0
        w = World(conn, created.topics[0].topic_id)
        w.produce(0)
        opened = w.fetch(0, 0, {0: 0, 1: 0})
        assert (opened.error_code, answered(opened)) == (0, [(0, 1), (1, 0)])
        assert opened.session_id != 0
        w.session, w.epoch = opened.session_id, 1
        assert answered(w.incremental({0: 1})) == []  # up to date: nothing new to tell
        yield w


@pytest.mark.parametrize("name", list(CASES))
def test_session_rules(world: World, name: str) -> None:
    case = CASES[name]
    if case.before is not None:
        case.before(world)
    response = case.request(world)
    errors = {p.error_code for t in response.responses for p in t.partitions}
    assert E(response.error_code or max(errors, default=0)) is case.error
    named = {0: NONE, world.session: SAME}.get(response.session_id, NEW)
    assert named == case.session
    assert answered(response) == case.partitions
    follow = world.fetch(world.session, case.then if case.then != GONE else 3)
    if case.then == GONE:
        assert follow.error_code == E.FETCH_SESSION_ID_NOT_FOUND
    else:
        assert (follow.error_code, follow.session_id) == (0, world.session)


def test_a_partition_that_returned_records_is_read_last_next_time(world: World) -> None:
    """Partitions share the fetch's byte budget: the one just read goes to the back."""
    world.produce(0)
    world.produce(0)
    world.produce(1)
    first = world.incremental(max_bytes=1)  # room for one partition's batch only
    assert answered(first) == [(0, 1), (1, 0)]  # 1 is told its new high watermark
    second = world.incremental({0: 2}, max_bytes=1)
    assert answered(second) == [(1, 1)]  # 1 first: 0 has more, but was read last time


def test_a_session_named_by_topic_id_is_kept_by_id(world: World) -> None:
    opened = world.fetch(0, 0, {0: 1, 1: 0}, version=13)
    assert opened.session_id not in (0, world.session)
    world.produce(1)
    later = world.fetch(opened.session_id, 1, version=13)
    assert (later.error_code, answered(later)) == (0, [(1, 1)])
    assert later.responses[0].topic_id == world.topic_id
    by_name = world.fetch(opened.session_id, 2, version=12)
    assert by_name.error_code == E.FETCH_SESSION_TOPIC_ID_ERROR


def test_a_session_is_not_tied_to_its_connection(kcsim: EmbeddedServer, world: World) -> None:
    assert kcsim.port is not None
    world.produce(0)
    with Connection(kcsim.port) as other:
        world.conn = other
        moved = world.incremental()
    assert (moved.error_code, moved.session_id, answered(moved)) == (0, world.session, [(0, 1)])
