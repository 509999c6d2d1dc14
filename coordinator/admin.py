"""ListGroups (KIP-40, KIP-518, KIP-848 filters), DescribeGroups and DeleteGroups (KIP-229).

Read-only views follow Kafka's rules for what a group shows in each state (a
KIP-848 group is listed with type `consumer`, and DescribeGroups answers it as
Kafka 4.x does: Dead, "not a classic group"); DeleteGroups writes a tombstone
for every committed offset, the group's paused set and then the group itself,
so replay removes exactly what the live coordinator removed.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.delete_groups import DeleteGroupsResponse
from kcsim.protocol.messages.describe_groups import DescribeGroupsResponse
from kcsim.protocol.messages.list_groups import ListGroupsResponse

from .groups.classic import CONSUMER_PROTOCOL_TYPE
from .groups.state import Request, Rule, rule
from .shared.describing import describe_each, not_found_message
from .shared.removal import remove_group
from .shared.states import DEAD, STATE_NAMES

if TYPE_CHECKING:
    from kcsim.protocol.messages.delete_groups import DeleteGroupsRequest
    from kcsim.protocol.messages.describe_groups import DescribeGroupsRequest
    from kcsim.protocol.messages.list_groups import ListGroupsRequest

    from .groups.classic import ClassicGroup
    from .share.membership import ShareMembership
    from .shared.interface import RequestContext
    from .shared.runtime import GroupRuntime

E = ErrorCode

ListedGroup = ListGroupsResponse.ListedGroup
DescribedGroup = DescribeGroupsResponse.DescribedGroup
DescribedGroupMember = DescribeGroupsResponse.DescribedGroupMember
DeletableGroupResult = DeleteGroupsResponse.DeletableGroupResult

CLASSIC_GROUP_TYPE = "classic"
CONSUMER_GROUP_TYPE = "consumer"
STREAMS_GROUP_TYPE = "streams"
STREAMS_PROTOCOL_TYPE = "streams"  # Kafka's protocol type of a listed streams group
SHARE_GROUP_TYPE = "share"  # listed with protocol type "share" too


class AdminHandlers:
    def __init__(self, runtime: GroupRuntime, share: ShareMembership) -> None:
        self.rt = runtime
        self.share = share

    # -- ListGroups ---------------------------------------------------------

    def list_groups(
        self, version: int, request: ListGroupsRequest, ctx: RequestContext
    ) -> ListGroupsResponse:
        states_filter = request.states_filter if version >= 4 else []
        types_filter = request.types_filter if version >= 5 else []
        wanted_types = {t.strip().lower() for t in types_filter}
        wanted = {s.strip().lower() for s in states_filter}
        listed = []
        if not wanted_types or CLASSIC_GROUP_TYPE in wanted_types:
            names = STATE_NAMES
            for g in self.rt.groups.values():
                state = names[g.state]
                if not wanted or state.lower() in wanted:
                    listed.append(ListedGroup(group_id=g.group_id,
                                              protocol_type=g.protocol_type or "",
                                              group_state=state, group_type=CLASSIC_GROUP_TYPE))
        if not wanted_types or CONSUMER_GROUP_TYPE in wanted_types:
            for cg in self.rt.consumer_groups.values():
                state = cg.state.value
                if not wanted or state.lower() in wanted:
                    listed.append(ListedGroup(group_id=cg.group_id,
                                              protocol_type=CONSUMER_PROTOCOL_TYPE,
                                              group_state=state, group_type=CONSUMER_GROUP_TYPE))
        if not wanted_types or STREAMS_GROUP_TYPE in wanted_types:
            for sg in self.rt.streams_groups.values():
                state = sg.state.value
                if not wanted or state.lower() in wanted:
                    listed.append(ListedGroup(group_id=sg.group_id,
                                              protocol_type=STREAMS_PROTOCOL_TYPE,
                                              group_state=state, group_type=STREAMS_GROUP_TYPE))
        if not wanted_types or SHARE_GROUP_TYPE in wanted_types:
            for shg in self.rt.share_groups.values():
                state = shg.state
                if not wanted or state.lower() in wanted:
                    listed.append(ListedGroup(group_id=shg.group_id,
                                              protocol_type=SHARE_GROUP_TYPE,
                                              group_state=state, group_type=SHARE_GROUP_TYPE))
        return ListGroupsResponse(error_code=E.NONE, groups=listed)

    # -- DescribeGroups -----------------------------------------------------

    def describe_groups(
        self, version: int, request: DescribeGroupsRequest, ctx: RequestContext
    ) -> DescribeGroupsResponse:
        return DescribeGroupsResponse(groups=describe_each(
            request.groups, self.rt.groups, partial(self._describe, version),
            version >= 3 and request.include_authorized_operations))

    def _describe(self, version: int, group_id: str, group: ClassicGroup | None) -> DescribedGroup:
        if group is None:
            # Kafka 4.x: a consumer or streams group is not described here (their own
            # Describe APIs do).
            message = not_found_message(group_id, CLASSIC_GROUP_TYPE,
                                        self.rt.group_exists(group_id))
            if version >= 6:
                return DescribedGroup(
                    group_id=group_id,
                    group_state=DEAD.value,
                    error_code=E.GROUP_ID_NOT_FOUND,
                    error_message=message,
                )
            return DescribedGroup(group_id=group_id, group_state=DEAD.value, error_code=E.NONE)
        # Outside Stable Kafka shows members without metadata (their last assignment stays).
        with_metadata = rule(Request.DESCRIBE, group.state) is Rule.MEMBERS_WITH_METADATA
        protocol = (group.protocol_name or "") if with_metadata else ""
        members = [
            DescribedGroupMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                member_metadata=m.metadata(group.protocol_name) if with_metadata else b"",
                member_assignment=m.assignment,
            )
            for m in group.member_list()
        ]
        return DescribedGroup(
            error_code=E.NONE,
            group_id=group_id,
            group_state=STATE_NAMES[group.state],
            protocol_type=group.protocol_type or "",
            protocol_data=protocol,
            members=members,
        )

    # -- DeleteGroups -------------------------------------------------------

    def delete_groups(
        self, version: int, request: DeleteGroupsRequest, ctx: RequestContext
    ) -> DeleteGroupsResponse:
        results = []
        for group_id in dict.fromkeys(request.groups_names):
            error = self._delete_group(group_id)
            results.append(DeletableGroupResult(group_id=group_id, error_code=error))
        return DeleteGroupsResponse(results=results)

    def _delete_group(self, group_id: str) -> int:
        consumer_group = self.rt.consumer_groups.get(group_id)
        if consumer_group is not None:
            if consumer_group.members:
                return E.NON_EMPTY_GROUP
            remove_group(self.rt, group_id, "request")
            return E.NONE
        streams_group = self.rt.streams_groups.get(group_id) if self.rt.streams_groups else None
        if streams_group is not None:
            if streams_group.members:
                return E.NON_EMPTY_GROUP
            remove_group(self.rt, group_id, "request")
            return E.NONE
        share_group = self.rt.share_groups.get(group_id) if self.rt.share_groups else None
        if share_group is not None:
            if share_group.members:
                return E.NON_EMPTY_GROUP
            remove_group(self.rt, group_id, "request")
            self.share.delete(share_group)
            return E.NONE
        group = self.rt.groups.get(group_id)
        does = Rule.NOT_FOUND if group is None else rule(Request.DELETE, group.state)
        if does is Rule.NOT_FOUND:
            return E.GROUP_ID_NOT_FOUND
        if does is Rule.NOT_EMPTY:
            return E.NON_EMPTY_GROUP
        remove_group(self.rt, group_id, "request")
        return E.NONE
