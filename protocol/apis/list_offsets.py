"""ListOffsets (2): how clients map timestamps (or earliest/latest) to partition offsets."""

from ..schema import Api, array, f, request, response, struct

ListOffsetsRequest = request(
    "ListOffsetsRequest", 2, "0-11", "6+",
    f("replica_id", "int32", "0+"),
    f("isolation_level", "int8", "2+"),
    f("topics", array(struct(
        "ListOffsetsTopic",
        f("name", "string", "0+"),
        f("partitions", array(struct(
            "ListOffsetsPartition",
            f("partition_index", "int32", "0+"),
            f("current_leader_epoch", "int32", "4+", default=-1),
            f("timestamp", "int64", "0+"),
            f("max_num_offsets", "int32", "0", default=1),
        )), "0+"),
    )), "0+"),
    f("timeout_ms", "int32", "10+"),
)

ListOffsetsResponse = response(
    "ListOffsetsResponse", 2, "0-11", "6+",
    f("throttle_time_ms", "int32", "2+"),
    f("topics", array(struct(
        "ListOffsetsTopicResponse",
        f("name", "string", "0+"),
        f("partitions", array(struct(
            "ListOffsetsPartitionResponse",
            f("partition_index", "int32", "0+"),
            f("error_code", "int16", "0+"),
            f("old_style_offsets", array("int64"), "0"),
            f("timestamp", "int64", "1+", default=-1),
            f("offset", "int64", "1+", default=-1),
            f("leader_epoch", "int32", "4+", default=-1),
        )), "0+"),
    )), "0+"),
)

API = Api(2, "ListOffsets", ListOffsetsRequest, ListOffsetsResponse)
