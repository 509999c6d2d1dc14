"""The states a classic group can be in, as Kafka names them on the wire.

The names live here, below every part that asks what state a group is in; the
transitions between them and what each request does in each state are the
classic groups' own rules (`groups.state`).
"""

from __future__ import annotations

from enum import Enum


class GroupState(Enum):
    # Members are singletons compared by identity: hash them so too, in C, not by name in
    # Python (every request looks states up in the rules table).
    __hash__ = object.__hash__

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


EMPTY = GroupState.EMPTY
PREPARING_REBALANCE = GroupState.PREPARING_REBALANCE
COMPLETING_REBALANCE = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
DEAD = GroupState.DEAD

# Each state's name as Kafka reports it: a look-up hashed in C, where an Enum member's
# `.value` is a Python property (ListGroups reads it for every group).
STATE_NAMES: dict[GroupState, str] = {state: state.value for state in GroupState}
