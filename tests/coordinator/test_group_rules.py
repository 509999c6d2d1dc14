"""The classic group's rules table, walked cell by cell against the coordinator's behaviour.

For every request and every state, a group of three members (a the leader, b,
c) is brought into that state, the request is sent, and what happens is
checked against the rule the table names for the cell. A rule the checks do
not know fails the walk, so the table cannot say what the coordinator does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from kcsim.coordinator import GroupConfig
from kcsim.coordinator.groups.state import RULES, STATES, Request, Rule, rule
from kcsim.coordinator.offsets import expiration_base
from kcsim.coordinator.shared.states import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    GroupState,
)
from kcsim.coordinator.shared.timers import heartbeat_key
from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode as E

from .group_harness import Harness, Token

SESSION = 10_000
Pause = request_class(1000)


@dataclass
class World:
    h: Harness
    state: GroupState
    members: list[str]  # a, b, c (a leads); made-up ids in an Empty group
    generation: int  # the generation the members last saw
    instances: list[str | None]

    @property
    def group(self) -> Any:
        return self.h.gc.group("g")

    def send(self, token: Token) -> Any:
        """The answer to a request, or None while it is parked."""
        return self.h.response(token)


def _rejoin(w: World, i: int) -> Token:
    return w.h.join("g", w.members[i], instance=w.instances[i], client_id=f"c{i}")


def build(state: GroupState, static: bool = False, max_size: int = 100) -> World:
    """Group "g" with three members brought into `state` (offsets committed on t and u)."""
    h = Harness(GroupConfig(initial_rebalance_delay_ms=100, group_max_size=max_size),
                topics={"t": 6, "u": 3})
    h.commit("g", {("t", 0): 7, ("u", 0): 8})
    members = h.stable_group("g", 3, static=static)
    instances: list[str | None] = [f"inst-{i}" if static else None for i in range(3)]
    w = World(h, STABLE, members, h.gc.group("g").generation, instances)
    if state is EMPTY:
        h.leave("g", *[(m, i) for m, i in zip(members, instances)])
        w.members = ["gone-a", "gone-b", "gone-c"]
    elif state is PREPARING_REBALANCE:
        _rejoin(w, 0)  # the leader rejoins: a rebalance starts, b and c have not rejoined
    elif state is COMPLETING_REBALANCE:
        tokens = [_rejoin(w, i) for i in range(3)]
        h.until_answered(tokens)
        w.generation = h.response(tokens[0]).generation_id
    elif state is DEAD:
        w.group.transition_to(DEAD, h.now)  # being removed: still found by requests
    assert h.gc.group("g").state is state
    w.state = state
    return w


def error_of(response: Any) -> int:
    if hasattr(response, "error_code"):
        return int(response.error_code)
    if hasattr(response, "results"):
        return int(response.results[0].error_code)
    return int(response.topics[0].partitions[0].error_code)


# -- what each rule looks like from outside --------------------------------------------

ERRORS = {
    Rule.UNAVAILABLE: E.COORDINATOR_NOT_AVAILABLE,
    Rule.UNKNOWN_MEMBER: E.UNKNOWN_MEMBER_ID,
    Rule.REBALANCING: E.REBALANCE_IN_PROGRESS,
    Rule.NOT_FOUND: E.GROUP_ID_NOT_FOUND,
    Rule.NOT_EMPTY: E.NON_EMPTY_GROUP,
    Rule.MEMBERS_ONLY: E.UNKNOWN_MEMBER_ID,
}


def _session_restarted(w: World, member: str) -> None:
    assert w.h.gc._rt.deadlines.deadline(heartbeat_key("g", member)) == w.h.now + SESSION


def check_join_new(w: World, cell: Rule) -> None:
    before = len(w.group.members)
    answer = w.send(w.h.join("g", version=3, client_id="newcomer"))
    if cell in ERRORS:
        assert error_of(answer) == ERRORS[cell]
        return
    assert cell is Rule.ADD
    assert answer is None or answer.error_code == E.NONE
    assert len(w.group.members) == before + 1


def check_join_static(w: World, cell: Rule) -> None:
    old = w.members[1]
    answer = w.send(w.h.join("g", instance="inst-1", client_id="c1"))
    if cell in ERRORS:
        assert error_of(answer) == ERRORS[cell]
        return
    group = w.group
    if cell is Rule.ADD:  # nobody held the instance id: a new member
        assert len(group.members) == 1 and answer is None
        return
    assert old not in group.members and group.static_members["inst-1"] != old
    if cell is Rule.REPLACE_KEEPING_GENERATION:
        assert (answer.error_code, answer.generation_id) == (E.NONE, w.generation)
        assert group.state is STABLE
    elif cell is Rule.REPLACE_AND_REBALANCE:
        assert answer is None and group.state is PREPARING_REBALANCE
    else:
        assert cell is Rule.REPLACE_AND_WAIT
        assert answer is None and group.state is PREPARING_REBALANCE


def check_join(w: World, cell: Rule) -> None:
    answer = w.send(_rejoin(w, 1))
    if cell in ERRORS:
        assert error_of(answer) == ERRORS[cell]
        return
    if cell is Rule.WAIT:
        assert answer is None and w.group.state is PREPARING_REBALANCE
        assert w.group.members[w.members[1]].awaiting_join
    else:
        # Same protocols, not the leader: the current generation again, no rebalance.
        assert cell in (Rule.REPEAT_OR_REBALANCE, Rule.REBALANCE_IF_CHANGED)
        assert (answer.error_code, answer.generation_id) == (E.NONE, w.generation)
        assert w.group.state is w.state


def check_capacity(w: World, cell: Rule) -> None:
    """The group holds group.max.size (3) members (or held them, Empty); a newcomer joins."""
    answer = w.send(w.h.join("g", version=3, client_id="newcomer"))
    refused = answer is not None and answer.error_code == E.GROUP_MAX_SIZE_REACHED
    if cell is Rule.MEMBER_COUNT:
        assert refused
    else:  # NO_LIMIT; JOINED_COUNT: only the leader has rejoined, so there is room
        assert cell in (Rule.NO_LIMIT, Rule.JOINED_COUNT)
        assert not refused


def check_sync(w: World, cell: Rule) -> None:
    answer = w.send(w.h.sync("g", w.members[1], w.generation, instance=w.instances[1]))
    if cell in ERRORS:
        assert error_of(answer) == ERRORS[cell]
    elif cell is Rule.WAIT_FOR_LEADER:
        assert answer is None
    else:
        assert cell is Rule.ASSIGNMENT
        assert answer.error_code == E.NONE
        assert answer.assignment == w.group.members[w.members[1]].assignment != b""


def check_heartbeat(w: World, cell: Rule) -> None:
    w.h.advance(1_000)
    answer = w.h.heartbeat("g", w.members[1], w.generation, instance=w.instances[1])
    if cell in ERRORS:
        assert error_of(answer) == ERRORS[cell]
        return
    expected = E.REBALANCE_IN_PROGRESS if cell is Rule.ALIVE_REBALANCING else E.NONE
    assert cell in (Rule.ALIVE, Rule.ALIVE_REBALANCING) and answer.error_code == expected
    _session_restarted(w, w.members[1])


def check_leave(w: World, cell: Rule) -> None:
    answer = w.h.leave("g", *[(w.members[i], w.instances[i]) for i in (1, 2)])
    if cell in ERRORS:
        assert error_of(answer) == ERRORS[cell]
        return
    group = w.group
    if cell is Rule.LEAVE:  # an Empty group has nobody to lose
        assert group.state is EMPTY
        return
    assert w.members[1] not in group.members and w.members[2] not in group.members
    if cell is Rule.LEAVE_REBALANCE:
        assert group.state is PREPARING_REBALANCE
    else:
        assert cell is Rule.LEAVE_JOIN_MAY_END
        # Everybody left rejoined already (the leader): the join phase ends at once.
        assert group.state is COMPLETING_REBALANCE


def check_commit(w: World, cell: Rule) -> None:
    w.h.advance(1_000)
    answer = w.h.commit("g", {("t", 1): 5}, generation=w.generation, member_id=w.members[1],
                        instance=w.instances[1])
    if cell in ERRORS:
        assert error_of(answer) == ERRORS[cell]
        return
    assert cell is Rule.COMMIT_ALIVE and error_of(answer) == E.NONE
    assert w.h.gc.committed_offsets("g")[("t", 1)].offset == 5
    _session_restarted(w, w.members[1])


def check_outside_commit(w: World, cell: Rule) -> None:
    answer = w.h.commit("g", {("t", 1): 5})
    if cell in ERRORS:
        assert error_of(answer) == ERRORS[cell]
        assert ("t", 1) not in w.h.gc.committed_offsets("g")
        return
    assert cell is Rule.COMMIT and error_of(answer) == E.NONE
    assert w.h.gc.committed_offsets("g")[("t", 1)].offset == 5


def check_fetch(w: World, cell: Rule) -> None:
    answer = w.h.fetch("g", {"t": [0]})
    offset = answer.topics[0].partitions[0].committed_offset
    assert offset == (7 if cell is Rule.SERVED else -1)
    assert cell in (Rule.SERVED, Rule.NO_OFFSETS)


def check_offset_delete(w: World, cell: Rule) -> None:
    answer = w.h.delete_offsets("g", {"t": [0], "u": [0]})
    if cell in ERRORS:
        assert error_of(answer) == ERRORS[cell]
        return
    errors = {t.name: t.partitions[0].error_code for t in answer.topics}
    left = set(w.h.gc.committed_offsets("g"))
    if cell is Rule.DELETE_OFFSETS:
        assert errors == {"t": E.NONE, "u": E.NONE} and left == set()
    else:
        assert cell is Rule.DELETE_UNSUBSCRIBED  # the members subscribe to t
        assert errors == {"t": E.GROUP_SUBSCRIBED_TO_TOPIC, "u": E.NONE}
        assert left == {("t", 0)}


def check_describe(w: World, cell: Rule) -> None:
    (described,) = w.h.describe("g").groups
    assert described.group_state == w.state.value
    metadata = [m.member_metadata for m in described.members]
    if cell is Rule.MEMBERS_WITH_METADATA:
        assert described.protocol_data == "range" and all(metadata) and metadata
    else:
        assert cell is Rule.MEMBERS
        assert described.protocol_data == "" and not any(metadata)


def check_list(w: World, cell: Rule) -> None:
    assert cell is Rule.LISTED
    listed = {g.group_id: g.group_state for g in w.h.list_groups().groups}
    assert listed == {"g": w.state.value}


def check_delete(w: World, cell: Rule) -> None:
    answer = w.h.delete_groups("g")
    if cell in ERRORS:
        assert error_of(answer) == ERRORS[cell]
        assert w.h.gc.group("g") is not None
        return
    assert cell is Rule.DELETE_GROUP and error_of(answer) == E.NONE
    assert w.h.gc.groups() == [] and w.h.gc.committed_offsets("g") == {}


def check_pause(w: World, cell: Rule) -> None:
    answer = w.h.answer(1000, 0, Pause(group_id="g", topics=[Pause.PausePartitionsRequestTopic(
        name="t", partitions=[Pause.PausePartitionsRequestPartition(partition_index=1)])]))
    if cell in ERRORS:
        assert error_of(answer) == ERRORS[cell]
        return
    assert answer.error_code == E.NONE
    if cell is Rule.REBALANCE:
        assert w.group.state is PREPARING_REBALANCE
    else:
        assert cell is Rule.AT_NEXT_ASSIGNMENT
        assert w.group.state is w.state


def check_retention(w: World, cell: Rule) -> None:
    base = expiration_base(w.group)
    value = w.h.gc.committed_offsets("g")[("u", 0)]
    if cell is Rule.KEPT:
        assert base is None
    elif cell is Rule.EXPIRE_SINCE_EMPTY:
        assert base is not None and base(value) == w.group.state_timestamp
    else:
        assert cell is Rule.EXPIRE_UNSUBSCRIBED
        assert base is not None and base(value) == value.commit_timestamp


CHECKS = {
    Request.JOIN_NEW: check_join_new,
    Request.JOIN_STATIC: check_join_static,
    Request.JOIN: check_join,
    Request.CAPACITY: check_capacity,
    Request.SYNC: check_sync,
    Request.HEARTBEAT: check_heartbeat,
    Request.LEAVE: check_leave,
    Request.COMMIT: check_commit,
    Request.OUTSIDE_COMMIT: check_outside_commit,
    Request.FETCH: check_fetch,
    Request.OFFSET_DELETE: check_offset_delete,
    Request.DESCRIBE: check_describe,
    Request.LIST: check_list,
    Request.DELETE: check_delete,
    Request.PAUSE: check_pause,
    Request.RETENTION: check_retention,
}


def test_every_request_has_a_row_and_every_row_a_cell_per_state() -> None:
    assert set(RULES) == set(Request) == set(CHECKS)
    assert all(list(row) == list(STATES) for row in RULES.values())
    assert set(STATES) == set(GroupState)


@pytest.mark.parametrize("state", STATES, ids=lambda s: s.value)
@pytest.mark.parametrize("request_kind", list(Request), ids=lambda r: r.name)
def test_the_coordinator_does_what_the_table_says(request_kind: Request, state: GroupState) -> None:
    world = build(state, static=request_kind is Request.JOIN_STATIC,
                  max_size=3 if request_kind is Request.CAPACITY else 100)
    CHECKS[request_kind](world, rule(request_kind, state))
