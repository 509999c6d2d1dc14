"""ListGroups (16): admin listing of the groups a coordinator knows, optionally filtered."""

from ..schema import Api, array, f, request, response, struct

ListGroupsRequest = request(
    "ListGroupsRequest", 16, "0-5", "3+",
    f("states_filter", array("string"), "4+"),
    f("types_filter", array("string"), "5+"),
)

ListGroupsResponse = response(
    "ListGroupsResponse", 16, "0-5", "3+",
    f("throttle_time_ms", "int32", "1+"),
    f("error_code", "int16"),
    f("groups", array(struct(
        "ListedGroup",
        f("group_id", "string"),
        f("protocol_type", "string"),
        f("group_state", "string", "4+"),
        f("group_type", "string", "5+"),
    ))),
)

API = Api(16, "ListGroups", ListGroupsRequest, ListGroupsResponse)
