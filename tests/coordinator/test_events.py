"""The group event log as a user reads it: each change of a group's life, in order, with
its cause, from the coordinator's own records (so replay rebuilds the same history)."""

from __future__ import annotations

from typing import Any

import pytest

from kcsim.coordinator import GroupConfig, GroupCoordinator
from kcsim.coordinator.kafka_format import kafka_record
from kcsim.coordinator.records import GroupEventKey
from kcsim.coordinator.shared.events import COMMIT_SUMMARY_MS, event_fields

from . import consumer_harness as ch
from .group_harness import Harness
from .streams_harness import StreamsHarness, T, streams_config
from .test_pause_classic import change
from .txn_model import Model

Seen = tuple[str, str, str]  # (kind, cause, member)


def seen(gc: GroupCoordinator, group: str, since: int = 0,
         skip: tuple[str, ...] = ()) -> list[Seen]:
    return [(e.kind, e.cause, e.member) for e in gc.events.query(group=group, since=since)
            if e.kind not in skip]


def details(gc: GroupCoordinator, group: str, kind: str) -> list[tuple[str, Any]]:
    return [(e.member, e.detail) for e in gc.events.query(group=group, kind=kind)]


def replayed_history(records: list[Any], make: Any) -> list[dict[str, object]]:
    fresh = make()
    fresh.apply_all(records)
    return [event_fields(e) for e in fresh.events]


def history(gc: GroupCoordinator) -> list[dict[str, object]]:
    return [event_fields(e) for e in gc.events]


# -- classic groups -------------------------------------------------------------


def classic(**overrides: Any) -> Harness:
    return Harness(GroupConfig(initial_rebalance_delay_ms=100, events=True, **overrides))


def test_classic_group_life_from_join_to_deletion() -> None:
    h = classic()
    a, b = h.stable_group("g", 2)
    assert seen(h.gc, "g") == [
        ("group-created", "", ""),
        ("member-joined", "", a),
        ("rebalance-started", "member-joined", ""),
        ("member-joined", "", b),
        ("generation-bumped", "", ""),
        ("assignment-changed", "", a),
        ("assignment-changed", "", b),
        ("stable", "", ""),
    ]
    assert details(h.gc, "g", "generation-bumped") == [("", {"generation": 1})]
    assert details(h.gc, "g", "assignment-changed") == [
        (a, {"added": ["t-0", "t-2", "t-4"], "removed": []}),
        (b, {"added": ["t-1", "t-3", "t-5"], "removed": []})]
    mark = h.gc.events.issued
    h.leave("g", (b, None))
    assert seen(h.gc, "g", mark) == [("member-left", "leave-request", b),
                                     ("rebalance-started", "member-left", "")]
    h.until_answered([h.join("g", a)])
    mark = h.gc.events.issued
    h.leave("g", (a, None))
    h.tick()
    assert seen(h.gc, "g", mark) == [
        ("member-left", "leave-request", a), ("rebalance-started", "member-left", ""),
        ("generation-bumped", "", ""), ("empty", "", "")]
    mark = h.gc.events.issued
    h.delete_groups("g")
    assert seen(h.gc, "g", mark) == [("dead", "request", ""), ("deleted", "request", "")]


def test_classic_session_timeout_and_a_member_that_does_not_rejoin() -> None:
    h = classic()
    a, b = h.stable_group("g", 2)
    mark = h.gc.events.issued
    # b stops heartbeating; a keeps its session and rejoins when told.
    for _ in range(4):
        h.advance(3_000)
        h.heartbeat("g", a, 1)
    assert seen(h.gc, "g", mark) == [("member-left", "session-timeout", b),
                                     ("rebalance-started", "member-left", "")]
    h.until_answered([h.join("g", a)])
    mark = h.gc.events.issued
    c = h.join_dynamic("g", client_id="c")
    # a heartbeats (so its session lives) but never rejoins: the rebalance time-out ends it.
    for _ in range(11):
        h.advance(3_000)
        h.heartbeat("g", a, 2)
    c_id = h.response(c).member_id
    assert seen(h.gc, "g", mark) == [
        ("member-joined", "", c_id), ("rebalance-started", "member-joined", ""),
        ("member-left", "rebalance-timeout", a), ("generation-bumped", "", "")]


