"""Classic group states and the transitions Kafka allows between them, as data.

Mirrors Kafka's ClassicGroupState: each state lists the states a group may
come from; every transition is checked against this table.
"""

from __future__ import annotations

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
    "STABLE",
    "GroupState",
    "IllegalTransition",
    "can_rebalance",
    "check_transition",
]

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
