"""Committed offsets, kcsim against Kafka: OffsetCommit, OffsetFetch, OffsetDelete at every
version both serve, with the error paths clients meet."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import ops
from .ops import OFFSET_COMMIT, OFFSET_DELETE, OFFSET_FETCH
from .test_classic_groups import stable_member

if TYPE_CHECKING:
    from .harness import Run

Across = Any


def commit_simple(run: Run, version: int) -> None:
    """Memberless commits: new group, unknown topic, partition out of range, long metadata."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, 2, compare=False)
    ids = ops.topic_ids(run, topic)
    ops.commit(run, group, {(topic, 0): 10, (topic, 1): 20}, version=version, ids=ids,
               metadata="m")
    ops.commit(run, group, {(topic, 5): 1}, version=version, ids=ids)
    ops.commit(run, group, {(run.topic("missing"), 0): 1}, version=version)
    ops.commit(run, group, {(topic, 0): 11}, version=version, ids=ids, metadata="x" * 5000)
    ops.commit(run, group, {(topic, 0): 12}, version=version, ids=ids, metadata=None)
    ops.fetch(run, group, {topic: [0, 1, 2]}, ids=ids)
    ops.describe(run, [group])


def commit_in_active_group(run: Run, version: int) -> None:
    """Commits into a classic group with members: simple, stale generation, unknown member."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, compare=False)
    ids = ops.topic_ids(run, topic)
    member, gen = stable_member(run, group, topic)
    ops.commit(run, group, {(topic, 0): 1}, version=version, ids=ids)
    ops.commit(run, group, {(topic, 0): 2}, generation=gen, member_id=member, version=version,
               ids=ids)
    ops.commit(run, group, {(topic, 0): 3}, generation=gen + 1, member_id=member,
               version=version, ids=ids)
    ops.commit(run, group, {(topic, 0): 4}, generation=gen, member_id="nobody",
               version=version, ids=ids)
    ops.commit(run, group, {(topic, 0): 5}, generation=gen, member_id=member,
               instance="not-this-one", version=version, ids=ids)
    ops.fetch(run, group, {topic: [0]}, ids=ids)


def commit_to_static_member(run: Run, version: int) -> None:
    """v7+: a commit naming a static member's instance id, right and wrong member id."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, compare=False)
    ids = ops.topic_ids(run, topic)
    member, gen = stable_member(run, group, topic, instance="inst")
    ops.commit(run, group, {(topic, 0): 1}, generation=gen, member_id=member, instance="inst",
               version=version, ids=ids)
    ops.commit(run, group, {(topic, 0): 2}, generation=gen, member_id="other", instance="inst",
               version=version, ids=ids)


def commit_during_rebalance(run: Run, version: int) -> None:
    """A commit by a member while its group prepares a rebalance."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, compare=False)
    ids = ops.topic_ids(run, topic)
    a, gen = stable_member(run, group, topic)
    b_id = ops.join(run, group, on="b", topics=(topic,)).member_id
    ops.join(run, group, b_id, on="b", topics=(topic,), send_only=True)
    run.until("PreparingRebalance", lambda: ops.state_of(run, group) == "PreparingRebalance")
    ops.commit(run, group, {(topic, 0): 9}, generation=gen, member_id=a, version=version, ids=ids)
    ops.leave(run, group, [(a, None)])
    run.receive("b")


def test_offset_commit_simple(across: Across) -> None:
    assert across(OFFSET_COMMIT, commit_simple)


def test_offset_commit_to_active_group(across: Across) -> None:
    assert across(OFFSET_COMMIT, commit_in_active_group)


def test_offset_commit_static_member(across: Across) -> None:
    assert 7 in across(OFFSET_COMMIT,
                       lambda run, v: commit_to_static_member(run, v) if v >= 7 else None)


def test_offset_commit_during_rebalance(across: Across) -> None:
    assert across(OFFSET_COMMIT, commit_during_rebalance)


def fetch_cases(run: Run, version: int) -> None:
    """Known and unknown groups, named and all (null) topics, unknown topics and partitions."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, 2, compare=False)
    ids = ops.topic_ids(run, topic)
    ops.commit(run, group, {(topic, 0): 5}, ids=ids)
    ops.fetch(run, group, {topic: [0, 1, 7]}, version=version, ids=ids)
    ops.fetch(run, group, {run.topic("missing"): [0]}, version=version)
    ops.fetch(run, run.group("unknown"), {topic: [0]}, version=version, ids=ids)
    if version >= 2:
        ops.fetch(run, group, None, version=version)
        ops.fetch(run, run.group("unknown"), None, version=version)
    if version >= 7:
        ops.fetch(run, group, {topic: [0]}, version=version, ids=ids, require_stable=True)
    if version >= 8:
        ops.fetch(run, group, {topic: [0]}, version=version, ids=ids, more_groups={
            run.group("unknown"): {topic: [0]}, run.group("other"): None})


def fetch_by_member(run: Run, version: int) -> None:
    """v9+: OffsetFetch naming a member of a classic group (the epoch is not checked there)."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, compare=False)
    ids = ops.topic_ids(run, topic)
    member, gen = stable_member(run, group, topic)
    ops.commit(run, group, {(topic, 0): 3}, generation=gen, member_id=member, ids=ids)
    ops.fetch(run, group, {topic: [0]}, version=version, ids=ids, member_id=member,
              member_epoch=gen)
    ops.fetch(run, group, {topic: [0]}, version=version, ids=ids, member_id="nobody",
              member_epoch=5)


def test_offset_fetch(across: Across) -> None:
    assert across(OFFSET_FETCH, fetch_cases)


def test_offset_fetch_by_member(across: Across) -> None:
    assert 9 in across(OFFSET_FETCH, lambda run, v: fetch_by_member(run, v) if v >= 9 else None)


def offset_delete_cases(run: Run, version: int) -> None:
    """Unknown group, a topic the group subscribes to, an empty group, unknown partitions."""
    group, empty, topic, other = run.group(), run.group("empty"), run.topic(), run.topic("o")
    ops.create_topic(run, topic, 2, compare=False)
    ops.create_topic(run, other, compare=False)
    ops.offset_delete(run, run.group("unknown"), {topic: [0]}, version=version)
    ops.commit(run, empty, {(topic, 0): 1, (topic, 1): 2})
    ops.offset_delete(run, empty, {topic: [0, 9], run.topic("missing"): [0]}, version=version)
    ops.fetch(run, empty, {topic: [0, 1]})
    member, gen = stable_member(run, group, topic)
    ops.commit(run, group, {(topic, 0): 1, (other, 0): 2}, generation=gen, member_id=member)
    ops.offset_delete(run, group, {topic: [0], other: [0]}, version=version)
    ops.fetch(run, group, {topic: [0], other: [0]})


def test_offset_delete(across: Across) -> None:
    assert across(OFFSET_DELETE, offset_delete_cases)
