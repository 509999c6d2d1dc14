"""What describing a group does whatever its kind: DescribeGroups for classic groups,
ConsumerGroupDescribe for consumer groups.

Kafka answers both alike: each group the request names, in its order, either described
or not found, with Kafka's message for an id that names a group of the other kind
("Group X is not a classic group.") or none ("Group X not found."); and, when the
request asks, the operations the caller may perform on it (without an authorizer, every
operation a group supports). How a group and its members are described is each kind's
own: a classic member's metadata and assignment are the bytes its protocol chose, a
consumer member's are topics and partitions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

from kcsim.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

# Kafka's AclOperation codes of the operations a GROUP resource supports: READ (3),
# DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10), ALTER_CONFIGS (11).
GROUP_OPERATIONS = (3, 6, 8, 10, 11)
# Without an authorizer every supported operation is allowed (Kafka's AuthHelper).
AUTHORIZED_GROUP_OPERATIONS = sum(1 << op for op in GROUP_OPERATIONS)
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)


class Described(Protocol):
    """A described group of either response: its error and the operations allowed on it."""

    error_code: int
    authorized_operations: int


_Group = TypeVar("_Group")
_Described = TypeVar("_Described", bound=Described)


def describe_each(
    group_ids: list[str],
    groups: Mapping[str, _Group],
    describe: Callable[[str, _Group | None], _Described],
    with_operations: bool,
) -> list[_Described]:
    """Each group of `group_ids`, in order, as `describe` answers it (None: no group of this
    kind has the id), with the authorized operations of each answered without error when
    `with_operations`."""
    # All look-ups first, in one C-level loop: with thousands of groups each one
    # misses the CPU caches, and back to back those misses overlap.
    found = list(map(groups.get, group_ids))
    described = []
    for group_id, group in zip(group_ids, found):
        entry = describe(group_id, group)
        if with_operations and entry.error_code == ErrorCode.NONE:
            entry.authorized_operations = AUTHORIZED_GROUP_OPERATIONS
        described.append(entry)
    return described


def not_found_message(group_id: str, kind: str, other_kind: bool) -> str:
    """Kafka's message for a group id no group of `kind` has; `other_kind`: a group of
    another kind has it."""
    if other_kind:
        return f"Group {group_id} is not a {kind} group."
    return f"Group {group_id} not found."
