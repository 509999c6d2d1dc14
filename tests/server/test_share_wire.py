"""Share groups over a real socket (KIP-932): members heartbeat into a share group and
share one partition, ShareFetch acquires records under a lock on the broker's clock,
acknowledgements accept, release and reject them, and share sessions keep their epochs.

Raw frames through kcsim's codec: each member does what the test says and nothing else.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode as E

from .durability.wire import Wire
from .fuzz.batches import batch

HEARTBEAT, DESCRIBE, FETCH, ACK, LIST_GROUPS, DELETE_GROUPS, METADATA, PRODUCE = (
    76, 77, 78, 79, 16, 42, 3, 0)
TOPIC, GROUP = "queue", "workers"
ACCEPT, RELEASE, REJECT = 1, 2, 3
Heartbeat, Describe = request_class(HEARTBEAT), request_class(DESCRIBE)
ShareFetch, ShareAck = request_class(FETCH), request_class(ACK)


def connect(server: Any) -> Wire:
    host, port = server.bootstrap.rsplit(":", 1)
    return Wire(host, int(port))


def produce(wire: Wire, count: int) -> None:
    Produce = request_class(PRODUCE)
    r = wire.call(PRODUCE, 9, Produce(transactional_id=None, acks=-1, timeout_ms=5000, topic_data=[
        Produce.TopicProduceData(name=TOPIC, partition_data=[
            Produce.PartitionProduceData(index=0, records=batch([b"v"] * count))])]))
    assert r.responses[0].partition_responses[0].error_code == 0


def topic_id(wire: Wire, topic: str = TOPIC) -> Any:
    Metadata = request_class(METADATA)
    r = wire.call(METADATA, 12, Metadata(topics=[Metadata.MetadataRequestTopic(name=topic)]))
    return r.topics[0].topic_id


class Member:
    def __init__(self, wire: Wire, member_id: str, tid: Any, group: str = GROUP,
                 topic: str = TOPIC) -> None:
        self.wire, self.member_id, self.tid = wire, member_id, tid
        self.group, self.topic = group, topic
        self.epoch = 0
        self.session_epoch = 0

    def heartbeat(self, epoch: int | None = None) -> Any:
        r = self.wire.call(HEARTBEAT, 1, Heartbeat(
            group_id=self.group, member_id=self.member_id,
            member_epoch=self.epoch if epoch is None else epoch,
            subscribed_topic_names=[self.topic] if self.epoch == 0 else None))
        if r.error_code == 0:
            self.epoch = r.member_epoch
        return r

    def fetch(self, acks: list[tuple[int, int, int]] = (), max_records: int = 10,  # type: ignore[assignment]
              epoch: int | None = None) -> Any:
        F = ShareFetch
        r = self.wire.call(FETCH, 2, F(
            group_id=self.group, member_id=self.member_id,
            share_session_epoch=self.session_epoch if epoch is None else epoch,
            max_wait_ms=0, min_bytes=1, max_records=max_records, batch_size=max_records,
            topics=[F.FetchTopic(topic_id=self.tid, partitions=[F.FetchPartition(
                partition_index=0, acknowledgement_batches=[
                    F.AcknowledgementBatch(first_offset=a, last_offset=b, acknowledge_types=[t])
                    for a, b, t in acks])])],
            forgotten_topics_data=[]))
        if r.error_code == 0 and epoch is None:
            self.session_epoch += 1
        return r

    def ack(self, acks: list[tuple[int, int, int]], epoch: int | None = None) -> Any:
        A = ShareAck
        r = self.wire.call(ACK, 2, A(
            group_id=self.group, member_id=self.member_id,
            share_session_epoch=self.session_epoch if epoch is None else epoch,
            topics=[A.AcknowledgeTopic(topic_id=self.tid, partitions=[A.AcknowledgePartition(
                partition_index=0, acknowledgement_batches=[
                    A.AcknowledgementBatch(first_offset=a, last_offset=b, acknowledge_types=[t])
                    for a, b, t in acks])])]))
        if r.error_code == 0 and epoch is None:
            self.session_epoch += 1
        return r


def joined(wire: Wire, tid: Any, member_id: str = "member-a") -> Member:
    """A member that joined the group and opened its share session (its first fetch)."""
    member = Member(wire, member_id, tid)
    member.heartbeat()
    member.fetch()
    return member


def set_group_config(wire: Wire, name: str, value: str, group: str = GROUP) -> None:
    R = request_class(44)
    r = wire.call(44, 1, R(resources=[R.AlterConfigsResource(
        resource_type=32, resource_name=group, configs=[  # a GROUP resource; SET
            R.AlterableConfig(name=name, config_operation=0, value=value)])]))
    assert r.responses[0].error_code == 0, r


def acquired(response: Any) -> list[tuple[int, int, int]]:
    return [(a.first_offset, a.last_offset, a.delivery_count)
            for t in response.responses for p in t.partitions for a in p.acquired_records]


@pytest.fixture
def world(kcsim: Any) -> Any:
    wire = connect(kcsim)
    wire.create_topic(TOPIC, 1)
    yield wire, topic_id(wire)
    wire.close()


def test_members_share_one_partition_and_describe_shows_them(kcsim: Any, world: Any) -> None:
    wire, tid = world
    a, b = Member(wire, "member-a", tid), Member(wire, "member-b", tid)
    assert a.heartbeat().member_epoch == 1
    r = b.heartbeat()
    assert (r.error_code, r.member_epoch) == (0, 2)
    assert [(tp.topic_id, tp.partitions) for tp in r.assignment.topic_partitions] == [(tid, [0])]
    assert a.heartbeat().member_epoch == 2  # the new epoch's target, at once
    d = wire.call(DESCRIBE, 1, Describe(group_ids=[GROUP, "nobody"]))
    g, missing = d.groups
    assert (g.error_code, g.group_state, g.group_epoch, g.assignor_name) == (0, "Stable", 2, "simple")
    assert {m.member_id: m.assignment.topic_partitions[0].partitions for m in g.members} == {
        "member-a": [0], "member-b": [0]}
    assert {m.client_host for m in g.members} == {"/127.0.0.1"}  # as Kafka writes it
    assert missing.error_code == E.GROUP_ID_NOT_FOUND
    listed = wire.call(LIST_GROUPS, 5, request_class(LIST_GROUPS)(types_filter=["share"]))
    assert [(x.group_id, x.group_type, x.group_state) for x in listed.groups] == [
        (GROUP, "share", "Stable")]


def test_heartbeat_errors(kcsim: Any, world: Any) -> None:
    wire, tid = world
    a = Member(wire, "member-a", tid)
    assert a.heartbeat(epoch=5).error_code == E.GROUP_ID_NOT_FOUND
    a.heartbeat()
    assert a.heartbeat(epoch=7).error_code == E.FENCED_MEMBER_EPOCH
    r = wire.call(HEARTBEAT, 1, Heartbeat(group_id=GROUP, member_id="", member_epoch=0,
                                          subscribed_topic_names=[TOPIC]))
    assert r.error_code == E.INVALID_REQUEST


def test_records_are_split_acknowledged_released_and_locks_expire(kcsim: Any, world: Any) -> None:
    wire, tid = world
    a, b = Member(wire, "member-a", tid), Member(wire, "member-b", tid)
    a.heartbeat(), b.heartbeat()
    assert acquired(a.fetch()) == []  # opens the session; the partition starts at the end
    assert acquired(b.fetch()) == []
    produce(wire, 4)
    produce(wire, 4)
    assert acquired(a.fetch(max_records=4)) == [(0, 3, 1)]
    assert acquired(b.fetch(max_records=4)) == [(4, 7, 1)]
    # a accepts 0-1 and releases 2-3: b gets them again, delivered twice
    r = a.ack([(0, 1, ACCEPT), (2, 3, RELEASE)])
    assert r.error_code == 0 and r.responses[0].partitions[0].error_code == 0
    assert acquired(b.fetch(acks=[(4, 7, REJECT)])) == [(2, 3, 2)]
    # acknowledging what one does not hold is refused, and changes nothing
    r = a.ack([(2, 3, ACCEPT)])
    assert r.responses[0].partitions[0].error_code == E.INVALID_RECORD_STATE
    # b stops acknowledging: once the lock runs out on the clock, a gets 2-3
    kcsim.clock.advance(30_000)
    assert acquired(a.fetch()) == [(2, 3, 3)]


def test_share_session_epochs(kcsim: Any, world: Any) -> None:
    wire, tid = world
    a = Member(wire, "member-a", tid)
    a.heartbeat()
    assert a.fetch(epoch=3).error_code == E.SHARE_SESSION_NOT_FOUND
    a.fetch()
    assert a.fetch(epoch=5).error_code == E.INVALID_SHARE_SESSION_EPOCH
    assert a.fetch().error_code == 0
    assert a.ack([], epoch=0).error_code == E.INVALID_SHARE_SESSION_EPOCH
    assert a.fetch(epoch=-1).error_code == 0
    assert a.fetch(epoch=2).error_code == E.SHARE_SESSION_NOT_FOUND


def test_an_empty_share_group_is_deleted(kcsim: Any, world: Any) -> None:
    wire, tid = world
    a = Member(wire, "member-a", tid)
    a.heartbeat()
    Delete = request_class(DELETE_GROUPS)
    assert wire.call(DELETE_GROUPS, 2, Delete(groups_names=[GROUP])).results[0].error_code == (
        E.NON_EMPTY_GROUP)
    assert a.heartbeat(epoch=-1).member_epoch == -1
    assert wire.call(DELETE_GROUPS, 2, Delete(groups_names=[GROUP])).results[0].error_code == 0
    d = wire.call(DESCRIBE, 1, Describe(group_ids=[GROUP]))
    assert d.groups[0].error_code == E.GROUP_ID_NOT_FOUND


def test_a_restart_keeps_acknowledgements_and_gives_back_what_was_held(
        kcsim_persistent: Any) -> None:
    """Acknowledged records never come back; records held at the restart come back
    AVAILABLE with the delivery count last written (Kafka's share coordinator)."""
    with connect(kcsim_persistent) as wire:
        wire.create_topic(TOPIC, 1)
        tid = topic_id(wire)
        a = Member(wire, "member-a", tid)
        a.heartbeat()
        a.fetch()
        produce(wire, 4)
        produce(wire, 4)
        produce(wire, 4)
        assert acquired(a.fetch(max_records=8)) == [(0, 7, 1)]
        assert a.ack([(0, 3, ACCEPT), (4, 5, RELEASE)]).error_code == 0
        assert acquired(a.fetch(max_records=2)) == [(4, 5, 2)]  # 6-7 and 4-5 held now
    kcsim_persistent.restart()
    with connect(kcsim_persistent) as wire:
        a = Member(wire, "member-a", tid)
        a.epoch = 1  # its membership was replayed: it heartbeats on
        assert a.heartbeat().error_code == 0
        # A new share session. 4-5 were last written released once, 6-7 never written:
        # both come back, as do the records never fetched; 0-3 never do.
        assert acquired(a.fetch(max_records=20)) == [(4, 5, 2), (6, 11, 1)]


def test_group_configs_set_the_lock_duration_and_where_partitions_start(
        kcsim: Any, world: Any) -> None:
    wire, tid = world
    set_group_config(wire, "share.record.lock.duration.ms", "15000")
    set_group_config(wire, "share.auto.offset.reset", "earliest")
    produce(wire, 3)  # before any member fetched: earliest still delivers them
    a = Member(wire, "member-a", tid)
    a.heartbeat()
    answer = a.fetch()
    assert (answer.acquisition_lock_timeout_ms, acquired(answer)) == (15000, [(0, 2, 1)])
    kcsim.clock.advance(15_000)
    assert acquired(a.fetch()) == [(0, 2, 2)]


def test_read_committed_share_groups_never_deliver_aborted_records(
        kcsim: Any, world: Any) -> None:
    from confluent_kafka import Producer

    wire, tid = world
    set_group_config(wire, "share.isolation.level", "read_committed")
    a = Member(wire, "member-a", tid)
    a.heartbeat()
    a.fetch()
    producer = Producer({"bootstrap.servers": kcsim.bootstrap, "transactional.id": "t1"})
    producer.init_transactions(30)
    for commit in (False, True):
        producer.begin_transaction()
        for i in range(3):
            producer.produce(TOPIC, value=b"x%d" % i, partition=0)
        producer.flush(30)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)
    # 0-2 aborted, 3 its marker, 4-6 committed, 7 the commit marker
    got = acquired(a.fetch(max_records=20))
    offsets = {o for first, last, _ in got for o in range(first, last + 1)}
    assert offsets.isdisjoint(range(3)) and set(range(4, 7)) <= offsets


