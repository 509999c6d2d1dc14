"""How a KIP-848 or KIP-1071 heartbeat is refused: every check that can fail runs before
the first record is written and raises `Refused`, which the handler turns into its
error answer, so a refused heartbeat changes nothing. The checks both kinds of group make
alike live here too: a blank string, an unknown member, a static member's instance id
taken over."""

from __future__ import annotations

from typing import Protocol, TypeVar

from kcsim.protocol.errors import ErrorCode


class Refused(Exception):
    """The request fails with this error before anything is written."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message


def not_blank(value: str | None, message: str) -> None:
    """Kafka's throwIfEmptyString: a given string must not be blank (INVALID_REQUEST)."""
    if value is not None and not value.strip():
        raise Refused(ErrorCode.INVALID_REQUEST, message)


LEAVE_GROUP_STATIC_EPOCH = -2  # a static member left for a while


class _Member(Protocol):
    member_id: str
    member_epoch: int
    previous_member_epoch: int

    def copy(self: _M, member_id: str | None = None) -> _M: ...


_M = TypeVar("_M", bound=_Member)


def unknown_member(member_id: str, group_id: str) -> Refused:
    return Refused(ErrorCode.UNKNOWN_MEMBER_ID,
                   f"Member {member_id} is not a member of group {group_id}.")


def take_over(existing: _M, member_id: str, instance_id: str) -> _M:
    """The member joining under `member_id` with a static member's instance id: allowed
    only once that member left for a while (epoch -2); it starts from the member's state."""
    if existing.member_epoch != LEAVE_GROUP_STATIC_EPOCH:
        raise Refused(ErrorCode.UNRELEASED_INSTANCE_ID, f"Static member {member_id} with "
                      f"instance id {instance_id} cannot join the group because the instance id "
                      f"is owned by {existing.member_id} member.")
    replacement = existing.copy(member_id)
    replacement.member_epoch = 0
    replacement.previous_member_epoch = 0
    return replacement
