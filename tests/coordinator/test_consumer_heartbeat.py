"""ConsumerGroupHeartbeat: joining, leaving, static membership, fencing and request checks."""

from __future__ import annotations

from kcsim.protocol.errors import ErrorCode as E

from .consumer_harness import Client, Harness, config, ownership, settle


def test_first_member_joins_with_epoch_zero_and_gets_every_partition() -> None:
    h = Harness()
    a = Client(h, "g")
    r = a.join()
    assert r.error_code == 0
    assert r.member_id == a.member_id
    assert r.member_epoch == 1
    assert r.heartbeat_interval_ms == 5000
    assert a.partitions() == {("t", p) for p in range(6)}
    assert h.gc.group_state("g") == "Stable"


def test_v0_join_gets_a_member_id_from_the_coordinator() -> None:
    h = Harness()
    r = h.heartbeat("g", "", 0, version=0, names=["t"], owned={})
    assert r.error_code == 0
    assert len(r.member_id) == 22  # a Kafka Uuid in base64
    again = h.heartbeat("g", r.member_id, r.member_epoch, version=0, owned={})
    assert again.error_code == 0 and again.member_epoch == 1


def test_v1_join_needs_a_client_generated_member_id() -> None:
    h = Harness()
    r = h.heartbeat("g", "", 0, version=1, names=["t"])
    assert r.error_code == E.INVALID_REQUEST
    assert r.error_message == "MemberId can't be empty."


def test_heartbeat_interval_and_session_timeout_come_from_configuration() -> None:
    h = Harness(config(consumer_group_heartbeat_interval_ms=700,
                       consumer_group_session_timeout_ms=3000))
    a = Client(h, "g")
    assert a.join().heartbeat_interval_ms == 700
    h.advance(2999)
    assert h.gc.consumer_group("g").members
    h.advance(1)
    assert not h.gc.consumer_group("g").members
    assert h.gc.group_state("g") == "Empty"


def test_each_heartbeat_pushes_the_session_back() -> None:
    h = Harness(config(consumer_group_session_timeout_ms=3000))
    a = Client(h, "g")
    a.join()
    for _ in range(5):
        h.advance(2000)
        assert a.beat().error_code == 0
    assert a.member_id in h.gc.consumer_group("g").members


def test_three_members_share_the_partitions_and_a_leaver_gives_its_share_away() -> None:
    h = Harness()
    clients = [Client(h, "g") for _ in range(3)]
    for c in clients:
        c.join()
    settle(clients)
    shares = [c.partitions() for c in clients]
    assert all(len(s) == 2 for s in shares)
    assert set().union(*shares) == {("t", p) for p in range(6)}

    gone = clients.pop(0)
    r = gone.leave()
    assert (r.error_code, r.member_epoch) == (0, -1)
    settle(clients)
    assert set().union(*(c.partitions() for c in clients)) == {("t", p) for p in range(6)}
    assert all(len(c.partitions()) == 3 for c in clients)
    assert gone.member_id not in h.gc.consumer_group("g").members


def test_a_new_owner_gets_a_partition_only_after_the_old_owner_revoked_it() -> None:
    h = Harness()
    a = Client(h, "g")
    a.join()
    b = Client(h, "g")
    r = b.join()
    assert b.partitions() == set(), "b must wait until a has revoked"
    assert h.describe("g").groups[0].group_state == "Reconciling"

    a.beat(ack=False)  # a is told to revoke but keeps reporting the partitions
    assert b.beat().assignment is None or b.partitions() == set()
    assert a.beat(ack=False).error_code == 0
    assert b.partitions() == set()

    a.beat()  # a revokes
    b.beat()
    assert len(a.partitions()) == 3 and len(b.partitions()) == 3
    assert not a.partitions() & b.partitions()
    assert r.member_epoch == 2


def test_a_member_that_does_not_revoke_within_its_rebalance_timeout_is_fenced() -> None:
    h = Harness()
    a = Client(h, "g")
    a.join()
    b = Client(h, "g")
    b.join()
    a.beat(ack=False)
    h.advance(29_999)
    assert a.member_id in h.gc.consumer_group("g").members
    h.advance(1)
    assert a.member_id not in h.gc.consumer_group("g").members
    settle([b])
    assert len(b.partitions()) == 6
    assert a.beat().error_code == E.UNKNOWN_MEMBER_ID


