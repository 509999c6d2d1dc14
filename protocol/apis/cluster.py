"""DescribeCluster (60), DescribeConfigs (32): how admin clients inspect brokers and configs."""

from ..schema import Api, array, f, request, response, struct

DescribeClusterRequest = request(
    "DescribeClusterRequest", 60, "0-2", "0+",
    f("include_cluster_authorized_operations", "bool", "0+"),
    f("endpoint_type", "int8", "1+", default=1),
    f("include_fenced_brokers", "bool", "2+"),
)

DescribeClusterResponse = response(
    "DescribeClusterResponse", 60, "0-2", "0+",
    f("throttle_time_ms", "int32", "0+"),
    f("error_code", "int16", "0+"),
    f("error_message", "string", "0+", nullable="0+", default=None),
    f("endpoint_type", "int8", "1+", default=1),
    f("cluster_id", "string", "0+"),
    f("controller_id", "int32", "0+", default=-1),
    f("brokers", array(struct(
        "DescribeClusterBroker",
        f("broker_id", "int32", "0+"),
        f("host", "string", "0+"),
        f("port", "int32", "0+"),
        f("rack", "string", "0+", nullable="0+", default=None),
        f("is_fenced", "bool", "2+"),
    )), "0+"),
    f("cluster_authorized_operations", "int32", "0+", default=-2147483648),
)

DescribeConfigsRequest = request(
    "DescribeConfigsRequest", 32, "0-4", "4+",
    f("resources", array(struct(
        "DescribeConfigsResource",
        f("resource_type", "int8", "0+"),
        f("resource_name", "string", "0+"),
        f("configuration_keys", array("string"), "0+", nullable="0+"),
    )), "0+"),
    f("include_synonyms", "bool", "1+", default=False),
    f("include_documentation", "bool", "3+", default=False),
)

DescribeConfigsResponse = response(
    "DescribeConfigsResponse", 32, "0-4", "4+",
    f("throttle_time_ms", "int32", "0+"),
    f("results", array(struct(
        "DescribeConfigsResult",
        f("error_code", "int16", "0+"),
        f("error_message", "string", "0+", nullable="0+"),
        f("resource_type", "int8", "0+"),
        f("resource_name", "string", "0+"),
        f("configs", array(struct(
            "DescribeConfigsResourceResult",
            f("name", "string", "0+"),
            f("value", "string", "0+", nullable="0+"),
            f("read_only", "bool", "0+"),
            f("config_source", "int8", "1+", default=-1),
            f("is_default", "bool", "0"),
            f("is_sensitive", "bool", "0+"),
            f("synonyms", array(struct(
                "DescribeConfigsSynonym",
                f("name", "string", "1+"),
                f("value", "string", "1+", nullable="0+"),
                f("source", "int8", "1+"),
            )), "1+"),
            f("config_type", "int8", "3+", default=0),
            f("documentation", "string", "3+", nullable="0+"),
        )), "0+"),
    )), "0+"),
)

APIS = (
    Api(60, "DescribeCluster", DescribeClusterRequest, DescribeClusterResponse),
    Api(32, "DescribeConfigs", DescribeConfigsRequest, DescribeConfigsResponse),
)
