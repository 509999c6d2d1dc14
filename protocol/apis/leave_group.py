"""LeaveGroup (13): members leave a classic group without waiting for a session timeout."""

from ..schema import Api, array, f, request, response, struct

LeaveGroupRequest = request(
    "LeaveGroupRequest", 13, "0-5", "4+",
    f("group_id", "string"),
    f("member_id", "string", "0-2"),
    f("members", array(struct(
        "MemberIdentity",
        f("member_id", "string", "3+"),
        f("group_instance_id", "string", "3+", nullable="3+", default=None),
        f("reason", "string", "5+", nullable="5+", default=None),
    )), "3+"),
)

LeaveGroupResponse = response(
    "LeaveGroupResponse", 13, "0-5", "4+",
    f("throttle_time_ms", "int32", "1+"),
    f("error_code", "int16"),
    f("members", array(struct(
        "MemberResponse",
        f("member_id", "string", "3+"),
        f("group_instance_id", "string", "3+", nullable="3+"),
        f("error_code", "int16", "3+"),
    )), "3+"),
)

API = Api(13, "LeaveGroup", LeaveGroupRequest, LeaveGroupResponse)
