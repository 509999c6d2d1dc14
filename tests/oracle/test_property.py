"""Generated sequences of group operations, kcsim against Kafka.

Hypothesis draws short sequences of operations by a few scripted members: three
KIP-848 members (A subscribes to topic a, B to b, C to both, so every target
assignment is forced and neither broker's tie-breaking shows) and one classic
member X alone in a classic group (its joins never wait for others). Commits,
fetches, describes, lists and deletes of both groups are mixed in. Each sequence
runs on both brokers in its own groups and the answers are compared. Examples
are few (each costs real round trips) and derandomised, so every run checks the
same sequences.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import ops
from .harness import Run, compare
from .test_consumer_groups import new_member_id, owned

if TYPE_CHECKING:

    from .harness import Endpoint

SUBSCRIPTIONS = {"A": ("a",), "B": ("b",), "C": ("a", "b")}
UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH = 25, 110

OPERATIONS = st.one_of(
    st.tuples(st.sampled_from(["cg_join", "cg_heartbeat", "cg_stale", "cg_leave", "cg_commit"]),
              st.sampled_from(sorted(SUBSCRIPTIONS))),
    st.tuples(st.sampled_from(["x_join", "x_sync", "x_heartbeat", "x_leave", "x_commit",
                               "fetch", "describe", "list", "delete", "offset_delete"]),
              st.just("")),
)


@dataclass
class Member:
    member_id: str = ""
    epoch: int = 0
    owned: list[tuple[Any, list[int]]] = field(default_factory=list)


@dataclass
class Classic:
    member_id: str = ""
    generation: int = -1


def play(run: Run, steps: list[tuple[str, str]], topics: dict[str, str]) -> None:
    """Interpret one generated sequence against one broker."""
    cg, classic = run.group("cg"), run.group("classic")
    members: dict[str, Member] = {}
    x = Classic()
    ops.topic_ids(run, *topics.values())  # so topic ids compare by topic name

    def topic_list(name: str) -> list[str]:
        return [topics[t] for t in SUBSCRIPTIONS[name]]

    for op, who in steps:
        m = members.get(who)
        if op == "cg_join" and m is None:
            answer = ops.cg_heartbeat(run, cg, new_member_id(1), 0, topics=topic_list(who),
                                      rebalance_ms=30000, owned=[], label=f"{who} joins")
            if answer.error_code == 0:
                members[who] = Member(answer.member_id, answer.member_epoch, owned(answer))
        elif op in ("cg_join", "cg_heartbeat") and m is not None:
            answer = ops.cg_heartbeat(run, cg, m.member_id, m.epoch, owned=m.owned,
                                      label=f"{who} heartbeats")
            if answer.error_code in (UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH):
                del members[who]
            elif answer.error_code == 0:
                m.epoch = answer.member_epoch
                m.owned = owned(answer) if answer.assignment is not None else m.owned
        elif op == "cg_stale" and m is not None:
            ops.cg_heartbeat(run, cg, m.member_id, m.epoch + 1, owned=m.owned,
                             label=f"{who} heartbeats with a future epoch")
        elif op == "cg_leave" and m is not None:
            ops.cg_heartbeat(run, cg, m.member_id, -1, label=f"{who} leaves")
            del members[who]
        elif op == "cg_commit":
            member_id, epoch = (m.member_id, m.epoch) if m else ("", -1)
            ops.commit(run, cg, {(topics[SUBSCRIPTIONS[who][0]], 0): len(run.steps)},
                       generation=epoch, member_id=member_id)
        elif op == "x_join":
            answer = ops.join_new(run, classic, member_id=x.member_id, topics=(topics["a"],))
            if answer.error_code == 0:
                x.member_id, x.generation = answer.member_id, answer.generation_id
        elif op == "x_sync" and x.member_id:
            ops.sync(run, classic, x.generation, x.member_id,
                     assignments={x.member_id: ops.assignment({topics["a"]: [0]})})
        elif op == "x_heartbeat":
            ops.heartbeat(run, classic, x.generation, x.member_id or "nobody")
        elif op == "x_leave" and x.member_id:
            ops.leave(run, classic, [(x.member_id, None)])
            x = Classic()
        elif op == "x_commit":
            ops.commit(run, classic, {(topics["a"], 0): len(run.steps)},
                       generation=x.generation, member_id=x.member_id)
        elif op == "fetch":
            ops.fetch(run, cg, {topics["a"]: [0], topics["b"]: [0]},
                      more_groups={classic: None})
        elif op == "describe":
            ops.cg_describe(run, [cg, classic])
            ops.describe(run, [cg, classic])
        elif op == "list":
            ops.list_groups(run)
        elif op == "delete":
            ops.delete_groups(run, [cg, classic])
        elif op == "offset_delete":
            ops.offset_delete(run, cg, {topics["a"]: [0]})
            ops.offset_delete(run, classic, {topics["a"]: [0]})
    for who, m in sorted(members.items()):
        ops.cg_heartbeat(run, cg, m.member_id, -1, label=f"{who} leaves at the end")


@pytest.fixture(scope="module")
def topics(twin: Endpoint, kafka: Endpoint) -> dict[str, str]:
    """Two one-partition topics, made once on both brokers for every example."""
    prefix = f"oprop{uuid.uuid4().hex[:8]}"
    names = {"a": f"{prefix}-a", "b": f"{prefix}-b"}
    for broker in (twin, kafka):
        run = Run(broker, prefix)
        for name in names.values():
            ops.create_topic(run, name, 1, compare=False)
        run.close()
    return names


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(OPERATIONS, min_size=4, max_size=14))
def test_generated_group_operations(twin: Endpoint, kafka: Endpoint, topics: dict[str, str],
                                    steps: list[tuple[str, str]]) -> None:
    """Any short sequence of group operations gets the same answers from both brokers."""
    compare(play, twin, kafka, steps, topics, name="generated")
