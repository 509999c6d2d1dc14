"""What each request does to a classic group in each state, and the transitions Kafka allows
between the states: rules first, then the tables.

The rules (`Rule`) say what happens, each in one line; the table (`RULES`)
says which rule a request follows in each state, one row per request, one
column per state. Handlers look their rule up (`rule(request, state)`) where
they used to test the state, after the checks Kafka makes first (the group id,
the member, the generation), so the same error wins as in Kafka. The
transition table mirrors Kafka's ClassicGroupState: each state lists the states
a group may come from; every transition is checked against it.
"""

from __future__ import annotations

from enum import Enum

from ..shared.states import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    GroupState,
)

__all__ = [
    "ALLOWED_PREVIOUS",
    "COMPLETING_REBALANCE",
    "DEAD",
    "EMPTY",
    "PREPARING_REBALANCE",
    "RULES",
    "STABLE",
    "GroupState",
    "IllegalTransition",
    "Request",
    "Rule",
    "can_rebalance",
    "check_transition",
    "rule",
]


class Request(Enum):
    """What can be asked of a classic group (the rows of the table)."""

    __hash__ = object.__hash__  # identity, in C: see GroupState

    JOIN_NEW = "JoinGroup of a new member: no member id, or the one the group handed out"
    JOIN_STATIC = "JoinGroup of a known group.instance.id without a member id"
    JOIN = "JoinGroup of a member"
    CAPACITY = "who counts against group.max.size when a member joins"
    SYNC = "SyncGroup of a member of the generation"
    HEARTBEAT = "Heartbeat of a member of the generation"
    LEAVE = "LeaveGroup, or a member's session running out"
    COMMIT = "OffsetCommit of a member of the generation"
    OUTSIDE_COMMIT = "OffsetCommit without a member or a generation (an admin, a simple group)"
    FETCH = "OffsetFetch"
    OFFSET_DELETE = "OffsetDelete"
    DESCRIBE = "DescribeGroups"
    LIST = "ListGroups"
    DELETE = "DeleteGroups"
    PAUSE = "PausePartitions or ResumePartitions, for a group of the consumer protocol"
    RETENTION = "offset retention (KIP-211) for a group with a protocol type"


class Rule(Enum):
    """What a request does (the cells of the table)."""

    __hash__ = object.__hash__  # identity, in C: see GroupState

    # Refusals.
    UNAVAILABLE = "answered COORDINATOR_NOT_AVAILABLE: the group is being removed"
    UNKNOWN_MEMBER = "answered UNKNOWN_MEMBER_ID: nobody is a member of an Empty group"
    REBALANCING = "answered REBALANCE_IN_PROGRESS: the member must join the new generation"
    NOT_FOUND = "answered GROUP_ID_NOT_FOUND"
    NOT_EMPTY = "answered NON_EMPTY_GROUP"
    # Joining.
    ADD = "the member is added (v4+ dynamic: first handed an id) and waits for the join phase"
    WAIT = "the member's protocols are updated and its join waits for the join phase to end"
    REPEAT_OR_REBALANCE = "same protocols: the current generation again (a retried join); else a rebalance"
    REBALANCE_IF_CHANGED = "the leader or new protocols start a rebalance; else the current generation"
    REPLACE_AND_WAIT = "the new member id takes the old one's place and waits for the join phase"
    REPLACE_AND_REBALANCE = "the new member id takes the old one's place; the group rebalances"
    REPLACE_KEEPING_GENERATION = "the new member id takes the old one's place; same protocol: no rebalance"
    NO_LIMIT = "anyone may join"
    JOINED_COUNT = "members that already rejoined count; one joining over the limit is removed"
    MEMBER_COUNT = "every member counts; members already in are never refused"
    # Syncing, heartbeats.
    WAIT_FOR_LEADER = "waits for the leader's assignment; the leader's completes the generation"
    ASSIGNMENT = "answered the member's current assignment"
    ALIVE = "answered NONE; the member's session starts again"
    ALIVE_REBALANCING = "answered REBALANCE_IN_PROGRESS; the member's session starts again"
    # Leaving.
    LEAVE = "the members (only pending ones in an Empty group) leave"
    LEAVE_JOIN_MAY_END = "the members leave; the join phase ends if everybody else rejoined"
    LEAVE_REBALANCE = "the members leave; the group rebalances"
    # Offsets.
    COMMIT_ALIVE = "committed; the member's session starts again"
    COMMIT = "committed"
    MEMBERS_ONLY = "answered UNKNOWN_MEMBER_ID (KIP-1249: an admin's commit of paused partitions is taken)"
    SERVED = "the committed offsets are returned"
    NO_OFFSETS = "no offsets: the group is gone"
    DELETE_OFFSETS = "the offsets are deleted"
    DELETE_UNSUBSCRIBED = "offsets of topics the group does not subscribe to (consumer protocol) are deleted"
    # Views and removal.
    MEMBERS = "shown with its members, without their metadata and without the protocol"
    MEMBERS_WITH_METADATA = "shown with its protocol and its members' metadata and assignments"
    LISTED = "listed with its state"
    DELETE_GROUP = "deleted, with its offsets and paused partitions"
    EXPIRE_SINCE_EMPTY = "offsets expire counting from when the group became Empty"
    EXPIRE_UNSUBSCRIBED = "offsets of unsubscribed topics expire (consumer protocol), others are kept"
    KEPT = "offsets never expire"
    # KIP-1249 pauses.
    AT_NEXT_ASSIGNMENT = "nothing now: the next SyncGroup hands out assignments without them"
    REBALANCE = "the group rebalances so every member gets an assignment without them"


