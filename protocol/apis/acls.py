"""DescribeAcls (29), CreateAcls (30), DeleteAcls (31): the authorizer's ACLs, as Kafka 4.4
serves them (v1-3; v0, without pattern types, is gone)."""

from ..schema import Api, array, f, request, response, struct

DescribeAclsRequest = request(
    "DescribeAclsRequest", 29, "1-3", "2+",
    f("resource_type_filter", "int8"),
    f("resource_name_filter", "string", nullable="0+"),
    f("pattern_type_filter", "int8", "1+", default=3),
    f("principal_filter", "string", nullable="0+"),
    f("host_filter", "string", nullable="0+"),
    f("operation", "int8"),
    f("permission_type", "int8"),
)

DescribeAclsResponse = response(
    "DescribeAclsResponse", 29, "1-3", "2+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
    f("error_message", "string", nullable="0+"),
    f("resources", array(struct(
        "DescribeAclsResource",
        f("resource_type", "int8"),
        f("resource_name", "string"),
        f("pattern_type", "int8", "1+", default=3),
        f("acls", array(struct(
            "AclDescription",
            f("principal", "string"),
            f("host", "string"),
            f("operation", "int8"),
            f("permission_type", "int8"),
        ))),
    ))),
)

CreateAclsRequest = request(
    "CreateAclsRequest", 30, "1-3", "2+",
    f("creations", array(struct(
        "AclCreation",
        f("resource_type", "int8"),
        f("resource_name", "string"),
        f("resource_pattern_type", "int8", "1+", default=3),
        f("principal", "string"),
        f("host", "string"),
        f("operation", "int8"),
        f("permission_type", "int8"),
    ))),
)

CreateAclsResponse = response(
    "CreateAclsResponse", 30, "1-3", "2+",
    f("throttle_time_ms", "int32"),
    f("results", array(struct(
        "AclCreationResult",
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+"),
    ))),
)

DeleteAclsRequest = request(
    "DeleteAclsRequest", 31, "1-3", "2+",
    f("filters", array(struct(
        "DeleteAclsFilter",
        f("resource_type_filter", "int8"),
        f("resource_name_filter", "string", nullable="0+"),
        f("pattern_type_filter", "int8", "1+", default=3),
        f("principal_filter", "string", nullable="0+"),
        f("host_filter", "string", nullable="0+"),
        f("operation", "int8"),
        f("permission_type", "int8"),
    ))),
)

DeleteAclsResponse = response(
    "DeleteAclsResponse", 31, "1-3", "2+",
    f("throttle_time_ms", "int32"),
    f("filter_results", array(struct(
        "DeleteAclsFilterResult",
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+"),
        f("matching_acls", array(struct(
            "DeleteAclsMatchingAcl",
            f("error_code", "int16"),
            f("error_message", "string", nullable="0+"),
            f("resource_type", "int8"),
            f("resource_name", "string"),
            f("pattern_type", "int8", "1+", default=3),
            f("principal", "string"),
            f("host", "string"),
            f("operation", "int8"),
            f("permission_type", "int8"),
        ))),
    ))),
)

APIS = (
    Api(29, "DescribeAcls", DescribeAclsRequest, DescribeAclsResponse),
    Api(30, "CreateAcls", CreateAclsRequest, CreateAclsResponse),
    Api(31, "DeleteAcls", DeleteAclsRequest, DeleteAclsResponse),
)
