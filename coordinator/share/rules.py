"""What happens to a share partition's record, as tables: the states a record moves
between, what each acknowledgement type does to an acquired record, and what each
way of giving a record up does to it and its delivery count.

Kafka's SharePartition: a record is AVAILABLE, ACQUIRED by one member under a lock,
then ACKNOWLEDGED or ARCHIVED (both final) or AVAILABLE again. Acquiring counts a
delivery; giving a record back (RELEASE, a lock running out) archives it instead once
it has been delivered `share.delivery.count.limit` times. A member leaving hands its
records back uncounted: they were fetched, not delivered (Kafka 4.1's DECREASE).
"""

from __future__ import annotations

from enum import Enum, IntEnum
from typing import NamedTuple

__all__ = [
    "ACK_EFFECTS",
    "ALLOWED_PREVIOUS",
    "GIVE_BACKS",
    "AckEffect",
    "AcknowledgeType",
    "GiveBack",
    "GiveBackRule",
    "RecordState",
    "ack_effect",
    "given_back",
    "is_final",
]


class RecordState(IntEnum):
    """A record's delivery state; the numbers are Kafka's (ShareSnapshotValue's
    DeliveryState: 0 Available, 2 Acked, 4 Archived; 1 is never written)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(IntEnum):
    """ShareFetch's and ShareAcknowledge's AcknowledgeTypes (RENEW: version 2, KIP-1222)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


class AckEffect(Enum):
    """What an acknowledgement does to a record its member holds."""

    __hash__ = object.__hash__

    ACKNOWLEDGE = "ACKNOWLEDGED: delivered and processed"
    ARCHIVE = "ARCHIVED: never delivered again"
    GIVE_BACK = "given back as RELEASE: AVAILABLE again, ARCHIVED at the delivery limit"
    RENEW = "stays ACQUIRED by the member, its lock starting again"


# fmt: off
ACK_EFFECTS: dict[AcknowledgeType, AckEffect] = {
    AcknowledgeType.GAP:     AckEffect.ARCHIVE,  # an offset with no record (compacted, a marker)
    AcknowledgeType.ACCEPT:  AckEffect.ACKNOWLEDGE,
    AcknowledgeType.RELEASE: AckEffect.GIVE_BACK,
    AcknowledgeType.REJECT:  AckEffect.ARCHIVE,
    AcknowledgeType.RENEW:   AckEffect.RENEW,
}
# fmt: on


def ack_effect(ack_type: AcknowledgeType) -> AckEffect:
    return ACK_EFFECTS[ack_type]


class GiveBack(Enum):
    """The ways an acquired record goes back to the partition."""

    __hash__ = object.__hash__

    RELEASE = "the member acknowledged it RELEASE"
    LOCK_EXPIRED = "its acquisition lock ran out"
    MEMBER_LEFT = "its member left the group or closed its share session"


class GiveBackRule(NamedTuple):
    counted: bool  # the delivery counts: at the limit the record is archived
    delivery_count_change: int  # what the delivery count becomes, relative


# fmt: off
GIVE_BACKS: dict[GiveBack, GiveBackRule] = {
    #                                  counted  count change
    GiveBack.RELEASE:      GiveBackRule(True,   0),
    GiveBack.LOCK_EXPIRED: GiveBackRule(True,   0),
    GiveBack.MEMBER_LEFT:  GiveBackRule(False, -1),
}
# fmt: on


def given_back(how: GiveBack, delivery_count: int, limit: int) -> tuple[RecordState, int]:
    """The state and delivery count of an acquired record given back `how`."""
    rule = GIVE_BACKS[how]
    if rule.counted and delivery_count >= limit:
        return RecordState.ARCHIVED, delivery_count
    return RecordState.AVAILABLE, max(0, delivery_count + rule.delivery_count_change)


# target state -> the states a record may come from (Kafka's RecordState.validateTransition)
ALLOWED_PREVIOUS: dict[RecordState, frozenset[RecordState]] = {
    RecordState.AVAILABLE: frozenset({RecordState.ACQUIRED}),
    RecordState.ACQUIRED: frozenset({RecordState.AVAILABLE}),
    RecordState.ACKNOWLEDGED: frozenset({RecordState.ACQUIRED}),
    # An aborted transaction's records are archived without being delivered.
    RecordState.ARCHIVED: frozenset({RecordState.ACQUIRED, RecordState.AVAILABLE}),
}


def is_final(state: RecordState) -> bool:
    """Whether the record is done with: the start offset may move past it."""
    return state is RecordState.ACKNOWLEDGED or state is RecordState.ARCHIVED