# -- the table ---------------------------------------------------------------------------

R = Rule
STATES = (EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, DEAD)
# fmt: off
_TABLE: tuple[tuple[Request, tuple[Rule, Rule, Rule, Rule, Rule]], ...] = (
    #                          Empty                PreparingRebalance     CompletingRebalance        Stable                         Dead
    (Request.JOIN_NEW,       (R.ADD,               R.ADD,                 R.ADD,                     R.ADD,                         R.UNAVAILABLE)),
    (Request.JOIN_STATIC,    (R.ADD,               R.REPLACE_AND_WAIT,    R.REPLACE_AND_REBALANCE,   R.REPLACE_KEEPING_GENERATION,  R.UNAVAILABLE)),
    (Request.JOIN,           (R.UNKNOWN_MEMBER,    R.WAIT,                R.REPEAT_OR_REBALANCE,     R.REBALANCE_IF_CHANGED,        R.UNAVAILABLE)),
    (Request.CAPACITY,       (R.NO_LIMIT,          R.JOINED_COUNT,        R.MEMBER_COUNT,            R.MEMBER_COUNT,                R.NO_LIMIT)),
    (Request.SYNC,           (R.UNKNOWN_MEMBER,    R.REBALANCING,         R.WAIT_FOR_LEADER,         R.ASSIGNMENT,                  R.UNAVAILABLE)),
    (Request.HEARTBEAT,      (R.UNKNOWN_MEMBER,    R.ALIVE_REBALANCING,   R.ALIVE,                   R.ALIVE,                       R.UNAVAILABLE)),
    (Request.LEAVE,          (R.LEAVE,             R.LEAVE_JOIN_MAY_END,  R.LEAVE_REBALANCE,         R.LEAVE_REBALANCE,             R.UNAVAILABLE)),
    (Request.COMMIT,         (R.UNKNOWN_MEMBER,    R.COMMIT_ALIVE,        R.REBALANCING,             R.COMMIT_ALIVE,                R.UNAVAILABLE)),
    (Request.OUTSIDE_COMMIT, (R.COMMIT,            R.MEMBERS_ONLY,        R.MEMBERS_ONLY,            R.MEMBERS_ONLY,                R.UNAVAILABLE)),
    (Request.FETCH,          (R.SERVED,            R.SERVED,              R.SERVED,                  R.SERVED,                      R.NO_OFFSETS)),
    (Request.OFFSET_DELETE,  (R.DELETE_OFFSETS,    R.DELETE_UNSUBSCRIBED, R.DELETE_UNSUBSCRIBED,     R.DELETE_UNSUBSCRIBED,         R.NOT_FOUND)),
    (Request.DESCRIBE,       (R.MEMBERS,           R.MEMBERS,             R.MEMBERS,                 R.MEMBERS_WITH_METADATA,       R.MEMBERS)),
    (Request.LIST,           (R.LISTED,            R.LISTED,              R.LISTED,                  R.LISTED,                      R.LISTED)),
    (Request.DELETE,         (R.DELETE_GROUP,      R.NOT_EMPTY,           R.NOT_EMPTY,               R.NOT_EMPTY,                   R.NOT_FOUND)),
    (Request.PAUSE,          (R.AT_NEXT_ASSIGNMENT, R.AT_NEXT_ASSIGNMENT, R.REBALANCE,               R.REBALANCE,                   R.NOT_FOUND)),
    (Request.RETENTION,      (R.EXPIRE_SINCE_EMPTY, R.KEPT,               R.KEPT,                    R.EXPIRE_UNSUBSCRIBED,         R.KEPT)),
)
# fmt: on
RULES: dict[Request, dict[GroupState, Rule]] = {
    request: dict(zip(STATES, row)) for request, row in _TABLE
}


def rule(request: Request, state: GroupState) -> Rule:
    """What `request` does to a group in `state`."""
    return RULES[request][state]


# target state -> the states a group must be in to move there
ALLOWED_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    EMPTY: frozenset({PREPARING_REBALANCE}),
    PREPARING_REBALANCE: frozenset({STABLE, COMPLETING_REBALANCE, EMPTY}),
    COMPLETING_REBALANCE: frozenset({PREPARING_REBALANCE}),
    STABLE: frozenset({COMPLETING_REBALANCE}),
    DEAD: frozenset({STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD}),
}


class IllegalTransition(RuntimeError):
    """A transition the table forbids: a bug in the coordinator, never a client error."""


def check_transition(group_id: str, current: GroupState, target: GroupState) -> None:
    if current not in ALLOWED_PREVIOUS[target]:
        allowed = sorted(s.value for s in ALLOWED_PREVIOUS[target])
        raise IllegalTransition(
            f"group {group_id!r} must be in one of {allowed} to move to {target.value}, "
            f"not {current.value}"
        )


def can_rebalance(state: GroupState) -> bool:
    """Whether a group in `state` may start a new rebalance (enter PreparingRebalance)."""
    return state in ALLOWED_PREVIOUS[PREPARING_REBALANCE]
