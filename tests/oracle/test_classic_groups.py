"""Classic groups, kcsim against Kafka: every version of every classic group API both serve.

Each scenario takes the version of the API it is about (the other steps use the
newest version both brokers serve) and runs on both brokers; the answers are
compared field by field (tests/oracle/harness.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import ops
from .ops import (
    DELETE_GROUPS,
    DESCRIBE_GROUPS,
    FIND_COORDINATOR,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    SYNC_GROUP,
)

if TYPE_CHECKING:
    from .harness import Run

Across = Any


def stable_member(run: Run, group: str, topic: str, *, on: str = "main",
                  instance: str | None = None, version: int | None = None,
                  compare: bool = True) -> tuple[str, int]:
    """Join and sync one member alone in its group: (member id, generation)."""
    j = ops.join_new(run, group, on=on, instance=instance, topics=(topic,), version=version,
                     compare=compare)
    ops.sync(run, group, j.generation_id, j.member_id, on=on, instance=instance,
             assignments={j.member_id: ops.assignment({topic: [0]})})
    return j.member_id, j.generation_id


# -- FindCoordinator ---------------------------------------------------------------------

def find_group_coordinators(run: Run, version: int) -> None:
    ops.find_coordinator(run, [run.group("a")], version=version)
    if version >= 4:
        ops.find_coordinator(run, [run.group("a"), run.group("b")], version=version)


def test_find_coordinator(across: Across) -> None:
    assert across(FIND_COORDINATOR, find_group_coordinators)


# -- JoinGroup ---------------------------------------------------------------------------

def join_alone(run: Run, version: int) -> None:
    """A new member joins, becomes leader, syncs; Describe shows it."""
    group, topic = run.group(), run.topic()
    member, generation = stable_member(run, group, topic, version=version)
    ops.heartbeat(run, group, generation, member)
    ops.describe(run, [group])


def join_errors(run: Run, version: int) -> None:
    """Session time-outs out of range, an unknown member id, an inconsistent protocol."""
    group, topic = run.group(), run.topic()
    ops.join(run, group, version=version, session_ms=500, topics=(topic,))
    ops.join(run, group, version=version, session_ms=300001, topics=(topic,))
    ops.join(run, group, "no-such-member", version=version, topics=(topic,))
    member, _ = stable_member(run, group, topic)
    ops.join(run, group, version=version, protocol_type="connect", topics=(topic,))
    ops.join(run, group, version=version, protocols=("roundrobin",), topics=(topic,))
    ops.describe(run, [group])
    ops.leave(run, group, [(member, None)])


def join_rebalance(run: Run, version: int) -> None:
    """A second member's join parks until the first rejoins; both then sync."""
    group, topic = run.group(), run.topic()
    a, gen = stable_member(run, group, topic)
    b_id = ""
    if version >= 4:
        b_id = ops.join(run, group, on="b", version=version, topics=(topic,)).member_id
    ops.join(run, group, b_id, on="b", version=version, topics=(topic,), send_only=True)
    run.until("PreparingRebalance", lambda: ops.state_of(run, group) == "PreparingRebalance")
    ops.heartbeat(run, group, gen, a)
    ops.join(run, group, a, version=version, topics=(topic,), label="leader rejoins")
    joined_b = run.receive("b")
    new_gen = joined_b.generation_id
    ops.sync(run, group, new_gen, b_id or joined_b.member_id, on="b", send_only=True)
    ops.sync(run, group, new_gen, a, assignments={
        a: ops.assignment({topic: [0]}), joined_b.member_id: ops.assignment({})})
    run.receive("b")
    ops.describe(run, [group])
    ops.heartbeat(run, group, gen, a)


def join_static(run: Run, version: int) -> None:
    """A static member rejoining with its instance id fences its old member id."""
    group, topic = run.group(), run.topic()
    old, _ = stable_member(run, group, topic, instance="static-1", version=version)
    j = ops.join(run, group, version=version, instance="static-1", topics=(topic,))
    ops.heartbeat(run, group, j.generation_id, old, instance="static-1")
    ops.heartbeat(run, group, j.generation_id, j.member_id, instance="static-1")
    ops.join(run, group, "someone-else", version=version, instance="static-1", topics=(topic,))
    ops.describe(run, [group])


def test_join_group_alone(across: Across) -> None:
    assert across(JOIN_GROUP, join_alone)


def test_join_group_errors(across: Across) -> None:
    assert across(JOIN_GROUP, join_errors)


def test_join_group_rebalance(across: Across) -> None:
    assert across(JOIN_GROUP, join_rebalance)


def test_join_group_static_members(across: Across) -> None:
    versions = across(JOIN_GROUP, lambda run, v: join_static(run, v) if v >= 5 else None)
    assert 5 in versions


# -- SyncGroup ---------------------------------------------------------------------------

def sync_errors(run: Run, version: int) -> None:
    """Unknown group, unknown member, wrong generation, protocol mismatch, then success."""
    group, topic = run.group(), run.topic()
    ops.sync(run, group, 1, "nobody", version=version)
    j = ops.join_new(run, group, topics=(topic,))
    ops.sync(run, group, j.generation_id, "nobody", version=version)
    ops.sync(run, group, j.generation_id + 1, j.member_id, version=version)
    ops.sync(run, group, j.generation_id, j.member_id, version=version, protocol_name="roundrobin")
    ops.sync(run, group, j.generation_id, j.member_id, version=version, protocol_type="connect")
    ops.sync(run, group, j.generation_id, j.member_id, version=version,
             assignments={j.member_id: ops.assignment({topic: [0]})})
    ops.sync(run, group, j.generation_id, j.member_id, version=version)


