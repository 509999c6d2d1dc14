"""DescribeGroups (15): admin view of classic groups, their members and assignments."""

from ..schema import Api, array, f, request, response, struct

DescribeGroupsRequest = request(
    "DescribeGroupsRequest", 15, "0-6", "5+",
    f("groups", array("string")),
    f("include_authorized_operations", "bool", "3+"),
)

DescribeGroupsResponse = response(
    "DescribeGroupsResponse", 15, "0-6", "5+",
    f("throttle_time_ms", "int32", "1+"),
    f("groups", array(struct(
        "DescribedGroup",
        f("error_code", "int16"),
        f("error_message", "string", "6+", nullable="6+", default=None),
        f("group_id", "string"),
        f("group_state", "string"),
        f("protocol_type", "string"),
        f("protocol_data", "string"),
        f("members", array(struct(
            "DescribedGroupMember",
            f("member_id", "string"),
            f("group_instance_id", "string", "4+", nullable="4+", default=None),
            f("client_id", "string"),
            f("client_host", "string"),
            f("member_metadata", "bytes"),
            f("member_assignment", "bytes"),
        ))),
        f("authorized_operations", "int32", "3+", default=-2147483648),
    ))),
)

API = Api(15, "DescribeGroups", DescribeGroupsRequest, DescribeGroupsResponse)
