"""Static membership (KIP-345): instance ids, replacement without rebalance, fencing."""

from __future__ import annotations

from kcsim.protocol.errors import ErrorCode as E

from .group_harness import Harness, decode_assignment, subscription


def test_static_members_join_without_member_id_required():
    h = Harness()
    token = h.join("g", instance="pod-1", client_id="app")
    assert h.response(token) is None
    h.advance(100)
    r = h.response(token)
    assert r.error_code == E.NONE
    assert r.member_id == "pod-1-00000000-0000-0000-0000-000000000001"
    assert h.gc.group("g").static_members == {"pod-1": r.member_id}


def test_static_rejoin_while_stable_replaces_the_member_without_rebalance():
    h = Harness()
    a, b = h.stable_group("g", 2, static=True)
    group = h.gc.group("g")
    old_assignment = group.members[b].assignment
    before = len(h.records)
    r = h.response(h.join("g", instance="inst-1", client_id="c1-restarted"))
    assert r.error_code == E.NONE
    assert r.member_id != b and r.generation_id == 1
    assert r.leader == a and r.members == [] and not r.skip_assignment
    assert h.gc.group_state("g") == "Stable"
    assert group.static_members["inst-1"] == r.member_id
    # The replacement keeps the old member's assignment (and, as in Kafka, its client id).
    assert group.members[r.member_id].assignment == old_assignment
    assert group.members[r.member_id].client_id == "c1"
    (record,) = h.records[before:]
    assert r.member_id in [m.member_id for m in record.value.members]
    assert b not in [m.member_id for m in record.value.members]
    # SyncGroup hands back the existing assignment; the old id is fenced.
    synced = h.response(h.sync("g", r.member_id, 1, instance="inst-1"))
    assert synced.assignment == old_assignment
    assert h.heartbeat("g", b, 1, instance="inst-1").error_code == E.FENCED_INSTANCE_ID
    assert h.heartbeat("g", r.member_id, 1, instance="inst-1").error_code == E.NONE
    assert h.response(h.join("g", b, instance="inst-1")).error_code == E.FENCED_INSTANCE_ID


def test_static_leader_rejoin_v9_skips_assignment():
    h = Harness()
    _a, b = h.stable_group("g", 2, static=True)
    r = h.response(h.join("g", instance="inst-0", version=9))
    assert r.leader == r.member_id
    assert r.skip_assignment
    assert sorted(m.member_id for m in r.members) == sorted([r.member_id, b])
    assert h.gc.group_state("g") == "Stable"
    assert decode_assignment(
        h.response(h.sync("g", r.member_id, 1, instance="inst-0")).assignment
    ) == {"t": [0, 2, 4]}


def test_static_leader_rejoin_before_v9_is_told_the_old_leader_id():
    h = Harness()
    a, _b = h.stable_group("g", 2, static=True)
    r = h.response(h.join("g", instance="inst-0", version=8))
    assert r.leader == a != r.member_id  # so the client acts as a follower
    assert r.members == []
    assert h.gc.group("g").leader_id == r.member_id


def test_static_rejoin_with_a_different_protocol_rebalances():
    h = Harness()
    h.stable_group("g", 1, static=True)
    only_new = h.response(
        h.join("g", instance="inst-0", protocols=[("roundrobin", subscription("t"))])
    )
    assert only_new.error_code == E.INCONSISTENT_GROUP_PROTOCOL
    token = h.join(
        "g",
        instance="inst-0",
        protocols=[("roundrobin", subscription("t")), ("range", subscription("t"))],
    )
    # The only member rejoined, so the new generation completes at once.
    assert h.response(token).generation_id == 2
    assert h.response(token).protocol_name == "roundrobin"
    assert h.gc.group_state("g") == "CompletingRebalance"


def test_static_replacement_fences_a_parked_join():
    h = Harness()
    a, b = h.stable_group("g", 2, static=True)
    parked = h.join("g", b, instance="inst-1", protocols=[("range", subscription("u"))])
    assert h.gc.group_state("g") == "PreparingRebalance"
    replacement = h.join("g", instance="inst-1", protocols=[("range", subscription("u"))])
    fenced = h.response(parked)
    assert fenced.error_code == E.FENCED_INSTANCE_ID and fenced.member_id == b
    h.join("g", a)
    assert h.response(replacement).generation_id == 2


def test_static_members_are_kept_when_they_miss_a_rebalance():
    h = Harness()
    a, b = h.stable_group("g", 2, static=True)
    token = h.join("g", a, instance="inst-0", protocols=[("range", subscription("t", "u"))])
    for _ in range(6):
        h.advance(5_000)
        h.heartbeat("g", b, 1, instance="inst-1")
    r = h.response(token)
    assert r.generation_id == 2
    assert sorted(m.member_id for m in r.members) == sorted([a, b])


def test_leave_by_instance_id_alone():
    h = Harness()
    a, _b = h.stable_group("g", 2, static=True)
    r = h.leave("g", ("", "inst-1"), ("", "inst-9"))
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in r.members] == [
        ("", "inst-1", E.NONE),
        ("", "inst-9", E.UNKNOWN_MEMBER_ID),
    ]
    assert list(h.gc.group("g").members) == [a]


def test_leave_with_a_stale_member_id_is_fenced():
    h = Harness()
    _a, b = h.stable_group("g", 2, static=True)
    r = h.leave("g", ("old-id", "inst-1"))
    assert r.members[0].error_code == E.FENCED_INSTANCE_ID
    assert b in h.gc.group("g").members


def test_static_member_sessions_expire_too():
    h = Harness()
    a, _b = h.stable_group("g", 2, static=True)
    h.advance(6_000)
    h.heartbeat("g", a, 1, instance="inst-0")
    h.advance(4_000)
    assert list(h.gc.group("g").members) == [a]
    assert h.gc.group("g").static_members == {"inst-0": a}
