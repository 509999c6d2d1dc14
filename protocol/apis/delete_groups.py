"""DeleteGroups (42): admin removal of empty groups and their committed offsets."""

from ..schema import Api, array, f, request, response, struct

DeleteGroupsRequest = request(
    "DeleteGroupsRequest", 42, "0-3", "2+",
    f("groups_names", array("string")),
)

DeleteGroupsResponse = response(
    "DeleteGroupsResponse", 42, "0-3", "2+",
    f("throttle_time_ms", "int32"),
    f("results", array(struct(
        "DeletableGroupResult",
        f("group_id", "string"),
        f("error_code", "int16"),
        f("error_message", "string", "3+", nullable="3+", default=None),
    ))),
)

API = Api(42, "DeleteGroups", DeleteGroupsRequest, DeleteGroupsResponse)
