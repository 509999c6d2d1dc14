"""Heartbeat (12): a classic-protocol member proves it is alive and learns of rebalances."""

from ..schema import Api, f, request, response

HeartbeatRequest = request(
    "HeartbeatRequest", 12, "0-4", "4+",
    f("group_id", "string"),
    f("generation_id", "int32"),
    f("member_id", "string"),
    f("group_instance_id", "string", "3+", nullable="3+", default=None),
)

HeartbeatResponse = response(
    "HeartbeatResponse", 12, "0-4", "4+",
    f("throttle_time_ms", "int32", "1+"),
    f("error_code", "int16"),
)

API = Api(12, "Heartbeat", HeartbeatRequest, HeartbeatResponse)