def test_classic_static_member_replaced_and_admin_removal() -> None:
    h = classic()
    a, b = h.stable_group("g", 2, static=True)
    mark = h.gc.events.issued
    h.join("g", instance="inst-0", client_id="c0")
    [(_, _, new)] = [s for s in seen(h.gc, "g", mark) if s[0] == "member-joined"]
    assert seen(h.gc, "g", mark)[:2] == [("member-left", "replaced", a),
                                         ("member-joined", "", new)]
    mark = h.gc.events.issued
    h.leave("g", ("", "inst-1"))
    assert seen(h.gc, "g", mark)[0] == ("member-left", "removed", b)


def test_steady_heartbeats_write_no_event() -> None:
    h = classic()
    a, b = h.stable_group("g", 2)
    written = len(h.records)
    for _ in range(5):
        h.advance(1_000)
        h.heartbeat("g", a, 1)
        h.heartbeat("g", b, 1)
    assert h.records[written:] == []


def test_commits_are_summarised_once_per_interval() -> None:
    h = classic()
    a, _ = h.stable_group("g", 2)
    for i in range(5):
        h.commit("g", {("t", 0): i, ("t", 2): i}, generation=1, member_id=a)
    h.advance(COMMIT_SUMMARY_MS)
    h.commit("g", {("t", 0): 9}, generation=1, member_id=a)
    assert details(h.gc, "g", "offsets-committed") == [
        ("", {"commits": 1, "partitions": 2}), ("", {"commits": 5, "partitions": 9})]


def test_offsets_deleted_and_expired() -> None:
    h = classic(offsets_retention_ms=10_000, offsets_retention_check_interval_ms=1_000)
    h.commit("simple", {("u", 0): 5, ("u", 1): 6, ("t", 0): 1})
    h.delete_offsets("simple", {"u": [1]})
    assert details(h.gc, "simple", "offsets-deleted") == [("", {"partitions": ["u-1"]})]
    h.advance(11_000)
    assert seen(h.gc, "simple", skip=("offsets-committed",)) == [
        ("offsets-deleted", "request", ""), ("offsets-expired", "retention", ""),
        ("dead", "retention", ""), ("deleted", "retention", "")]
    assert details(h.gc, "simple", "offsets-expired") == [("", {"partitions": ["t-0", "u-0"]})]


def test_events_are_not_written_to_consumer_offsets() -> None:
    h = classic()
    h.stable_group("g", 2)
    events = [r for r in h.records if type(r.key) is GroupEventKey]
    assert events and [kafka_record(r) for r in events] == [None] * len(events)


def test_events_off_write_no_record() -> None:
    h = Harness(GroupConfig(initial_rebalance_delay_ms=100))
    a, _ = h.stable_group("g", 2)
    h.commit("g", {("t", 0): 1}, generation=1, member_id=a)
    h.leave("g", (a, None))
    assert [r for r in h.records if type(r.key) is GroupEventKey] == []
    assert len(h.gc.events) == 0


def test_a_handler_that_raises_writes_no_event(monkeypatch: pytest.MonkeyPatch) -> None:
    h = classic()
    h.stable_group("g", 2)
    issued, count = h.gc.events.issued, len(h.records)

    def broken(*args: object) -> None:
        raise RuntimeError("boom")

    rebalancer = h.gc._rebalance
    monkeypatch.setattr(rebalancer, "maybe_prepare_rebalance_or_complete_join", broken)
    token = h.join_dynamic("g", client_id="late")
    assert h.response(token).error_code != 0
    assert [r for r in h.records[count:] if type(r.key) is GroupEventKey] == []
    assert h.gc.events.issued == issued  # the next event takes the number it would have


def test_classic_replay_gives_the_same_history() -> None:
    h = classic()
    a, b = h.stable_group("g", 2)
    h.commit("g", {("t", 0): 1}, generation=1, member_id=a)
    h.leave("g", (b, None))
    h.until_answered([h.join("g", a)])
    assert len(h.gc.events) > 8
    assert replayed_history(h.records, lambda: GroupCoordinator(h.config, h.topics)) == \
        history(h.gc)


# -- KIP-1249 pauses (classic) -------------------------------------------------------


