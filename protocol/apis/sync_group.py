"""SyncGroup (14): the leader hands out assignments and every member collects its own."""

from ..schema import Api, array, f, request, response, struct

SyncGroupRequest = request(
    "SyncGroupRequest", 14, "0-5", "4+",
    f("group_id", "string"),
    f("generation_id", "int32"),
    f("member_id", "string"),
    f("group_instance_id", "string", "3+", nullable="3+", default=None),
    f("protocol_type", "string", "5+", nullable="5+", default=None),
    f("protocol_name", "string", "5+", nullable="5+", default=None),
    f("assignments", array(struct(
        "SyncGroupRequestAssignment",
        f("member_id", "string"),
        f("assignment", "bytes"),
    ))),
)

SyncGroupResponse = response(
    "SyncGroupResponse", 14, "0-5", "4+",
    f("throttle_time_ms", "int32", "1+"),
    f("error_code", "int16"),
    f("protocol_type", "string", "5+", nullable="5+", default=None),
    f("protocol_name", "string", "5+", nullable="5+", default=None),
    f("assignment", "bytes"),
)

API = Api(14, "SyncGroup", SyncGroupRequest, SyncGroupResponse)
