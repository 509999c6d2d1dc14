"""The records the classic group coordinator writes, built in one place.

Group metadata follows Kafka's GroupCoordinatorRecordHelpers: members are
stored with the metadata of the group's selected protocol only, plus their
assignment; an empty group is stored with no members.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.coordinator.records import GroupMemberValue, GroupMetadataValue

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .classic import ClassicGroup


def group_metadata_value(
    group: ClassicGroup, assignments: Mapping[str, bytes]
) -> GroupMetadataValue:
    protocol = group.protocol_name
    protocol_type = group.protocol_type or ""
    members = []
    for member in group.members.values():
        if protocol is None:
            raise RuntimeError(f"group {group.group_id} has members but no selected protocol")
        members.append(
            GroupMemberValue(
                member_id=member.member_id,
                group_instance_id=member.group_instance_id,
                client_id=member.client_id,
                client_host=member.client_host,
                rebalance_timeout_ms=member.rebalance_timeout_ms,
                session_timeout_ms=member.session_timeout_ms,
                protocol_type=protocol_type,
                protocols=[(protocol, member.metadata(protocol))],
                assignment=assignments[member.member_id],
            )
        )
    return GroupMetadataValue(
        protocol_type=protocol_type,
        generation=group.generation,
        protocol=protocol,
        leader=group.leader_id,
        state_timestamp=-1 if group.state_timestamp is None else group.state_timestamp,
        members=members,
    )


def new_group_metadata_value(group: ClassicGroup) -> GroupMetadataValue:
    """What Kafka writes when a JoinGroup creates a group and nothing else was written."""
    return GroupMetadataValue(
        protocol_type="",
        generation=0,
        protocol=None,
        leader=None,
        state_timestamp=-1 if group.state_timestamp is None else group.state_timestamp,
        members=[],
    )
