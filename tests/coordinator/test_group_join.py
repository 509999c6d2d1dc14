"""JoinGroup: validation, member ids, protocol selection, the join phase and its timers."""

from __future__ import annotations

from kcsim.coordinator import GroupConfig
from kcsim.coordinator.records import GroupMetadataKey
from kcsim.protocol.errors import ErrorCode as E

from .group_harness import Harness, subscription


def test_empty_group_id_is_invalid():
    h = Harness()
    r = h.response(h.join("", member_id="m"))
    assert r.error_code == E.INVALID_GROUP_ID
    assert r.member_id == "m"
    assert h.gc.groups() == []


def test_session_timeout_outside_bounds_is_rejected():
    h = Harness(GroupConfig(min_session_timeout_ms=6000, max_session_timeout_ms=30000))
    assert h.response(h.join("g", session=5999)).error_code == E.INVALID_SESSION_TIMEOUT
    assert h.response(h.join("g", session=30001)).error_code == E.INVALID_SESSION_TIMEOUT
    assert h.gc.groups() == []
    assert h.response(h.join("g", session=6000)).error_code == E.MEMBER_ID_REQUIRED


def test_known_member_id_for_unknown_group_is_unknown_member():
    h = Harness()
    r = h.response(h.join("g", member_id="someone"))
    assert r.error_code == E.UNKNOWN_MEMBER_ID
    assert r.member_id == "someone"
    assert h.gc.groups() == []


def test_member_id_required_from_v4_with_a_generated_id():
    h = Harness()
    r = h.response(h.join("g", client_id="app"))
    assert r.error_code == E.MEMBER_ID_REQUIRED
    assert r.member_id == "app-00000000-0000-0000-0000-000000000001"
    assert r.generation_id == -1
    assert h.gc.group_state("g") == "Empty"
    assert h.gc.group("g").is_pending_member(r.member_id)
    # A new group gets an empty metadata record, as Kafka writes one.
    assert [type(rec.key) for rec in h.records] == [GroupMetadataKey]
    assert h.records[0].value.generation == 0 and h.records[0].value.members == []
    # Rejoining with the id parks until the initial delay has passed.
    token = h.join("g", r.member_id, client_id="app")
    assert h.response(token) is None
    assert h.gc.group_state("g") == "PreparingRebalance"
    h.advance(100)
    joined = h.response(token)
    assert joined.error_code == E.NONE
    assert joined.generation_id == 1
    assert joined.leader == r.member_id
    assert joined.protocol_type == "consumer" and joined.protocol_name == "range"
    assert [m.member_id for m in joined.members] == [r.member_id]
    assert h.gc.group_state("g") == "CompletingRebalance"


def test_versions_before_4_join_directly():
    h = Harness()
    token = h.join("g", version=3, client_id="old")
    assert h.response(token) is None
    h.advance(100)
    r = h.response(token)
    assert r.error_code == E.NONE
    assert r.member_id.startswith("old-")
    assert r.protocol_name == "range"


def test_v0_uses_the_session_timeout_as_rebalance_timeout():
    h = Harness()
    token = h.join("g", version=0, session=7000, rebalance=99999)
    h.advance(100)
    member = h.gc.group("g").members[h.response(token).member_id]
    assert member.rebalance_timeout_ms == 7000


def test_error_responses_carry_protocol_name_per_version():
    h = Harness()
    old = h.response(h.join("", version=6))
    new = h.response(h.join("", version=7))
    assert old.protocol_name == "" and new.protocol_name is None


def test_pending_member_expires_after_its_session_timeout():
    h = Harness()
    r = h.response(h.join("g", session=10_000))
    h.advance(10_000)
    assert not h.gc.group("g").is_pending_member(r.member_id)
    late = h.response(h.join("g", r.member_id))
    assert late.error_code == E.UNKNOWN_MEMBER_ID


def test_inconsistent_protocols_are_rejected():
    h = Harness()
    assert (
        h.response(h.join("g", version=3, protocol_type="")).error_code
        == E.INCONSISTENT_GROUP_PROTOCOL
    )
    assert (
        h.response(h.join("g", version=3, protocols=[])).error_code == E.INCONSISTENT_GROUP_PROTOCOL
    )
    first = h.join("g", version=3, protocols=[("range", b"x")])
    assert h.response(first) is None
    wrong_type = h.response(
        h.join("g", version=3, protocol_type="connect", protocols=[("range", b"x")])
    )
    assert wrong_type.error_code == E.INCONSISTENT_GROUP_PROTOCOL
    no_common = h.response(h.join("g", version=3, protocols=[("sticky", b"x")]))
    assert no_common.error_code == E.INCONSISTENT_GROUP_PROTOCOL
    assert h.response(h.join("g", version=3, protocols=[("sticky", b""), ("range", b"y")])) is None


def test_protocol_selection_counts_first_choices_among_common_protocols():
    h = Harness()
    both_a = [("a", b"1"), ("b", b"1")]
    both_b = [("b", b"2"), ("a", b"2")]
    tokens = [
        h.join("g", version=3, protocols=both_a),
        h.join("g", version=3, protocols=both_a),
        h.join("g", version=3, protocols=both_b),
    ]
    h.until_answered(tokens)
    assert {h.response(t).protocol_name for t in tokens} == {"a"}
    # A member that only supports "b" makes "b" the only candidate.
    h2 = Harness()
    tokens = [
        h2.join("g", version=3, protocols=both_a),
        h2.join("g", version=3, protocols=[("b", b"3")]),
    ]
    h2.until_answered(tokens)
    assert {h2.response(t).protocol_name for t in tokens} == {"b"}