def test_bad_acknowledgements_and_unknown_topics_get_kafka_s_errors(
        kcsim: Any, world: Any) -> None:
    wire, tid = world
    a = Member(wire, "member-a", tid)
    a.heartbeat()
    a.fetch()
    produce(wire, 6)
    assert acquired(a.fetch()) == [(0, 5, 1)]

    def ack_error(acks: list[tuple[int, int, int]]) -> int:
        return int(a.ack(acks).responses[0].partitions[0].error_code)

    assert ack_error([(0, 3, ACCEPT), (2, 5, ACCEPT)]) == E.INVALID_REQUEST  # overlapping
    assert ack_error([(3, 1, ACCEPT)]) == E.INVALID_REQUEST  # first after last
    assert ack_error([(0, 1, 9)]) == E.INVALID_REQUEST  # no such type
    assert ack_error([(4, 9, ACCEPT)]) == E.INVALID_REQUEST  # past what was fetched
    assert ack_error([(0, 2, ACCEPT), (3, 5, RELEASE)]) == 0  # the refused changed nothing
    assert ack_error([(4, 4, ACCEPT)]) == E.INVALID_RECORD_STATE  # released: not held
    assert ack_error([(0, 0, ACCEPT)]) == 0  # before the start offset: done with, skipped
    stranger = Member(wire, "member-a", uuid.uuid4())  # the same session, a topic id unknown
    stranger.session_epoch = a.session_epoch
    answer = stranger.fetch()
    assert answer.error_code == 0
    assert [(p.partition_index, p.error_code) for t in answer.responses if t.topic_id != tid
            for p in t.partitions] == [(0, E.UNKNOWN_TOPIC_ID)]


