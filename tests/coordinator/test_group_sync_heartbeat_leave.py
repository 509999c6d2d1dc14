"""SyncGroup, Heartbeat, LeaveGroup and session / pending-sync expiry."""

from __future__ import annotations

from kcsim.coordinator.records import GroupMetadataKey
from kcsim.protocol.errors import ErrorCode as E

from .group_harness import Harness, assignment, decode_assignment


def _completing(h: Harness, group: str = "g", n: int = 2) -> list:
    tokens = [h.join_dynamic(group, client_id=f"c{i}") for i in range(n)]
    h.until_answered(tokens)
    return [h.response(t) for t in tokens]


# -- SyncGroup ---------------------------------------------------------------


def test_sync_validation_errors():
    h = Harness()
    assert h.response(h.sync("", "m", 1)).error_code == E.INVALID_GROUP_ID
    assert (
        h.response(h.sync("g", "m", 1, protocol_type=None)).error_code
        == E.INCONSISTENT_GROUP_PROTOCOL
    )
    assert (
        h.response(h.sync("g", "m", 1, protocol_name=None)).error_code
        == E.INCONSISTENT_GROUP_PROTOCOL
    )
    assert (
        h.response(h.sync("g", "m", 1, version=4, protocol_type=None)).error_code
        == E.UNKNOWN_MEMBER_ID
    )
    _leader, follower = _completing(h)
    assert h.response(h.sync("g", "nobody", 1)).error_code == E.UNKNOWN_MEMBER_ID
    assert h.response(h.sync("g", follower.member_id, 2)).error_code == E.ILLEGAL_GENERATION
    assert (
        h.response(h.sync("g", follower.member_id, 1, protocol_type="connect")).error_code
        == E.INCONSISTENT_GROUP_PROTOCOL
    )
    assert (
        h.response(h.sync("g", follower.member_id, 1, protocol_name="roundrobin")).error_code
        == E.INCONSISTENT_GROUP_PROTOCOL
    )


def test_sync_on_an_empty_group_is_unknown_member():
    h = Harness()
    h.commit("g", {("t", 0): 1})
    assert h.response(h.sync("g", "m", 0)).error_code == E.UNKNOWN_MEMBER_ID


def test_followers_wait_for_the_leader_assignment():
    h = Harness()
    leader, follower = _completing(h)
    waiting = h.sync("g", follower.member_id, 1)
    assert h.response(waiting) is None
    plan = {
        leader.member_id: assignment({"t": [0, 1, 2]}),
        follower.member_id: assignment({"t": [3, 4, 5]}),
    }
    before = len(h.records)
    mine = h.response(h.sync("g", leader.member_id, 1, assignments=plan))
    assert decode_assignment(mine.assignment) == {"t": [0, 1, 2]}
    assert mine.protocol_type == "consumer" and mine.protocol_name == "range"
    theirs = h.response(waiting)
    assert decode_assignment(theirs.assignment) == {"t": [3, 4, 5]}
    assert h.gc.group_state("g") == "Stable"
    # The generation is stored with every member's assignment.
    (record,) = h.records[before:]
    assert isinstance(record.key, GroupMetadataKey)
    assert record.value.generation == 1 and record.value.protocol == "range"
    assert {m.member_id: m.assignment for m in record.value.members} == plan
    # Once Stable, SyncGroup hands back the current assignment.
    again = h.response(h.sync("g", follower.member_id, 1))
    assert again.assignment == plan[follower.member_id]


def test_members_missing_from_the_leader_plan_get_an_empty_assignment():
    h = Harness()
    leader, follower = _completing(h)
    waiting = h.sync("g", follower.member_id, 1)
    h.sync("g", leader.member_id, 1, assignments={leader.member_id: b"x", "stranger": b"y"})
    assert h.response(waiting).assignment == b""
    assert h.response(waiting).error_code == E.NONE


def test_parked_syncs_learn_of_a_new_rebalance():
    h = Harness()
    _leader, follower = _completing(h)
    waiting = h.sync("g", follower.member_id, 1)
    h.join("g", version=3)  # a new member arrives before the leader synced
    assert h.response(waiting).error_code == E.REBALANCE_IN_PROGRESS
    assert h.gc.group_state("g") == "PreparingRebalance"
    assert h.response(h.sync("g", follower.member_id, 1)).error_code == E.REBALANCE_IN_PROGRESS


def test_members_that_never_sync_are_removed_at_the_rebalance_timeout():
    h = Harness()
    leader, follower = _completing(h)
    h.sync("g", leader.member_id, 1, assignments={})
    assert h.gc.group_state("g") == "Stable"
    for _ in range(5):  # both stay alive; the follower never sends SyncGroup
        h.advance(5_000)
        assert h.heartbeat("g", leader.member_id, 1).error_code == E.NONE
        assert h.heartbeat("g", follower.member_id, 1).error_code == E.NONE
    h.advance(4_999)
    assert h.gc.group_state("g") == "Stable"
    h.advance(1)  # 30 s after the join completed: the follower never synced
    assert follower.member_id not in h.gc.group("g").members
    assert h.gc.group_state("g") == "PreparingRebalance"


# -- Heartbeat ---------------------------------------------------------------