def test_classic_pause_reset_resume() -> None:
    h = classic()
    h.stable_group("g", 2)
    mark = h.gc.events.issued
    change(h, 1000, "g", {"t": [0, 1]})
    assert seen(h.gc, "g", mark) == [("partitions-paused", "request", ""),
                                     ("rebalance-started", "partitions-paused", "")]
    assert details(h.gc, "g", "partitions-paused") == [("", {"topic": "t",
                                                             "partitions": ["0", "1"]})]
    mark = h.gc.events.issued
    h.commit("g", {("t", 0): 0, ("t", 1): 7})
    assert seen(h.gc, "g", mark) == [("offsets-reset", "request", "")]
    assert details(h.gc, "g", "offsets-reset") == [
        ("", {"partitions": ["t-0", "t-1"], "offsets": ["0", "7"]})]
    mark = h.gc.events.issued
    change(h, 1001, "g", {"t": [1]})
    assert seen(h.gc, "g", mark) == [("partitions-resumed", "request", "")]  # rebalancing


# -- KIP-848 consumer groups ------------------------------------------------------


def consumer_harness(**overrides: Any) -> ch.Harness:
    return ch.Harness(ch.config(events=True, **overrides))


def test_consumer_group_life() -> None:
    h = consumer_harness()
    one = ch.Client(h, "g")
    one.join()
    ch.settle([one])
    a = one.member_id
    assert seen(h.gc, "g") == [
        ("group-created", "", ""),
        ("member-joined", "", a),
        ("epoch-bumped", "member-joined", ""),
        ("assignment-changed", "", a),
        ("stable", "", ""),
    ]
    assert details(h.gc, "g", "epoch-bumped") == [("", {"epoch": 1})]
    assert details(h.gc, "g", "assignment-changed") == [
        (a, {"added": [f"t-{p}" for p in range(6)], "removed": []})]
    written = len(h.records)
    for _ in range(3):
        h.advance(1_000)
        one.beat()
    assert h.records[written:] == [], "a steady member's heartbeats write nothing"
    two = ch.Client(h, "g")
    mark = h.gc.events.issued
    two.join()
    ch.settle([one, two])
    b = two.member_id
    got = seen(h.gc, "g", mark)
    assert got[:2] == [("member-joined", "", b), ("epoch-bumped", "member-joined", "")]
    assert got[-1] == ("stable", "", "")
    moved = dict(details(h.gc, "g", "assignment-changed")[1:])
    assert moved[a]["removed"] == moved[b]["added"]
    assert len(moved[b]["added"]) == 3
    # The first member is killed: its session expires.
    mark = h.gc.events.issued
    for _ in range(10):
        h.advance(5_000)
        two.beat()
    got = seen(h.gc, "g", mark)
    assert got[:2] == [("member-left", "session-timeout", a), ("epoch-bumped", "member-left", "")]
    assert got[-1] == ("stable", "", "")
    mark = h.gc.events.issued
    two.leave()
    assert seen(h.gc, "g", mark) == [("member-left", "leave-request", b),
                                     ("epoch-bumped", "member-left", ""), ("empty", "", "")]
    mark = h.gc.events.issued
    h.delete_groups("g")
    assert seen(h.gc, "g", mark) == [("deleted", "request", "")]
    assert replayed_history(h.records, h._coordinator) == history(h.gc)


def test_consumer_subscription_pause_resume_and_revocation_timeout() -> None:
    h = consumer_harness()
    one, two = ch.Client(h, "g"), ch.Client(h, "g")
    one.join()
    two.join()
    ch.settle([one, two])
    mark = h.gc.events.issued
    one.subscribe(["t", "u"])
    assert seen(h.gc, "g", mark)[0] == ("epoch-bumped", "subscription-changed", "")
    ch.settle([one, two])
    mark = h.gc.events.issued
    h.pause("g", {"t": [0]})
    assert seen(h.gc, "g", mark) == [("partitions-paused", "request", ""),
                                     ("epoch-bumped", "partitions-paused", "")]
    ch.settle([one, two])
    mark = h.gc.events.issued
    h.resume("g", {"t": [0]})
    assert seen(h.gc, "g", mark) == [("partitions-resumed", "request", ""),
                                     ("epoch-bumped", "partitions-resumed", "")]
    ch.settle([one, two])
    # A third member joins; the two keep partitions it should get past their time-out.
    three = ch.Client(h, "g")
    three.join()
    one.beat(ack=False)
    two.beat(ack=False)
    mark = h.gc.events.issued
    for _ in range(8):
        h.advance(5_000)
        one.beat(ack=False)
        two.beat(ack=False)
        three.beat()
    left = [s for s in seen(h.gc, "g", mark) if s[0] == "member-left"]
    assert left and all(cause == "rebalance-timeout" for _, cause, _ in left)