def test_a_member_whose_session_runs_out_gives_back_its_records(kcsim: Any, world: Any) -> None:
    wire, tid = world
    a, b = Member(wire, "member-a", tid), Member(wire, "member-b", tid)
    a.heartbeat(), b.heartbeat()
    set_group_config(wire, "share.record.lock.duration.ms", "60000")
    a.fetch(), b.fetch()
    produce(wire, 4)
    assert acquired(a.fetch()) == [(0, 3, 1)]
    kcsim.clock.advance(30_000)  # b heartbeats on; a does not
    b.heartbeat()
    kcsim.clock.advance(15_000)  # a's session (45 s) is over, before its lock (60 s) is
    b.heartbeat()
    d = wire.call(DESCRIBE, 1, Describe(group_ids=[GROUP]))
    assert [m.member_id for m in d.groups[0].members] == ["member-b"]
    # given back uncounted (the member left): delivered as a first delivery again
    assert acquired(b.fetch()) == [(0, 3, 1)]


def test_a_share_group_s_life_is_in_its_events(kcsim: Any, world: Any) -> None:
    wire, tid = world
    a, b, c = (Member(wire, f"member-{x}", tid) for x in "abc")
    a.heartbeat(), b.heartbeat(), c.heartbeat()
    a.heartbeat(epoch=-1)  # a leaves
    kcsim.clock.advance(30_000)
    b.heartbeat()
    kcsim.clock.advance(15_000)  # c's session (45 s) is over
    b.heartbeat(epoch=-1)
    events = [(e.kind, e.cause, e.member, e.detail.get("epoch"))
              for e in kcsim.events(group=GROUP)
              if e.kind in ("group-created", "member-joined", "member-left", "epoch-bumped",
                            "empty")]
    assert events == [
        ("group-created", "", "", None),
        ("member-joined", "", "member-a", None), ("epoch-bumped", "member-joined", "", 1),
        ("member-joined", "", "member-b", None), ("epoch-bumped", "member-joined", "", 2),
        ("member-joined", "", "member-c", None), ("epoch-bumped", "member-joined", "", 3),
        ("member-left", "leave-request", "member-a", None), ("epoch-bumped", "member-left", "", 4),
        ("member-left", "session-timeout", "member-c", None),
        ("epoch-bumped", "member-left", "", 5),
        ("member-left", "leave-request", "member-b", None), ("epoch-bumped", "member-left", "", 6),
        ("empty", "", "", None),
    ]
    assert {e.group_type for e in kcsim.events(group=GROUP)} == {"share"}
    changed = [(e.member, e.detail) for e in kcsim.events(group=GROUP, kind="assignment-changed")]
    assert changed[0] == ("member-a", {"added": [f"{TOPIC}-0"], "removed": []})
