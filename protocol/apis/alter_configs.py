"""AlterConfigs (33) and IncrementalAlterConfigs (44): how admin clients change configs.

AlterConfigs replaces a resource's whole set of dynamic configs; IncrementalAlterConfigs
changes single configs by operation (SET 0, DELETE 1, APPEND 2, SUBTRACT 3).
"""

from ..schema import Api, Field, Message, array, f, request, response, struct


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


def _requests(name: str, key: int, versions: str, flexible: str, *config: Field) -> Message:
    """A request naming resources and, for each, configs of (name, *config)."""
    return request(
        name, key, versions, flexible,
        f("resources", array(struct(
            "AlterConfigsResource",
            f("resource_type", "int8", "0+"),
            f("resource_name", "string", "0+"),
            f("configs", array(struct("AlterableConfig", f("name", "string", "0+"), *config)),
              "0+"),
        )), "0+"),
        f("validate_only", "bool", "0+"),
    )


AlterConfigsRequest = _requests(
    "AlterConfigsRequest", 33, "0-2", "2+",
    f("value", "string", "0+", nullable="0+"),
)
AlterConfigsResponse = _responses("AlterConfigsResponse", 33, "0-2", "2+")

IncrementalAlterConfigsRequest = _requests(
    "IncrementalAlterConfigsRequest", 44, "0-1", "1+",
    f("config_operation", "int8", "0+"),
    f("value", "string", "0+", nullable="0+"),
)
IncrementalAlterConfigsResponse = _responses("IncrementalAlterConfigsResponse", 44, "0-1", "1+")

APIS = (
    Api(33, "AlterConfigs", AlterConfigsRequest, AlterConfigsResponse),
    Api(44, "IncrementalAlterConfigs", IncrementalAlterConfigsRequest,
        IncrementalAlterConfigsResponse),
)