def test_initial_delay_is_extended_while_members_keep_arriving():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=100))
    t0 = h.now
    first = h.join("g", version=3)
    h.advance(50)
    second = h.join("g", version=3)
    h.advance(49)  # t0 + 99
    h.advance(1)  # t0 + 100: a member arrived during the delay, so wait one more delay
    assert h.response(first) is None
    h.advance(99)
    assert h.response(first) is None
    h.advance(1)  # t0 + 200
    assert h.now == t0 + 200
    assert h.response(first).generation_id == 1
    assert len(h.response(first).members) == 2 or len(h.response(second).members) == 2


def test_initial_delay_never_exceeds_the_rebalance_timeout():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=100))
    t0 = h.now
    first = h.join("g", version=3, rebalance=250)
    tokens = [first]
    while h.response(first) is None:
        h.advance(10)
        if h.response(first) is None and h.now - t0 <= 300:
            tokens.append(h.join("g", version=3, rebalance=250))
    assert h.now == t0 + 250
    assert all(h.response(t) is not None for t in tokens[:-1])


def test_zero_initial_delay_completes_at_the_same_instant():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=0))
    token = h.join("g", version=3)
    assert h.response(token) is None
    h.tick()
    assert h.response(token).generation_id == 1


def test_rebalance_completes_when_every_member_rejoined():
    h = Harness()
    a, b = h.stable_group("g", 2)
    t_a = h.join("g", a, protocols=[("range", subscription("t", "u"))])
    assert h.gc.group_state("g") == "PreparingRebalance"
    assert h.heartbeat("g", b, 1).error_code == E.REBALANCE_IN_PROGRESS
    assert h.response(t_a) is None
    t_b = h.join("g", b)
    assert h.response(t_a).generation_id == 2
    assert h.response(t_b).generation_id == 2
    assert h.gc.group_state("g") == "CompletingRebalance"


def test_members_missing_at_the_rebalance_timeout_are_dropped():
    h = Harness()
    a, b = h.stable_group("g", 2)
    # The join phase lasts the largest rebalance timeout of the members (b's 30 s).
    token = h.join("g", a, rebalance=20_000, session=30_000)
    for _ in range(5):  # b stays alive but never rejoins
        assert h.heartbeat("g", b, 1).error_code == E.REBALANCE_IN_PROGRESS
        h.advance(5_999 if _ == 4 else 6_000)
    assert h.response(token) is None
    h.advance(1)
    r = h.response(token)
    assert r.generation_id == 2
    assert [m.member_id for m in r.members] == [a]
    assert list(h.gc.group("g").members) == [a]


def test_a_new_leader_is_elected_when_the_leader_does_not_rejoin():
    h = Harness()
    a, b = h.stable_group("g", 2)
    assert h.gc.group("g").leader_id == a
    token = h.join("g", b, protocols=[("range", subscription("u"))])
    h.advance(30_000)
    r = h.response(token)
    assert r.leader == b and r.member_id == b
    assert [m.member_id for m in r.members] == [b]


def test_group_max_size():
    h = Harness(GroupConfig(initial_rebalance_delay_ms=100, group_max_size=2))
    a, b = h.stable_group("g", 2)
    for version in (3, 9):
        r = h.response(h.join("g", version=version))
        assert r.error_code == E.GROUP_MAX_SIZE_REACHED
        assert r.member_id == ""
    assert len(h.gc.group("g").members) == 2
    # While rebalancing, the first to rejoin take the places (Kafka counts awaiting joins).
    h.join("g", a)
    newcomer = h.join("g", version=3)
    assert h.response(newcomer) is None
    late = h.response(h.join("g", b))
    assert late.error_code == E.GROUP_MAX_SIZE_REACHED
    assert b not in h.gc.group("g").members
    # Kafka removes it without re-checking the join phase: the rebalance timer completes it.
    assert h.response(newcomer) is None
    h.advance(30_000)
    assert h.response(newcomer).generation_id == 2


def test_rejoin_with_same_metadata_while_completing_repeats_the_generation():
    h = Harness()
    tokens = [h.join_dynamic("g", client_id=f"c{i}") for i in range(2)]
    h.until_answered(tokens)
    leader = h.response(tokens[0])
    follower = h.response(tokens[1])
    again = h.response(h.join("g", leader.member_id))
    assert again.generation_id == leader.generation_id
    assert len(again.members) == 2
    again_follower = h.response(h.join("g", follower.member_id))
    assert again_follower.members == []
    assert h.gc.group_state("g") == "CompletingRebalance"


def test_stable_follower_rejoin_is_answered_at_once_but_the_leader_rebalances():
    h = Harness()
    a, b = h.stable_group("g", 2)
    r = h.response(h.join("g", b))
    assert r.generation_id == 1 and r.leader == a and r.members == []
    assert h.gc.group_state("g") == "Stable"
    assert h.response(h.join("g", a)) is None
    assert h.gc.group_state("g") == "PreparingRebalance"


def test_member_with_unknown_id_is_rejected():
    h = Harness()
    h.stable_group("g", 1)
    r = h.response(h.join("g", "nobody"))
    assert r.error_code == E.UNKNOWN_MEMBER_ID and r.member_id == "nobody"


def test_rejoin_of_an_empty_group_member_is_unknown():
    h = Harness()
    h.commit("g", {("t", 0): 1})
    assert h.response(h.join("g", "ghost")).error_code == E.UNKNOWN_MEMBER_ID


def test_member_host_is_reported_like_kafka():
    h = Harness()
    token = h.join("g", version=3, host="10.1.2.3")
    h.advance(100)
    member = h.gc.group("g").members[h.response(token).member_id]
    assert member.client_host == "/10.1.2.3"