def test_heartbeat_errors_and_states():
    h = Harness()
    assert h.heartbeat("", "m", 1).error_code == E.INVALID_GROUP_ID
    assert h.heartbeat("g", "m", 1).error_code == E.UNKNOWN_MEMBER_ID
    leader, follower = _completing(h)
    assert h.heartbeat("g", leader.member_id, 1).error_code == E.NONE  # CompletingRebalance
    assert h.heartbeat("g", leader.member_id, 0).error_code == E.ILLEGAL_GENERATION
    assert h.heartbeat("g", "stranger", 1).error_code == E.UNKNOWN_MEMBER_ID
    h.sync("g", leader.member_id, 1, assignments={})
    assert h.heartbeat("g", follower.member_id, 1).error_code == E.NONE  # Stable
    h.join("g", leader.member_id)
    assert h.heartbeat("g", follower.member_id, 1).error_code == E.REBALANCE_IN_PROGRESS


def test_session_expiry_removes_a_silent_member_and_rebalances():
    h = Harness()
    a, b = h.stable_group("g", 2)
    h.advance(6_000)
    assert h.heartbeat("g", a, 1).error_code == E.NONE
    h.advance(3_999)
    assert list(h.gc.group("g").members) == [a, b]
    h.advance(1)  # b was silent for its whole 10 s session
    assert list(h.gc.group("g").members) == [a]
    assert h.gc.group_state("g") == "PreparingRebalance"
    assert h.heartbeat("g", a, 1).error_code == E.REBALANCE_IN_PROGRESS
    assert h.heartbeat("g", b, 1).error_code == E.UNKNOWN_MEMBER_ID


def test_heartbeats_keep_a_member_alive():
    h = Harness()
    (a,) = h.stable_group("g", 1)
    for _ in range(20):
        h.advance(9_999)
        assert h.heartbeat("g", a, 1).error_code == E.NONE
    assert h.gc.group_state("g") == "Stable"


def test_commits_keep_a_member_alive_too():
    h = Harness()
    (a,) = h.stable_group("g", 1)
    for i in range(5):
        h.advance(9_000)
        assert (
            h.commit("g", {("t", 0): i}, generation=1, member_id=a)
            .topics[0]
            .partitions[0]
            .error_code
            == 0
        )
    assert h.gc.group_state("g") == "Stable"


def test_last_member_expiring_empties_the_group():
    h = Harness()
    h.stable_group("g", 1)
    before = len(h.records)
    h.advance(10_000)
    assert h.gc.group_state("g") == "Empty"
    (record,) = h.records[before:]
    assert record.value.members == [] and record.value.generation == 2
    assert record.value.protocol is None and record.value.protocol_type == "consumer"


def test_a_new_member_parked_in_a_long_rebalance_times_out():
    h = Harness()
    a, b = h.stable_group("g", 2)
    h.join("g", a, rebalance=600_000, session=10_000)
    newcomer = h.join("g", version=3, rebalance=600_000)
    for _ in range(60):  # the old members stay alive; the rebalance waits for b
        h.advance(5_000)
        h.heartbeat("g", b, 1)
    assert h.response(newcomer).error_code == E.UNKNOWN_MEMBER_ID  # 5 minutes later
    assert h.response(newcomer).member_id == ""


# -- LeaveGroup --------------------------------------------------------------


def test_leave_v0_to_v2_report_a_single_error():
    h = Harness()
    _a, b = h.stable_group("g", 2)
    assert h.leave("g", (b, None), version=0).error_code == E.NONE
    assert h.leave("g", ("nobody", None), version=1).error_code == E.UNKNOWN_MEMBER_ID
    assert h.leave("nogroup", ("x", None), version=2).error_code == E.UNKNOWN_MEMBER_ID
    assert h.leave("", ("x", None), version=2).error_code == E.INVALID_GROUP_ID


def test_batch_leave_reports_each_member():
    h = Harness()
    a, b, c = h.stable_group("g", 3)
    r = h.leave("g", (a, None), ("ghost", None), (b, "not-static"))
    assert r.error_code == E.NONE
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in r.members] == [
        (a, None, E.NONE),
        ("ghost", None, E.UNKNOWN_MEMBER_ID),
        (b, "not-static", E.UNKNOWN_MEMBER_ID),
    ]
    assert list(h.gc.group("g").members) == [b, c]
    assert h.gc.group_state("g") == "PreparingRebalance"


def test_leave_of_an_unknown_group_marks_every_member_unknown():
    h = Harness()
    r = h.leave("nope", ("a", None), ("b", "i"))
    assert r.error_code == E.NONE
    assert [m.error_code for m in r.members] == [E.UNKNOWN_MEMBER_ID] * 2


def test_everyone_leaving_empties_the_group():
    h = Harness()
    a, b = h.stable_group("g", 2)
    before = len(h.records)
    h.leave("g", (a, None), (b, None))
    assert h.gc.group_state("g") == "Empty"
    (record,) = h.records[before:]
    assert record.value.members == [] and record.value.generation == 2


def test_leaving_while_rebalancing_completes_the_join_phase():
    h = Harness()
    a, b = h.stable_group("g", 2)
    token = h.join("g", a)
    h.leave("g", (b, None))
    assert h.response(token).generation_id == 2
    assert [m.member_id for m in h.response(token).members] == [a]


def test_a_member_leaving_with_a_parked_join_gets_unknown_member():
    h = Harness()
    a, _b = h.stable_group("g", 2)
    token_a = h.join("g", a)
    h.leave("g", (a, None))
    assert h.response(token_a).error_code == E.UNKNOWN_MEMBER_ID


def test_a_pending_member_can_leave():
    h = Harness()
    pending = h.response(h.join("g")).member_id
    r = h.leave("g", (pending, None))
    assert r.members[0].error_code == E.NONE
    assert not h.gc.group("g").is_pending_member(pending)
