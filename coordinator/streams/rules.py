"""What a StreamsGroupHeartbeat must carry for each member epoch, and what a topology sent
by a joining member does to the group's: rules first, then the tables.

The heartbeat's checks follow Kafka's throwIfStreamsGroupHeartbeatRequestIsInvalid: the
member epoch says what the request is (`Kind`), and `CARRIES` lists, per kind, the fields
it must or must not have, each with Kafka's message. A joining member's topology is
compared with the group's (`TopologyCase`), and `ON_TOPOLOGY` says what follows (Kafka's
maybeUpdateTopology): the first one is stored, an older epoch leaves the member stale
(STALE_TOPOLOGY in every answer until it rejoins), the same one is kept, and any other
is refused, since Kafka does not update a topology in place.
"""

from __future__ import annotations

from enum import Enum


class Kind(Enum):
    """What a heartbeat is, by its member epoch."""

    __hash__ = object.__hash__

    JOIN = "epoch 0: join or rejoin"
    HEARTBEAT = "epoch > 0: a member's heartbeat"
    LEAVE = "epoch -1: leave"
    LEAVE_STATIC = "epoch -2: a static member leaves for a while"
    INVALID = "epoch < -2"


def kind_of(member_epoch: int) -> Kind:
    if member_epoch == 0:
        return Kind.JOIN
    if member_epoch > 0:
        return Kind.HEARTBEAT
    if member_epoch == -1:
        return Kind.LEAVE
    if member_epoch == -2:
        return Kind.LEAVE_STATIC
    return Kind.INVALID


class Field(Enum):
    """A condition on the request's fields, each with Kafka's message when it fails."""

    __hash__ = object.__hash__

    REBALANCE_TIMEOUT = "RebalanceTimeoutMs must be provided in first request."
    # Given, and empty (Kafka 4.4 refuses a null list with the same message).
    NO_ACTIVE_TASKS = "ActiveTasks must be empty when (re-)joining."
    NO_STANDBY_TASKS = "StandbyTasks must be empty when (re-)joining."
    NO_WARMUP_TASKS = "WarmupTasks must be empty when (re-)joining."
    TOPOLOGY = "Topology must be non-null when (re-)joining."
    INSTANCE_ID = "InstanceId can't be null."
    NO_TOPOLOGY = "Topology can only be provided when (re-)joining."


# The conditions each kind of heartbeat must meet, in Kafka's order (INVALID is refused
# before any of them, with its own message).
CARRIES: dict[Kind, tuple[Field, ...]] = {
    Kind.JOIN: (Field.REBALANCE_TIMEOUT, Field.NO_ACTIVE_TASKS, Field.NO_STANDBY_TASKS,
                Field.NO_WARMUP_TASKS, Field.TOPOLOGY),
    Kind.HEARTBEAT: (Field.NO_TOPOLOGY,),
    Kind.LEAVE: (Field.NO_TOPOLOGY,),
    Kind.LEAVE_STATIC: (Field.INSTANCE_ID, Field.NO_TOPOLOGY),
    Kind.INVALID: (),
}


class TopologyCase(Enum):
    """How a joining member's topology compares with the group's."""

    __hash__ = object.__hash__

    FIRST = "the group has no topology yet"
    OLDER = "an older topology epoch than the group's"
    SAME = "the group's topology"
    OTHER = "another topology at the group's epoch or a newer one"


class OnTopology(Enum):
    __hash__ = object.__hash__

    STORE = "the group takes it: a topology record"
    STALE = "the group keeps its own; the member is told its topology is stale"
    KEEP = "nothing changes"
    REFUSE = "INVALID_REQUEST: Kafka does not update a group's topology in place"


ON_TOPOLOGY: dict[TopologyCase, OnTopology] = {
    TopologyCase.FIRST: OnTopology.STORE,
    TopologyCase.OLDER: OnTopology.STALE,
    TopologyCase.SAME: OnTopology.KEEP,
    TopologyCase.OTHER: OnTopology.REFUSE,
}

TOPOLOGY_UPDATE_REFUSED = "Topology updates are not supported yet."
