"""Kafka's simple share assignor and the share group's records folded back."""

from __future__ import annotations

import uuid

import pytest

from kcsim.coordinator.share.assignor import simple_assign
from kcsim.coordinator.share.model import ShareGroups, ShareMember, member_records, target_records
from kcsim.coordinator.shared.java import java_string_hash

T1 = uuid.UUID(int=1)
T2 = uuid.UUID(int=2)


def partitions(assignment: dict[str, dict[uuid.UUID, frozenset[int]]]) -> dict[str, set[tuple[uuid.UUID, int]]]:
    return {m: {(t, p) for t, ps in a.items() for p in ps} for m, a in assignment.items()}


def test_several_members_share_one_partition():
    members = {f"m{i}": frozenset({T1}) for i in range(3)}
    result = simple_assign(members, {T1: 1}, {})
    assert partitions(result) == {m: {(T1, 0)} for m in members}


def test_every_partition_is_assigned_and_each_member_hashed_onto_one():
    members = {"a": frozenset({T1}), "b": frozenset({T1})}
    result = partitions(simple_assign(members, {T1: 6}, {}))
    assert set().union(*result.values()) == {(T1, p) for p in range(6)}
    for m in members:
        assert (T1, abs(java_string_hash(m)) % 6) in result[m]


def test_members_keep_what_they_had_of_topics_they_still_subscribe_to():
    current = {"a": {T1: frozenset({0, 1}), T2: frozenset({0})}}
    result = partitions(simple_assign({"a": frozenset({T1}), "b": frozenset({T1})}, {T1: 2, T2: 1}, current))
    assert {(T1, 0), (T1, 1)} <= result["a"]
    assert all(t == T1 for t, _ in result["a"] | result["b"])


@pytest.mark.parametrize("count", [0, 1])
def test_heterogeneous_subscriptions_stay_within_each_members_topics(count):
    members = {"a": frozenset({T1}), "b": frozenset({T2})}
    result = partitions(simple_assign(members, {T1: 3, T2: count}, {}))
    assert {t for t, _ in result["a"]} == {T1}
    assert result["b"] == ({(T2, 0)} if count else set())


def test_no_members_no_assignment():
    assert simple_assign({}, {T1: 3}, {}) == {}


def test_the_records_fold_back_into_the_group():
    member = ShareMember("m", "rack", "client", "/1.2.3.4", frozenset({"t"}), 3, 2, {T1: frozenset({0, 2})})
    records = member_records("g", member) + target_records("g", 3, {"m": {T1: frozenset({0, 2})}}, 77)
    groups = ShareGroups()
    for r in records:
        groups.apply(r)
    g = groups.get("g")
    assert g is not None
    assert g.members["m"] == member
    assert g.targets == {"m": {T1: frozenset({0, 2})}}
    assert (g.assignment_epoch, g.assignment_timestamp) == (3, 77)
    assert g.state == "Stable"
