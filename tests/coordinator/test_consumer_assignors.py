"""The `uniform` and `range` server assignors: balance, stickiness, ranges, paused gaps."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcsim.coordinator import GroupConfig, GroupCoordinator, assignor_names
from kcsim.coordinator.consumer.assignors import MemberSpec, range_, uniform

T1 = uuid.UUID(int=1)
T2 = uuid.UUID(int=2)


def spec(mid: str, topics: set[uuid.UUID], current: dict | None = None,
         instance: str | None = None) -> MemberSpec:
    return MemberSpec(mid, instance, frozenset(topics),
                      {t: frozenset(ps) for t, ps in (current or {}).items()})


def sizes(assignment: dict) -> list[int]:
    return sorted(sum(len(ps) for ps in a.values()) for a in assignment.values())


def every_partition_once(assignment: dict, available: dict) -> None:
    seen = [(t, p) for a in assignment.values() for t, ps in a.items() for p in ps]
    assert len(seen) == len(set(seen)), "a partition was given twice"
    assert set(seen) == {(t, p) for t, ps in available.items() for p in ps}


def test_uniform_balances_and_keeps_what_members_had() -> None:
    available = {T1: list(range(6))}
    before = uniform([spec("a", {T1}), spec("b", {T1})], available)
    assert sizes(before) == [3, 3]
    after = uniform([spec("a", {T1}, before["a"]), spec("b", {T1}, before["b"]),
                     spec("c", {T1})], available)
    assert sizes(after) == [2, 2, 2]
    every_partition_once(after, available)
    assert after["a"][T1] <= before["a"][T1] and after["b"][T1] <= before["b"][T1]


def test_uniform_leaves_paused_partitions_out() -> None:
    available = {T1: [0, 1, 4, 5]}  # 2 and 3 are paused
    current = {"a": {T1: {0, 1, 2}}, "b": {T1: {3, 4, 5}}}
    result = uniform([spec("a", {T1}, current["a"]), spec("b", {T1}, current["b"])], available)
    every_partition_once(result, available)
    assert result["a"][T1] == {0, 1} and result["b"][T1] == {4, 5}


def test_uniform_with_different_subscriptions() -> None:
    available = {T1: list(range(4)), T2: list(range(4))}
    members = [spec("a", {T1}), spec("b", {T1, T2}), spec("c", {T2})]
    result = uniform(members, available)
    every_partition_once(result, available)
    assert T2 not in result["a"] and T1 not in result["c"]
    assert max(sizes(result)) - min(sizes(result)) <= 1


def test_range_gives_contiguous_ranges_static_members_first() -> None:
    available = {T1: list(range(7)), T2: list(range(7))}
    members = [spec("m-b", {T1, T2}), spec("m-a", {T1, T2}), spec("z", {T1, T2}, instance="i-0")]
    result = range_(members, available)
    assert result["z"] == {T1: frozenset({0, 1, 2}), T2: frozenset({0, 1, 2})}
    assert result["m-a"] == {T1: frozenset({3, 4}), T2: frozenset({3, 4})}
    assert result["m-b"] == {T1: frozenset({5, 6}), T2: frozenset({5, 6})}


def test_range_ranges_skip_paused_partitions() -> None:
    available = {T1: [0, 1, 3, 4]}
    result = range_([spec("a", {T1}), spec("b", {T1})], available)
    assert result == {"a": {T1: frozenset({0, 1})}, "b": {T1: frozenset({3, 4})}}


@settings(max_examples=200, deadline=None)
@given(
    n_members=st.integers(1, 8),
    counts=st.tuples(st.integers(0, 12), st.integers(0, 12)),
    paused=st.sets(st.integers(0, 11), max_size=6),
    subscriptions=st.lists(st.sampled_from([(1,), (2,), (1, 2)]), min_size=8, max_size=8),
    rounds=st.integers(1, 3),
)
def test_uniform_places_every_assignable_partition_once(
    n_members: int, counts: tuple[int, int], paused: set[int],
    subscriptions: list[tuple[int, ...]], rounds: int,
) -> None:
    topics = {T1: counts[0], T2: counts[1]}
    available = {t: [p for p in range(n) if p not in paused] for t, n in topics.items()}
    current: dict = {}
    for _ in range(rounds):
        members = [spec(f"m{i}", {uuid.UUID(int=x) for x in subscriptions[i]}, current.get(f"m{i}"))
                   for i in range(n_members)]
        current = uniform(members, available)
        subscribed = {t for m in members for t in m.topics}
        every_partition_once(current, {t: ps for t, ps in available.items() if t in subscribed})
        if all(m.topics == members[0].topics for m in members):
            assert max(sizes(current)) - min(sizes(current)) <= 1


def test_configured_assignor_names_are_parsed_and_checked_in_one_place() -> None:
    assert assignor_names(" range, uniform ") == ("range", "uniform")
    assert assignor_names(["uniform"]) == ("uniform",)
    for bad in ("", "sticky", "uniform,cooperative", "range,range"):
        with pytest.raises(ValueError, match="assignors must be distinct names from uniform, range"):
            assignor_names(bad)
    with pytest.raises(ValueError, match="assignors"):
        GroupCoordinator(GroupConfig(consumer_group_assignors=("roundrobin",)), topics=None)  # type: ignore[arg-type]
