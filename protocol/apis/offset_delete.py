"""OffsetDelete (47): admin removal of a group's committed offsets for some partitions."""

from ..schema import Api, array, f, request, response, struct

OffsetDeleteRequest = request(
    "OffsetDeleteRequest", 47, "0", "none",
    f("group_id", "string"),
    f("topics", array(struct(
        "OffsetDeleteRequestTopic",
        f("name", "string"),
        f("partitions", array(struct(
            "OffsetDeleteRequestPartition",
            f("partition_index", "int32"),
        ))),
    ))),
)

OffsetDeleteResponse = response(
    "OffsetDeleteResponse", 47, "0", "none",
    f("error_code", "int16"),
    f("throttle_time_ms", "int32"),
    f("topics", array(struct(
        "OffsetDeleteResponseTopic",
        f("name", "string"),
        f("partitions", array(struct(
            "OffsetDeleteResponsePartition",
            f("partition_index", "int32"),
            f("error_code", "int16"),
        ))),
    ))),
)

API = Api(47, "OffsetDelete", OffsetDeleteRequest, OffsetDeleteResponse)
