"""Membership responses shaped for the version they answer.

Kafka's response classes fix up a few fields per version (JoinGroup's protocol
name is "" before v7 and null, never "", from v7); doing it here keeps the
handlers free of version quirks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.heartbeat import HeartbeatResponse
from kcsim.protocol.messages.join_group import JoinGroupResponse
from kcsim.protocol.messages.leave_group import LeaveGroupResponse
from kcsim.protocol.messages.sync_group import SyncGroupResponse

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .classic import ClassicGroup

JoinGroupResponseMember = JoinGroupResponse.JoinGroupResponseMember
MemberResponse = LeaveGroupResponse.MemberResponse

NONE = ErrorCode.NONE


def join_response(
    version: int,
    error: int = NONE,
    *,
    member_id: str = "",
    generation_id: int = -1,
    protocol_type: str | None = None,
    protocol_name: str | None = None,
    leader: str | None = "",
    skip_assignment: bool = False,
    members: list[JoinGroupResponseMember] | None = None,
) -> JoinGroupResponse:
    if version < 7:
        if protocol_name is None:
            protocol_name = ""
    elif protocol_name == "":
        protocol_name = None
    return JoinGroupResponse(
        error_code=int(error),
        generation_id=generation_id,
        protocol_type=protocol_type,
        protocol_name=protocol_name,
        leader=leader if leader is not None else "",
        skip_assignment=skip_assignment,
        member_id=member_id,
        members=members if members is not None else [],
    )


def join_error(version: int, error: int, member_id: str = "") -> JoinGroupResponse:
    return join_response(version, error, member_id=member_id)


def current_members(group: ClassicGroup) -> list[JoinGroupResponseMember]:
    """Every member with its metadata for the selected protocol: what the leader assigns from."""
    protocol = group.protocol_name
    return [
        JoinGroupResponseMember(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            metadata=m.metadata(protocol),
        )
        for m in group.members.values()
    ]


def generation_response(
    version: int,
    group: ClassicGroup,
    member_id: str,
    *,
    members: list[JoinGroupResponseMember] | None = None,
    leader: str | None = None,
    skip_assignment: bool = False,
) -> JoinGroupResponse:
    """A successful JoinGroup answer describing the group's current generation."""
    return join_response(
        version,
        member_id=member_id,
        generation_id=group.generation,
        protocol_type=group.protocol_type,
        protocol_name=group.protocol_name,
        leader=group.leader_id if leader is None else leader,
        skip_assignment=skip_assignment,
        members=members,
    )


def sync_response(
    error: int = NONE,
    *,
    protocol_type: str | None = None,
    protocol_name: str | None = None,
    assignment: bytes = b"",
) -> SyncGroupResponse:
    return SyncGroupResponse(
        error_code=int(error),
        protocol_type=protocol_type,
        protocol_name=protocol_name,
        assignment=assignment,
    )


def heartbeat_response(error: int = NONE) -> HeartbeatResponse:
    return HeartbeatResponse(error_code=int(error))


def leave_response(
    version: int, error: int, members: Iterable[MemberResponse]
) -> LeaveGroupResponse:
    """v3+ reports each member; earlier versions fold the first member error into the top level."""
    members = list(members)
    if version >= 3:
        return LeaveGroupResponse(error_code=int(error), members=members)
    if error == NONE:
        for member in members:
            if member.error_code != NONE:
                error = member.error_code
                break
    return LeaveGroupResponse(error_code=int(error))


def leave_member(
    member_id: str, group_instance_id: str | None, error: int = NONE
) -> MemberResponse:
    return MemberResponse(
        member_id=member_id, group_instance_id=group_instance_id, error_code=int(error)
    )
