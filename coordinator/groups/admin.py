"""ListGroups (KIP-40, KIP-518, KIP-848 filters), DescribeGroups and DeleteGroups (KIP-229).

Read-only views follow Kafka's rules for what a group shows in each state;
DeleteGroups writes a tombstone for every committed offset and then for the
group itself, so replay removes exactly what the live coordinator removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from protocol.codecs import response_class
from protocol.errors import ErrorCode

from .classic import ClassicGroup
from .interface import RequestContext
from .offsets import OffsetHandlers
from .records import group_record
from .runtime import GroupRuntime
from .state import DEAD, EMPTY, STABLE

E = ErrorCode

ListGroupsResponse = response_class(16)
ListedGroup = ListGroupsResponse.ListedGroup
DescribeGroupsResponse = response_class(15)
DescribedGroup = DescribeGroupsResponse.DescribedGroup
DescribedGroupMember = DescribeGroupsResponse.DescribedGroupMember
DeleteGroupsResponse = response_class(42)
DeletableGroupResult = DeleteGroupsResponse.DeletableGroupResult

CLASSIC_GROUP_TYPE = "classic"

# Kafka's AclOperation codes for the operations a GROUP resource supports.
ACL_READ = 3
ACL_DELETE = 6
ACL_DESCRIBE = 8
ACL_DESCRIBE_CONFIGS = 10
ACL_ALTER_CONFIGS = 11
GROUP_OPERATIONS = (ACL_READ, ACL_DELETE, ACL_DESCRIBE, ACL_DESCRIBE_CONFIGS, ACL_ALTER_CONFIGS)
# Without an authorizer every supported operation is allowed (Kafka's AuthHelper).
AUTHORIZED_GROUP_OPERATIONS = sum(1 << op for op in GROUP_OPERATIONS)
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)


class AdminHandlers:
    def __init__(self, runtime: GroupRuntime, offsets: OffsetHandlers) -> None:
        self.rt = runtime
        self.offsets = offsets

    # -- ListGroups ---------------------------------------------------------

    def list_groups(self, version: int, request: Any, ctx: RequestContext) -> Any:
        states_filter = request.states_filter if version >= 4 else []
        types_filter = request.types_filter if version >= 5 else []
        groups: Iterable[ClassicGroup] = self.rt.groups.values()
        if types_filter:
            wanted_types = {t.strip().lower() for t in types_filter}
            if CLASSIC_GROUP_TYPE not in wanted_types:
                groups = ()
        if states_filter:
            wanted = {s.strip().lower() for s in states_filter}
            groups = [g for g in groups if g.state.value.lower() in wanted]
        return ListGroupsResponse(
            error_code=E.NONE,
            groups=[
                ListedGroup(
                    group_id=g.group_id,
                    protocol_type=g.protocol_type or "",
                    group_state=g.state.value,
                    group_type=CLASSIC_GROUP_TYPE,
                )
                for g in groups
            ],
        )

    # -- DescribeGroups -----------------------------------------------------

    def describe_groups(self, version: int, request: Any, ctx: RequestContext) -> Any:
        include_operations = version >= 3 and request.include_authorized_operations
        described = []
        for group_id in request.groups:
            entry = self._describe(version, group_id)
            if include_operations and entry.error_code == E.NONE:
                entry.authorized_operations = AUTHORIZED_GROUP_OPERATIONS
            described.append(entry)
        return DescribeGroupsResponse(groups=described)

    def _describe(self, version: int, group_id: str) -> Any:
        group = self.rt.groups.get(group_id)
        if group is None:
            if version >= 6:
                return DescribedGroup(
                    group_id=group_id,
                    group_state=DEAD.value,
                    error_code=E.GROUP_ID_NOT_FOUND,
                    error_message=f"Group {group_id} not found.",
                )
            return DescribedGroup(group_id=group_id, group_state=DEAD.value, error_code=E.NONE)
        protocol_type = group.protocol_type or ""
        if group.state is STABLE:
            protocol = group.protocol_name or ""
            members = [
                DescribedGroupMember(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=m.metadata(group.protocol_name),
                    member_assignment=m.assignment,
                )
                for m in group.members.values()
            ]
        else:
            # Outside Stable Kafka shows members without metadata (their last assignment stays).
            protocol = ""
            members = [
                DescribedGroupMember(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=b"",
                    member_assignment=m.assignment,
                )
                for m in group.members.values()
            ]
        return DescribedGroup(
            error_code=E.NONE,
            group_id=group_id,
            group_state=group.state.value,
            protocol_type=protocol_type,
            protocol_data=protocol,
            members=members,
        )

    # -- DeleteGroups -------------------------------------------------------

    def delete_groups(self, version: int, request: Any, ctx: RequestContext) -> Any:
        results = []
        for group_id in dict.fromkeys(request.groups_names):
            error = self._delete_group(group_id)
            results.append(DeletableGroupResult(group_id=group_id, error_code=error))
        return DeleteGroupsResponse(results=results)

    def _delete_group(self, group_id: str) -> int:
        group = self.rt.groups.get(group_id)
        if group is None or group.state is DEAD:
            return E.GROUP_ID_NOT_FOUND
        if group.state is not EMPTY:
            return E.NON_EMPTY_GROUP
        self.offsets.delete_all_offsets(group_id)
        self.rt.write(group_record(group_id, None))
        return E.NONE
