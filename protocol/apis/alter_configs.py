"""AlterConfigs (33) and IncrementalAlterConfigs (44): how admin clients change configs.

AlterConfigs replaces a resource's whole set of dynamic configs; IncrementalAlterConfigs
changes single configs by operation (SET 0, DELETE 1, APPEND 2, SUBTRACT 3).
"""

from ..schema import Api, Message, array, f, request, response, struct


def _responses(name: str, key: int, versions: str, flexible: str) -> Message:
    return response(
        name, key, versions, flexible,
        f("throttle_time_ms", "int32", "0+"),
        f("responses", array(struct(
            "AlterConfigsResourceResponse",
            f("error_code", "int16", "0+"),
            f("error_message", "string", "0+", nullable="0+"),
            f("resource_type", "int8", "0+"),
            f("resource_name", "string", "0+"),
        )), "0+"),
    )


AlterConfigsRequest = request(
    "AlterConfigsRequest", 33, "0-2", "2+",
    f("resources", array(struct(
        "AlterConfigsResource",
        f("resource_type", "int8", "0+"),
        f("resource_name", "string", "0+"),
        f("configs", array(struct(
            "AlterableConfig",
            f("name", "string", "0+"),
            f("value", "string", "0+", nullable="0+"),
        )), "0+"),
    )), "0+"),
    f("validate_only", "bool", "0+"),
)

AlterConfigsResponse = _responses("AlterConfigsResponse", 33, "0-2", "2+")

IncrementalAlterConfigsRequest = request(
    "IncrementalAlterConfigsRequest", 44, "0-1", "1+",
    f("resources", array(struct(
        "AlterConfigsResource",
        f("resource_type", "int8", "0+"),
        f("resource_name", "string", "0+"),
        f("configs", array(struct(
            "AlterableConfig",
            f("name", "string", "0+"),
            f("config_operation", "int8", "0+"),
            f("value", "string", "0+", nullable="0+"),
        )), "0+"),
    )), "0+"),
    f("validate_only", "bool", "0+"),
)

IncrementalAlterConfigsResponse = _responses("IncrementalAlterConfigsResponse", 44, "0-1", "1+")

APIS = (
    Api(33, "AlterConfigs", AlterConfigsRequest, AlterConfigsResponse),
    Api(44, "IncrementalAlterConfigs", IncrementalAlterConfigsRequest,
        IncrementalAlterConfigsResponse),
)
