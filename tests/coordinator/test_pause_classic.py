"""KIP-1249 for classic groups (a kcsim extension): SyncGroup hands out assignments without
paused partitions, and pausing or resuming makes the group rebalance."""

from __future__ import annotations

from typing import Any

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode as E

from .group_harness import Harness, assignment, decode_assignment


def change(h: Harness, api_key: int, group: str, partitions: dict[str, list[int]]) -> Any:
    cls = request_class(api_key)
    name = cls.__name__.removesuffix("Request")
    topic_cls = getattr(cls, f"{name}RequestTopic")
    part_cls = getattr(cls, f"{name}RequestPartition")
    return h.answer(api_key, 0, cls(group_id=group, topics=[
        topic_cls(name=t, partitions=[part_cls(partition_index=p) for p in ps])
        for t, ps in partitions.items()]))


def rebalance(h: Harness, group: str, members: list[str], plan: dict[str, dict[str, list[int]]]
              ) -> dict[str, dict[str, list[int]]]:
    """Every member rejoins and syncs; the leader sends `plan` (by member index)."""
    tokens = [h.join(group, m) for m in members]
    h.until_answered(tokens)
    joined = [h.response(t) for t in tokens]
    assert all(r.error_code == 0 for r in joined), joined
    generation, leader = joined[0].generation_id, joined[0].leader
    ids = [r.member_id for r in joined]
    assignments = {ids[int(k)]: assignment(v) for k, v in plan.items()}
    syncs = {m: h.sync(group, m, generation) for m in ids if m != leader}
    syncs[leader] = h.sync(group, leader, generation, assignments=assignments)
    return {ids.index(m): decode_assignment(h.response(t).assignment) for m, t in syncs.items()}


PLAN = {"0": {"t": [0, 1, 2]}, "1": {"t": [3, 4, 5]}}


def test_pause_rebalances_and_sync_group_leaves_paused_partitions_out() -> None:
    h = Harness()
    members = h.stable_group("g", 2)
    r = change(h, 1000, "g", {"t": [1, 4]})
    assert r.error_code == 0
    assert h.gc.group_state("g") == "PreparingRebalance"
    got = rebalance(h, "g", members, PLAN)
    assert got == {0: {"t": [0, 2]}, 1: {"t": [3, 5]}}
    assert h.gc.group_state("g") == "Stable"


def test_admin_commits_only_for_paused_partitions_of_a_running_classic_group() -> None:
    h = Harness()
    members = h.stable_group("g", 2)
    change(h, 1000, "g", {"t": [1]})
    rebalance(h, "g", members, PLAN)
    result = h.commit("g", {("t", 1): 0, ("t", 2): 0})
    errors = {(t.name, p.partition_index): p.error_code for t in result.topics for p in t.partitions}
    assert errors == {("t", 1): 0, ("t", 2): E.UNKNOWN_MEMBER_ID}
    assert h.gc.committed_offsets("g")[("t", 1)].offset == 0


def test_resume_rebalances_and_hands_the_partitions_out_again() -> None:
    h = Harness()
    members = h.stable_group("g", 2)
    change(h, 1000, "g", {"t": [1]})
    rebalance(h, "g", members, PLAN)
    assert change(h, 1001, "g", {"t": [1]}).error_code == 0
    assert h.gc.group_state("g") == "PreparingRebalance"
    assert rebalance(h, "g", members, PLAN) == {0: {"t": [0, 1, 2]}, 1: {"t": [3, 4, 5]}}


def test_the_pause_and_the_filtered_assignment_survive_a_restart() -> None:
    h = Harness()
    members = h.stable_group("g", 2)
    change(h, 1000, "g", {"t": [1]})
    rebalance(h, "g", members, PLAN)
    fresh = h.gc.__class__(h.config, h.topics)
    for record in h.records:
        fresh.apply(record)
    assert fresh.paused_partitions("g") == {"t": {1}}
    stored = {m.member_id: decode_assignment(m.assignment) for m in fresh.group("g").members.values()}
    assert sorted(stored.values(), key=str) == [{"t": [0, 2]}, {"t": [3, 4, 5]}]


def test_groups_of_other_protocol_types_are_left_alone() -> None:
    h = Harness()
    tokens = [h.join_dynamic("c", protocol_type="connect", protocols=[("default", b"x")])]
    h.until_answered(tokens)
    r = change(h, 1000, "c", {"t": [0]})
    assert r.error_code == 0
    assert h.gc.group_state("c") == "CompletingRebalance"