def test_stale_and_future_epochs_are_fenced() -> None:
    h = Harness()
    a = Client(h, "g")
    a.join()
    future = h.heartbeat("g", a.member_id, a.epoch + 1, owned={})
    assert future.error_code == E.FENCED_MEMBER_EPOCH
    b, c = Client(h, "g"), Client(h, "g")
    b.join()
    c.join()
    settle([a, b, c])
    member = h.gc.consumer_group("g").members[a.member_id]
    stale_epoch = next(e for e in range(1, member.member_epoch)
                       if e != member.previous_member_epoch)
    stale = h.heartbeat("g", a.member_id, stale_epoch, owned={})
    assert stale.error_code == E.FENCED_MEMBER_EPOCH
    rejoin = h.heartbeat("g", a.member_id, 0, names=["t"])
    assert rejoin.error_code == E.FENCED_MEMBER_EPOCH


def test_the_previous_epoch_is_accepted_when_the_bumping_answer_was_lost() -> None:
    h = Harness()
    a, b = Client(h, "g"), Client(h, "g")
    a.join()
    b.join()
    settle([a, b])
    members = h.gc.consumer_group("g").members
    c = next(c for c in (a, b)
             if 0 < members[c.member_id].previous_member_epoch < members[c.member_id].member_epoch)
    member = members[c.member_id]
    owned = {t: sorted(ps) for t, ps in c.owned.items()}
    lost = h.heartbeat("g", c.member_id, member.previous_member_epoch, owned=owned)
    assert lost.error_code == 0
    assert lost.member_epoch == member.member_epoch
    more = {t: list(range(6)) for t in c.owned}
    refused = h.heartbeat("g", c.member_id, member.previous_member_epoch, owned=more)
    assert refused.error_code == E.FENCED_MEMBER_EPOCH


def test_unknown_members_and_groups() -> None:
    h = Harness()
    r = h.heartbeat("nope", "m1", 3, owned={})
    assert r.error_code == E.GROUP_ID_NOT_FOUND
    Client(h, "g").join()
    r = h.heartbeat("g", "m-unknown", 3, owned={})
    assert r.error_code == E.UNKNOWN_MEMBER_ID
    r = h.heartbeat("g", "m-unknown", -1)
    assert r.error_code == E.UNKNOWN_MEMBER_ID


def test_static_member_leaves_for_a_while_and_comes_back_with_its_partitions() -> None:
    h = Harness()
    a = Client(h, "g", instance="i-a")
    b = Client(h, "g", instance="i-b")
    a.join()
    b.join()
    settle([a, b])
    before = a.partitions()

    r = a.leave(-2)
    assert (r.error_code, r.member_epoch) == (0, -2)
    assert h.gc.consumer_group("g").members[a.member_id].member_epoch == -2
    for _ in range(3):
        assert b.beat().error_code == 0
    assert b.partitions().isdisjoint(before), "a's partitions stay a's while it is away"
    assert h.gc.group_state("g") == "Reconciling"

    back = Client(h, "g", instance="i-a")
    r = back.join()
    assert r.error_code == 0
    assert back.partitions() == before
    assert a.member_id not in h.gc.consumer_group("g").members
    assert h.gc.consumer_group("g").static_members["i-a"] == back.member_id


def test_an_instance_id_in_use_is_unreleased() -> None:
    h = Harness()
    a = Client(h, "g", instance="i-a")
    a.join()
    r = Client(h, "g", instance="i-a").join()
    assert r.error_code == E.UNRELEASED_INSTANCE_ID


def test_static_member_session_expiry_after_static_leave_removes_it() -> None:
    h = Harness(config(consumer_group_session_timeout_ms=3000))
    a = Client(h, "g", instance="i-a")
    a.join()
    a.leave(-2)
    h.advance(3000)
    assert not h.gc.consumer_group("g").members