def test_sync_group(across: Across) -> None:
    assert across(SYNC_GROUP, sync_errors)


# -- Heartbeat ---------------------------------------------------------------------------

def heartbeat_cases(run: Run, version: int) -> None:
    group, topic = run.group(), run.topic()
    ops.heartbeat(run, group, 1, "nobody", version=version)
    instance = "static-hb" if version >= 3 else None
    member, gen = stable_member(run, group, topic, instance=instance)
    ops.heartbeat(run, group, gen, member, version=version, instance=instance)
    ops.heartbeat(run, group, gen + 1, member, version=version, instance=instance)
    ops.heartbeat(run, group, gen, "nobody", version=version)
    if version >= 3:
        ops.heartbeat(run, group, gen, member, version=version, instance="other-instance")
        ops.heartbeat(run, group, gen, "nobody", version=version, instance=instance)


def heartbeat_during_join(run: Run, version: int) -> None:
    """A member that has joined but not synced heartbeats (the group awaits its sync)."""
    group, topic = run.group(), run.topic()
    j = ops.join_new(run, group, topics=(topic,))
    ops.heartbeat(run, group, j.generation_id, j.member_id, version=version)


def test_heartbeat(across: Across) -> None:
    assert across(HEARTBEAT, heartbeat_cases)


def test_heartbeat_awaiting_sync(across: Across) -> None:
    assert across(HEARTBEAT, heartbeat_during_join)


# -- LeaveGroup --------------------------------------------------------------------------

def leave_cases(run: Run, version: int) -> None:
    group, topic = run.group(), run.topic()
    ops.leave(run, group, [("nobody", None)], version=version)
    member, _ = stable_member(run, group, topic)
    ops.leave(run, group, [("nobody", None)], version=version)
    ops.leave(run, group, [(member, None)], version=version)
    ops.describe(run, [group])


def leave_batch(run: Run, version: int) -> None:
    """v3+: several members at once, static ones by instance id, one unknown instance."""
    group, topic = run.group(), run.topic()
    a, _ = stable_member(run, group, topic, instance="i-a")
    ops.leave(run, group, [("", "i-a"), ("", "i-unknown")], version=version)
    ops.leave(run, group, [(a, "i-a")], version=version)
    ops.describe(run, [group])


def test_leave_group(across: Across) -> None:
    assert across(LEAVE_GROUP, leave_cases)


def test_leave_group_batch(across: Across) -> None:
    assert 3 in across(LEAVE_GROUP, lambda run, v: leave_batch(run, v) if v >= 3 else None)


# -- DescribeGroups ------------------------------------------------------------------------

def describe_cases(run: Run, version: int) -> None:
    """Unknown, empty (offsets only), stable and dead groups in one request and alone."""
    group, empty, topic = run.group(), run.group("empty"), run.topic()
    ops.describe(run, [run.group("unknown")], version=version)
    ops.create_topic(run, topic, compare=False)
    ops.commit(run, empty, {(topic, 0): 1})
    member, _ = stable_member(run, group, topic)
    ops.describe(run, [group, empty, run.group("unknown")], version=version)
    ops.describe(run, [""], version=version)
    ops.leave(run, group, [(member, None)])
    ops.delete_groups(run, [group])
    ops.describe(run, [group], version=version)


def test_describe_groups(across: Across) -> None:
    assert across(DESCRIBE_GROUPS, describe_cases)


# -- ListGroups ----------------------------------------------------------------------------

def list_cases(run: Run, version: int) -> None:
    """Filters by state and type in odd letter case (v4+, v5+)."""
    group, empty, topic = run.group(), run.group("empty"), run.topic()
    ops.create_topic(run, topic, compare=False)
    ops.commit(run, empty, {(topic, 0): 1})
    stable_member(run, group, topic)
    ops.list_groups(run, version=version)
    if version >= 4:
        ops.list_groups(run, version=version, states=["sTaBlE"])
        ops.list_groups(run, version=version, states=["empty", "Dead"])
        ops.list_groups(run, version=version, states=["NoSuchState"])
    if version >= 5:
        ops.list_groups(run, version=version, types=["Classic"])
        ops.list_groups(run, version=version, types=["CONSUMER"])
        ops.list_groups(run, version=version, types=["classic"], states=["EMPTY"])
        ops.list_groups(run, version=version, types=["unknown-type"])


def test_list_groups(across: Across) -> None:
    assert across(LIST_GROUPS, list_cases)


# -- DeleteGroups --------------------------------------------------------------------------

def delete_cases(run: Run, version: int) -> None:
    group, empty, topic = run.group(), run.group("empty"), run.topic()
    ops.create_topic(run, topic, compare=False)
    ops.commit(run, empty, {(topic, 0): 7})
    member, _ = stable_member(run, group, topic)
    ops.delete_groups(run, [run.group("unknown"), group, empty], version=version)
    ops.fetch(run, empty, {topic: [0]})
    ops.delete_groups(run, [empty], version=version)
    ops.leave(run, group, [(member, None)])
    ops.delete_groups(run, [group], version=version)
    ops.describe(run, [group])


def test_delete_groups(across: Across) -> None:
    assert across(DELETE_GROUPS, delete_cases)
