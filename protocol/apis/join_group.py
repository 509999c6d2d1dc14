"""JoinGroup (11): a classic-protocol member joins a group and triggers or joins a rebalance."""

from ..schema import Api, array, f, request, response, struct

JoinGroupRequest = request(
    "JoinGroupRequest", 11, "0-9", "6+",
    f("group_id", "string"),
    f("session_timeout_ms", "int32"),
    f("rebalance_timeout_ms", "int32", "1+", default=-1),
    f("member_id", "string"),
    f("group_instance_id", "string", "5+", nullable="5+", default=None),
    f("protocol_type", "string"),
    f("protocols", array(struct(
        "JoinGroupRequestProtocol",
        f("name", "string"),
        f("metadata", "bytes"),
    ))),
    f("reason", "string", "8+", nullable="8+", default=None),
)

JoinGroupResponse = response(
    "JoinGroupResponse", 11, "0-9", "6+",
    f("throttle_time_ms", "int32", "2+"),
    f("error_code", "int16"),
    f("generation_id", "int32", default=-1),
    f("protocol_type", "string", "7+", nullable="7+", default=None),
    f("protocol_name", "string", nullable="7+"),
    f("leader", "string"),
    f("skip_assignment", "bool", "9+", default=False),
    f("member_id", "string"),
    f("members", array(struct(
        "JoinGroupResponseMember",
        f("member_id", "string"),
        f("group_instance_id", "string", "5+", nullable="5+", default=None),
        f("metadata", "bytes"),
    ))),
)

API = Api(11, "JoinGroup", JoinGroupRequest, JoinGroupResponse)
