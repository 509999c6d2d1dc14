"""A bug is contained: a handler that raises changes nothing, a fold that raises fails one group.

A handler computes records and they fold in only once it has returned, and
what it changed of the soft state as it went (members, parked requests,
timers) is put back if it raises: the request is answered UNKNOWN_SERVER_ERROR
and the coordinator is exactly as before. A record whose fold raises fails its
group: the group answers COORDINATOR_NOT_AVAILABLE from then on (its parked
requests at once), the failure is reported once for the shell to log, and
every other group carries on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from kcsim.coordinator import Caller, GroupConfig, GroupCoordinator
from kcsim.coordinator.consumer.groups import ConsumerGroups
from kcsim.coordinator.groups.rebalance import Rebalancer
from kcsim.coordinator.pause.handlers import PauseHandlers
from kcsim.coordinator.records import GroupMetadataKey
from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode as E

from . import state_dump
from .group_harness import Harness, Token, assignment

if TYPE_CHECKING:
    from kcsim.storage.records import Record

HeartbeatRequest = request_class(68)
PauseRequest = request_class(1000)


class Bug(RuntimeError):
    pass


def _raise_after(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> None:
    """`owner.name` does its work, then raises: the handler calling it is half-way through."""
    original = getattr(owner, name)

    def half_way(*args: Any, **kwargs: Any) -> Any:
        original(*args, **kwargs)
        raise Bug(name)

    monkeypatch.setattr(owner, name, half_way)


class Spy:
    """The Outcomes a harness's coordinator returns."""

    def __init__(self, h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
        self.outcomes: list[Any] = []
        for name in ("handle", "tick"):
            real = getattr(h.gc, name)

            def spy(*args: Any, _real: Any = real) -> Any:
                outcome = _real(*args)
                self.outcomes.append(outcome)
                return outcome

            monkeypatch.setattr(h.gc, name, spy)

    def failures(self) -> list[Any]:
        return [f for o in self.outcomes for f in o.failures]


def _contained(h: Harness, monkeypatch: pytest.MonkeyPatch, send: Any) -> Any:
    """Send a request whose handler raises; check it changed nothing; return its answer."""
    h.tick()
    before = state_dump.dump(h.gc)
    written, answered = len(h.records), len(h.order)
    spy = Spy(h, monkeypatch)
    token = send()
    assert state_dump.dump(h.gc) == before
    assert len(h.records) == written, "records of a handler that raised were kept"
    assert h.order[answered:] == [token], "only the request itself is answered"
    [failure] = spy.failures()
    assert isinstance(failure.error, Bug) and failure.group_id is None
    monkeypatch.undo()
    return h.responses[token]


def _unbroken(h: Harness, token: Token) -> Any:
    h.until_answered([token])
    return h.responses[token]


def test_a_join_that_raises_half_way_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    h = Harness()
    h.stable_group("g", 2)
    _raise_after(monkeypatch, Rebalancer, "maybe_prepare_rebalance_or_complete_join")
    answer = _contained(h, monkeypatch, lambda: h.join("g", version=3, client_id="new"))
    assert answer.error_code == E.UNKNOWN_SERVER_ERROR
    assert h.gc.group_state("g") == "Stable"
    assert _unbroken(h, h.join("g", version=3, client_id="new")).error_code == E.NONE


def test_a_leader_sync_that_raises_leaves_the_followers_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = Harness()
    joins = [h.join_dynamic("g", client_id=f"c{i}") for i in range(2)]
    h.until_answered(joins)
    leader, follower = sorted((h.responses[t] for t in joins),
                              key=lambda r: r.member_id != r.leader)
    parked = h.sync("g", follower.member_id, follower.generation_id)
    plan = {leader.member_id: assignment({"t": [0, 1, 2]}),
            follower.member_id: assignment({"t": [3, 4, 5]})}
    _raise_after(monkeypatch, Rebalancer, "propagate_assignment")
    answer = _contained(h, monkeypatch, lambda: h.sync(
        "g", leader.member_id, leader.generation_id, assignments=plan))
    assert answer.error_code == E.UNKNOWN_SERVER_ERROR
    assert parked not in h.responses and h.gc.group_state("g") == "CompletingRebalance"
    assert h.gc.group("g").persisted.generation == 0  # the generation was not stored
    done = h.sync("g", leader.member_id, leader.generation_id, assignments=plan)
    assert h.responses[done].error_code == E.NONE
    assert h.responses[parked].assignment == plan[follower.member_id]


def test_a_leave_that_raises_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    h = Harness()
    a, b = h.stable_group("g", 2)
    _raise_after(monkeypatch, Rebalancer, "maybe_prepare_rebalance_or_complete_join")
    answer = _contained(h, monkeypatch, lambda: h.call(13, 5, request_class(13)(
        group_id="g", members=[request_class(13).MemberIdentity(member_id=a)])))
    assert answer.error_code == E.UNKNOWN_SERVER_ERROR
    assert list(h.gc.group("g").members) == [a, b]


def test_a_leave_of_many_that_raises_keeps_every_member_in_its_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = Harness()
    ids = h.stable_group("g", 4)
    _raise_after(monkeypatch, Rebalancer, "maybe_prepare_rebalance_or_complete_join")
    leaving = [ids[2], ids[0], ids[3]]  # removed out of join order: the undo restores that order
    answer = _contained(h, monkeypatch, lambda: h.call(13, 5, request_class(13)(
        group_id="g", members=[request_class(13).MemberIdentity(member_id=m) for m in leaving])))
    assert answer.error_code == E.UNKNOWN_SERVER_ERROR
    assert list(h.gc.group("g").members) == ids


def test_a_commit_that_raises_commits_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import kcsim.coordinator.offsets as offsets

    h = Harness()
    (a,) = h.stable_group("g", 1)
    h.commit("g", {("t", 0): 5}, generation=1, member_id=a)
    _raise_after(monkeypatch, offsets, "_merge")
    request = request_class(8)
    answer = _contained(h, monkeypatch, lambda: h.call(8, 9, request(
        group_id="g", generation_id_or_member_epoch=1, member_id=a, group_instance_id=None,
        topics=[request.OffsetCommitRequestTopic(name="t", partitions=[
            request.OffsetCommitRequestPartition(partition_index=p, committed_offset=9)
            for p in (0, 1)])])))
    assert [p.error_code for p in answer.topics[0].partitions] == [E.UNKNOWN_SERVER_ERROR] * 2
    assert {k: v.offset for k, v in h.gc.committed_offsets("g").items()} == {("t", 0): 5}


def _consumer_join(h: Harness, member: str) -> Token:
    return h.call(68, 1, HeartbeatRequest(
        group_id="k", member_id=member, member_epoch=0, instance_id=None, rack_id=None,
        rebalance_timeout_ms=5000, subscribed_topic_names=["t"], subscribed_topic_regex=None,
        server_assignor=None, topic_partitions=[]))


def test_a_consumer_heartbeat_that_raises_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Assigning in the heartbeat that changes the group: the second join bumps the epoch.
    h = Harness(GroupConfig(initial_rebalance_delay_ms=100, consumer_group_assignment_interval_ms=0))
    assert h.responses[_consumer_join(h, "m1")].member_epoch == 1
    _raise_after(monkeypatch, ConsumerGroups, "schedule_session")
    answer = _contained(h, monkeypatch, lambda: _consumer_join(h, "m2"))
    assert answer.error_code == E.UNKNOWN_SERVER_ERROR
    assert list(h.gc.consumer_group("k").members) == ["m1"]
    assert h.responses[_consumer_join(h, "m2")].member_epoch == 2


@pytest.mark.parametrize("kind", ["classic", "consumer"])
def test_a_pause_that_raises_pauses_nothing(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    h = Harness()
    if kind == "classic":
        h.stable_group("g", 2)
    else:
        _consumer_join(h, "m1")
    group = "g" if kind == "classic" else "k"
    _raise_after(monkeypatch, PauseHandlers, "take_effect")
    answer = _contained(h, monkeypatch, lambda: h.call(1000, 0, PauseRequest(
        group_id=group, topics=[PauseRequest.PausePartitionsRequestTopic(
            name="t", partitions=[PauseRequest.PausePartitionsRequestPartition(
                partition_index=1)])])))
    assert answer.error_code == E.UNKNOWN_SERVER_ERROR
    assert h.gc.paused_partitions(group) == {}


def test_a_delete_that_raises_deletes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import kcsim.coordinator.admin as admin

    h = Harness()
    h.commit("s", {("t", 0): 1})
    _raise_after(monkeypatch, admin, "remove_group")
    answer = _contained(h, monkeypatch, lambda: h.call(42, 2, request_class(42)(
        groups_names=["s"])))
    assert answer.results[0].error_code == E.UNKNOWN_SERVER_ERROR
    assert h.gc.groups() == ["s"] and h.gc.committed_offsets("s")


# -- a fold that raises -----------------------------------------------------------------


def _break_group_fold(gc: GroupCoordinator, broken: str) -> None:
    """The fold of group metadata raises for one group (a bug that only its data meets)."""
    folds = gc._rt.folds
    fold = folds[GroupMetadataKey]

    def buggy(record: Record) -> None:
        if record.key.group == broken:
            raise Bug("fold")
        fold(record)

    folds[GroupMetadataKey] = buggy


def test_a_fold_that_raises_fails_only_its_group(monkeypatch: pytest.MonkeyPatch) -> None:
    h = Harness()
    spy = Spy(h, monkeypatch)
    _break_group_fold(h.gc, "g")
    parked = h.join("g", version=3)  # a new group: its first record folds now
    assert h.responses[parked].error_code == E.COORDINATOR_NOT_AVAILABLE
    [failure] = spy.failures()
    assert (failure.group_id, type(failure.error)) == ("g", Bug)
    assert h.gc.failed_groups() == {"g"}

    assert h.response(h.join("g", version=3)).error_code == E.COORDINATOR_NOT_AVAILABLE
    assert h.heartbeat("g", "m", 1).error_code == E.COORDINATOR_NOT_AVAILABLE
    committed = h.commit("g", {("t", 0): 1})
    assert committed.topics[0].partitions[0].error_code == E.COORDINATOR_NOT_AVAILABLE
    assert h.gc.committed_offsets("g") == {}

    (member,) = h.stable_group("h", 1)  # every other group carries on
    h.commit("h", {("t", 0): 7}, generation=1, member_id=member)
    described = h.describe("g", "h")
    assert [(d.group_id, d.error_code, d.group_state) for d in described.groups] == [
        ("g", E.COORDINATOR_NOT_AVAILABLE, ""), ("h", E.NONE, "Stable")]
    deleted = h.delete_groups("h", "g")
    assert [(r.group_id, r.error_code) for r in deleted.results] == [
        ("h", E.NON_EMPTY_GROUP), ("g", E.COORDINATOR_NOT_AVAILABLE)]
    assert [f.group_id for f in spy.failures()] == ["g"], "a failed group is reported once"


def test_a_commit_whose_fold_raises_fails_its_group(monkeypatch: pytest.MonkeyPatch) -> None:
    h = Harness()
    rt = h.gc._rt
    commits = rt.fold_commits

    def buggy(records: Any, start: int, end: int) -> int:
        if records[start].key.group == "g":
            raise Bug("fold")
        return commits(records, start, end)

    rt.fold_commits = buggy
    spy = Spy(h, monkeypatch)
    failed = h.commit("g", {("t", 0): 1, ("t", 1): 1})
    assert [p.error_code for p in failed.topics[0].partitions] == [E.COORDINATOR_NOT_AVAILABLE] * 2
    h.commit("other", {("t", 0): 2})
    assert h.gc.committed_offsets("other")[("t", 0)].offset == 2
    assert [f.group_id for f in spy.failures()] == ["g"]


def test_a_record_whose_fold_raises_at_replay_fails_its_group() -> None:
    h = Harness()
    h.stable_group("g", 1)
    h.stable_group("h", 1)
    fresh = GroupCoordinator(h.config, h.topics)
    _break_group_fold(fresh, "g")
    for record in h.records:
        fresh.apply(record)
    outcome = fresh.tick(h.now)
    assert [(f.group_id, type(f.error)) for f in outcome.failures] == [("g", Bug)]
    assert fresh.failed_groups() == {"g"}
    assert fresh.group_state("h") == "Stable"
    ctx = Caller(token=object(), client_id="c", client_host="h")
    heartbeat = request_class(12)(group_id="g", generation_id=1, member_id="x")
    answer = fresh.handle(12, 4, heartbeat, ctx, h.now).responses[0][1]
    assert answer.error_code == E.COORDINATOR_NOT_AVAILABLE


def test_a_timer_that_raises_fails_its_group(monkeypatch: pytest.MonkeyPatch) -> None:
    h = Harness(GroupConfig(initial_rebalance_delay_ms=0))
    h.stable_group("g", 1)
    h.stable_group("h", 1)
    spy = Spy(h, monkeypatch)

    def buggy(self: Rebalancer, key: Any, payload: object) -> None:
        if key.group_id == "g":
            raise Bug("timer")

    monkeypatch.setattr(Rebalancer, "on_heartbeat_expired", buggy)
    h.gc._timers["heartbeat"] = h.gc._rebalance.on_heartbeat_expired
    h.advance(60_000)
    assert [f.group_id for f in spy.failures()] == ["g"]
    assert h.gc.failed_groups() == {"g"}
