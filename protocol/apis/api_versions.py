"""ApiVersions (18): how a client learns which APIs and versions we serve."""

from ..schema import Api, array, f, request, response, struct

ApiVersionsRequest = request(
    "ApiVersionsRequest", 18, "0-5", "3+",
    f("client_software_name", "string", "3+"),
    f("client_software_version", "string", "3+"),
    # v5 (KIP-1242): the cluster and node the client means to reach, when it knows them.
    f("cluster_id", "string", "5+", nullable="5+", default=None),
    f("node_id", "int32", "5+", default=-1),
)

ApiVersionsResponse = response(
    "ApiVersionsResponse", 18, "0-5", "3+",
    f("error_code", "int16"),
    f("api_keys", array(struct(
        "ApiVersion",
        f("api_key", "int16"),
        f("min_version", "int16"),
        f("max_version", "int16"),
    ))),
    f("throttle_time_ms", "int32", "1+"),
    f("supported_features", array(struct(
        "SupportedFeatureKey",
        f("name", "string", "3+"),
        f("min_version", "int16", "3+"),
        f("max_version", "int16", "3+"),
    )), "3+", tag=0, tagged="3+"),
    f("finalized_features_epoch", "int64", "3+", tag=1, tagged="3+", default=-1),
    f("finalized_features", array(struct(
        "FinalizedFeatureKey",
        f("name", "string", "3+"),
        f("max_version_level", "int16", "3+"),
        f("min_version_level", "int16", "3+"),
    )), "3+", tag=2, tagged="3+"),
    f("zk_migration_ready", "bool", "3+", tag=3, tagged="3+", default=False),
)

API = Api(18, "ApiVersions", ApiVersionsRequest, ApiVersionsResponse)
