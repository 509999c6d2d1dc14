"""FindCoordinator (10): how clients locate the broker coordinating a group or transaction."""

from ..schema import Api, array, f, request, response, struct

FindCoordinatorRequest = request(
    "FindCoordinatorRequest", 10, "0-6", "3+",
    f("key", "string", "0-3"),
    f("key_type", "int8", "1+", default=0),
    f("coordinator_keys", array("string"), "4+"),
)

FindCoordinatorResponse = response(
    "FindCoordinatorResponse", 10, "0-6", "3+",
    f("throttle_time_ms", "int32", "1+"),
    f("error_code", "int16", "0-3"),
    f("error_message", "string", "1-3", nullable="1-3"),
    f("node_id", "int32", "0-3"),
    f("host", "string", "0-3"),
    f("port", "int32", "0-3"),
    f("coordinators", array(struct(
        "Coordinator",
        f("key", "string", "4+"),
        f("node_id", "int32", "4+"),
        f("host", "string", "4+"),
        f("port", "int32", "4+"),
        f("error_code", "int16", "4+"),
        f("error_message", "string", "4+", nullable="4+"),
    )), "4+"),
)

API = Api(10, "FindCoordinator", FindCoordinatorRequest, FindCoordinatorResponse)