def test_fenced_instance_id() -> None:
    h = Harness()
    a = Client(h, "g", instance="i-a")
    a.join()
    r = h.heartbeat("g", "someone-else", 1, instance="i-a", owned={})
    assert r.error_code == E.FENCED_INSTANCE_ID
    r = h.heartbeat("g", "someone-else", -2, instance="i-a")
    assert r.error_code == E.FENCED_INSTANCE_ID
    r = h.heartbeat("g", "x", 1, instance="i-unknown", owned={})
    assert r.error_code == E.UNKNOWN_MEMBER_ID


def test_group_max_size() -> None:
    h = Harness(config(consumer_group_max_size=2))
    a, b = Client(h, "g"), Client(h, "g")
    a.join()
    b.join()
    r = Client(h, "g").join()
    assert r.error_code == E.GROUP_MAX_SIZE_REACHED
    assert "maximum capacity of 2 members" in r.error_message
    assert a.beat().error_code == 0


def test_assignors_uniform_and_range_and_nothing_else() -> None:
    h = Harness()
    r = Client(h, "g", assignor="sticky").join()
    assert r.error_code == E.UNSUPPORTED_ASSIGNOR
    assert r.error_message == ("ServerAssignor sticky is not supported. "
                               "Supported assignors: uniform, range.")
    a = Client(h, "g2", assignor="range")
    b = Client(h, "g2", assignor="range")
    a.join()
    b.join()
    settle([a, b])
    assert h.describe("g2").groups[0].assignor_name == "range"
    ranges = sorted(sorted(p for _, p in c.partitions()) for c in (a, b))
    assert ranges == [[0, 1, 2], [3, 4, 5]]


def test_request_checks() -> None:
    h = Harness()
    r = h.heartbeat("g", "m1", 0, names=["t"], rebalance=-1)
    assert (r.error_code, r.error_message) == (
        E.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
    r = h.heartbeat("g", "m1", 0, names=["t"], owned={h.topics.ids["t"]: [0]})
    assert (r.error_code, r.error_message) == (
        E.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
    r = h.heartbeat("g", "m1", -3)
    assert (r.error_code, r.error_message) == (E.INVALID_REQUEST, "MemberEpoch is invalid.")
    r = h.heartbeat("g", "m1", -2)
    assert (r.error_code, r.error_message) == (E.INVALID_REQUEST, "InstanceId can't be null.")
    r = h.heartbeat(" ", "m1", 0, names=["t"])
    assert (r.error_code, r.error_message) == (E.INVALID_REQUEST, "GroupId can't be empty.")
    assert h.records == [], "refused requests write nothing"


def test_regular_expression_subscription_follows_topics_created_later() -> None:
    h = Harness(topics={"orders-a": 2, "other": 2})
    a = Client(h, "g", regex="orders-.*")
    a.join()
    assert a.partitions() == {("orders-a", 0), ("orders-a", 1)}
    h.topics.create("orders-b", 1)
    h.advance(10_000)
    settle([a])
    assert a.partitions() == {("orders-a", 0), ("orders-a", 1), ("orders-b", 0)}
    described = h.describe("g").groups[0].members[0]
    assert described.subscribed_topic_regex == "orders-.*"


def test_invalid_regular_expression() -> None:
    h = Harness()
    r = Client(h, "g", regex="orders-(").join()
    assert r.error_code == E.INVALID_REGULAR_EXPRESSION
    assert r.error_message.startswith("SubscribedTopicRegex `orders-(` is not a valid")
    assert h.records == []


def test_subscription_change_moves_partitions() -> None:
    h = Harness()
    a, b = Client(h, "g"), Client(h, "g")
    a.join()
    b.join()
    settle([a, b])
    assert b.subscribe(["t", "u"]).error_code == 0
    settle([a, b])
    assert {("u", p) for p in range(3)} <= b.partitions()
    assert all(topic == "t" for topic, _ in a.partitions())
    assert len(ownership(h, "g")) == 9


def test_new_partitions_of_a_subscribed_topic_are_assigned() -> None:
    h = Harness(topics={"t": 2})
    a = Client(h, "g")
    a.join()
    h.topics.partitions["t"] = 4
    settle([a])
    assert a.partitions() == {("t", p) for p in range(4)}