def test_consumer_static_member_replaced() -> None:
    h = consumer_harness()
    one = ch.Client(h, "g", instance="i1")
    one.join()
    ch.settle([one])
    old = one.member_id
    mark = h.gc.events.issued
    again = ch.Client(h, "g", instance="i1")
    one.leave(epoch=-2)
    again.join()
    got = seen(h.gc, "g", mark)
    assert got[:2] == [("member-left", "replaced", old), ("member-joined", "", again.member_id)]


# -- KIP-1071 streams groups ----------------------------------------------------------


def test_streams_group_life() -> None:
    h = StreamsHarness(cfg=streams_config(events=True))
    r = h.join("m1")
    assert r.error_code == 0
    r = h.beat("m1", r.member_epoch, set())
    got = seen(h.gc, "app")
    assert got[:3] == [("group-created", "", ""), ("member-joined", "", "m1"),
                       ("epoch-bumped", "member-joined", "")]
    assert ("stable", "", "") in got
    [(member, moved)] = details(h.gc, "app", "assignment-changed")
    assert member == "m1"
    assert moved["removed"] == [] and "0_0" in moved["added"]
    mark = h.gc.events.issued
    h.call(88, 1, T(group_id="app", member_id="m1", member_epoch=-1))
    assert seen(h.gc, "app", mark) == [("member-left", "leave-request", "m1"),
                                       ("epoch-bumped", "member-left", ""), ("empty", "", "")]
    assert replayed_history(h.records, h._coordinator) == history(h.gc)


# -- transactions ---------------------------------------------------------------------


def test_transaction_begun_committed_aborted_and_timed_out() -> None:
    m = Model(group_config=GroupConfig(events=True))
    r = m.init("tx", timeout_ms=10_000)
    pid, epoch = r.producer_id, r.producer_epoch
    assert m.add_partitions("tx", pid, epoch, {"out": [1, 0]}) == {("out", 0): 0, ("out", 1): 0}
    assert m.add_offsets("tx", pid, epoch, "g") == 0
    assert m.end("tx", pid, epoch, True).error_code == 0
    assert m.add_partitions("tx", pid, epoch, {"out": [0]}) == {("out", 0): 0}
    assert m.end("tx", pid, epoch, False).error_code == 0
    assert m.add_partitions("tx", pid, epoch, {"in": [0]}) == {("in", 0): 0}
    m.advance(10_000)
    events = m.broker.groups.events.query(group="tx")
    assert [(e.kind, e.cause, e.group_type) for e in events] == [
        ("transaction-begun", "request", "transaction"),
        ("transaction-committed", "request", "transaction"),
        ("transaction-begun", "request", "transaction"),
        ("transaction-aborted", "request", "transaction"),
        ("transaction-begun", "request", "transaction"),
        ("transaction-timed-out", "timeout", "transaction"),
        ("transaction-aborted", "timeout", "transaction"),
    ]
    assert events[1].detail == {"producer_id": pid, "partitions": ["out-0", "out-1"],
                                "groups": ["g"]}
    live = history(m.broker.groups)
    m.restart()
    assert history(m.broker.groups) == live


def test_transactions_without_events_write_none() -> None:
    m = Model()
    r = m.init("tx")
    assert m.add_partitions("tx", r.producer_id, r.producer_epoch, {"out": [0]}) == {
        ("out", 0): 0}
    assert [r for r in m.log if type(r.key) is GroupEventKey] == []


def test_streams_pause_resume_and_session_timeout() -> None:
    h = StreamsHarness(cfg=streams_config(events=True))
    one = h.join("m1")
    two = h.join("m2")
    h.beat("m1", one.member_epoch, set())
    mark = h.gc.events.issued
    h.pause("app", {"words": [0]})
    assert seen(h.gc, "app", mark) == [("partitions-paused", "request", ""),
                                       ("epoch-bumped", "partitions-paused", "")]
    mark = h.gc.events.issued
    h.resume("app", {"words": [0]})
    assert seen(h.gc, "app", mark) == [("partitions-resumed", "request", ""),
                                       ("epoch-bumped", "partitions-resumed", "")]
    mark = h.gc.events.issued
    epoch = two.member_epoch
    for _ in range(10):
        h.advance(5_000)
        epoch = h.beat("m2", epoch, None).member_epoch
    assert seen(h.gc, "app", mark)[:2] == [("member-left", "session-timeout", "m1"),
                                           ("epoch-bumped", "member-left", "")]
