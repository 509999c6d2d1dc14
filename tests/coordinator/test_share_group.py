"""Kafka's simple share assignor and the share group's records folded back."""

from __future__ import annotations

import uuid

import pytest

from kcsim.coordinator.share.assignor import _tp_hash, simple_assign
from kcsim.coordinator.share.model import ShareGroups, ShareMember, member_records, target_records
from kcsim.coordinator.shared.java import JavaHashMap, timeline_hash_map_order

T1 = uuid.UUID(int=1)
T2 = uuid.UUID(int=2)


def partitions(assignment: dict[str, dict[uuid.UUID, frozenset[int]]]) -> dict[str, set[tuple[uuid.UUID, int]]]:
    return {m: {(t, p) for t, ps in a.items() for p in ps} for m, a in assignment.items()}


def test_several_members_share_one_partition():
    members = {f"m{i}": frozenset({T1}) for i in range(3)}
    result = simple_assign(members, {T1: 1}, {})
    assert partitions(result) == {m: {(T1, 0)} for m in members}


def assign(subscriptions: dict[str, frozenset[uuid.UUID]], counts: dict[uuid.UUID, int],
           current: dict[str, dict[uuid.UUID, frozenset[int]]] | None = None) -> dict[str, dict[uuid.UUID, set[int]]]:
    """The assignment with partitions as plain sets; the expected values below are what
    Kafka 4.4's SimpleAssignor answers for the same inputs."""
    result = simple_assign(subscriptions, counts, current or {})
    return {m: {t: set(ps) for t, ps in a.items()} for m, a in result.items()}


def on(topic: uuid.UUID, *ps: int) -> dict[uuid.UUID, frozenset[int]]:
    return {topic: frozenset(ps)}


def test_fewer_members_than_partitions_split_them_evenly():
    members = {m: frozenset({T1}) for m in "abc"}
    assert assign(members, {T1: 7}) == {"a": {T1: {0, 1, 4}}, "b": {T1: {2, 5}}, "c": {T1: {3, 6}}}


def test_more_members_than_partitions_share_each_partition_as_evenly():
    # 5 members over 2 partitions: each partition wants 3, so one member takes both
    members = {m: frozenset({T1}) for m in "abcde"}
    assert assign(members, {T1: 2}) == {
        "a": {T1: {0, 1}}, "b": {T1: {1}}, "c": {T1: {1}}, "d": {T1: {0}}, "e": {T1: {0}}}


def test_a_joining_member_takes_partitions_from_those_over_their_share():
    members = {m: frozenset({T1}) for m in "ab"}
    before = assign(members, {T1: 4})
    assert before == {"a": {T1: {1, 3}}, "b": {T1: {0, 2}}}
    current = {"a": on(T1, 2, 3), "b": on(T1, 0, 1)}
    after = assign({**members, "c": frozenset({T1})}, {T1: 4}, current)
    assert after == {"a": {T1: {2, 3}}, "b": {T1: {0}}, "c": {T1: {1}}}


def test_those_staying_keep_theirs_when_a_member_leaves():
    members = {m: frozenset({T1}) for m in "ab"}
    after = assign(members, {T1: 4}, {"a": on(T1, 0, 3), "b": on(T1, 1)})
    assert after == {"a": {T1: {0, 3}}, "b": {T1: {1, 2}}}


def test_partitions_shared_more_than_desired_are_taken_back():
    members = {m: frozenset({T1}) for m in "abcd"}
    current = {"a": on(T1, 0, 1, 2), "b": on(T1, 0), "c": on(T1, 0)}
    assert assign(members, {T1: 3}, current) == {
        "a": {T1: {1, 2}}, "b": {T1: {0}}, "c": {T1: {0, 1}}, "d": {T1: {2}}}


def test_members_drop_topics_nobody_subscribes_to_when_subscriptions_agree():
    current = {"a": {T1: frozenset({0, 1}), T2: frozenset({0})}}
    assert assign({"a": frozenset({T1}), "b": frozenset({T1})}, {T1: 2, T2: 1}, current) == {
        "a": {T1: {0}}, "b": {T1: {1}}}


def test_heterogeneous_subscriptions_are_balanced_topic_by_topic():
    members = {"a": frozenset({T1}), "b": frozenset({T2}), "c": frozenset({T1, T2})}
    assert assign(members, {T1: 3, T2: 2}) == {
        "a": {T1: {0, 2}}, "b": {T2: {0}}, "c": {T1: {1}, T2: {1}}}


def test_heterogeneous_members_keep_a_topic_nobody_subscribes_to_any_more():
    # b also subscribes to a topic not made yet: the names differ, so Kafka goes topic by
    # topic, and only T1 is walked
    members = {"a": frozenset({T1}), "b": frozenset({T1})}
    current = {"a": {T1: frozenset({0}), T2: frozenset({1})}, "b": on(T1, 1, 2)}
    result = simple_assign(members, {T1: 3, T2: 2}, current, homogeneous=False)
    assert result == {"a": {T1: frozenset({0, 1}), T2: frozenset({1})}, "b": on(T1, 2)}


@pytest.mark.parametrize("count", [0, 1])
def test_heterogeneous_subscriptions_stay_within_each_members_topics(count):
    members = {"a": frozenset({T1}), "b": frozenset({T2})}
    result = partitions(simple_assign(members, {T1: 3, T2: count}, {}))
    assert {t for t, _ in result["a"]} == {T1}
    assert result["b"] == ({(T2, 0)} if count else set())


def test_partitions_are_walked_in_the_order_javas_hashmap_lists_them():
    """computeIfAbsent puts a new key in front of its bucket, put behind: two partitions
    that share a bucket come out as Java 17 lists them (observed with these topic ids)."""
    t0 = uuid.UUID("c5d9bde3-d116-c80c-4709-0bfa2677f909")
    t1 = uuid.UUID("21023c78-ba6f-636a-1a35-2b8bab96c913")
    walked: JavaHashMap[tuple[uuid.UUID, int], None] = JavaHashMap(_tp_hash, 30)
    for topic, count in ((t1, 5), (t0, 16)):
        for p in range(count):
            walked.compute_if_absent((topic, p), lambda: None)
    order = [(0 if t == t0 else 1, p) for t, p in walked]
    assert order == [(0, 15), (0, 14), (0, 13), (0, 12), (0, 11), (1, 2), (0, 10), (1, 3),
                     (0, 9), (1, 4), (0, 8), (0, 7), (0, 6), (0, 5), (0, 4), (0, 3), (0, 2),
                     (0, 1), (0, 0), (1, 0), (1, 1)]
    appended: JavaHashMap[tuple[uuid.UUID, int], None] = JavaHashMap(_tp_hash, 30)
    for topic, count in ((t1, 5), (t0, 16)):
        for p in range(count):
            appended.put((topic, p), None)
    assert appended.keys().index((t1, 2)) < appended.keys().index((t0, 11))


def test_members_are_listed_as_kafkas_timeline_table_of_the_group_lists_them():
    """Orders observed from Kafka 4.4's TimelineHashMap: by slot, the last put first within
    one, and a table grown by members since gone keeps its slots."""
    assert timeline_hash_map_order("abc") == ["c", "b", "a"]
    assert timeline_hash_map_order(["a", "c", "d", "e", "f"], peak=5) == ["f", "c", "e", "d", "a"]
    assert timeline_hash_map_order(["x0", "y0", "z0"]) == ["z0", "y0", "x0"]
    assert timeline_hash_map_order(["x0", "y0", "z0"], peak=6) == ["z0", "x0", "y0"]


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
