"""OffsetFetch (9): a consumer reads back the offsets its group committed."""

from ..schema import Api, array, f, request, response, struct

OffsetFetchRequest = request(
    "OffsetFetchRequest", 9, "0-10", "6+",
    f("group_id", "string", "0-7"),
    f("topics", array(struct(
        "OffsetFetchRequestTopic",
        f("name", "string", "0-7"),
        f("partition_indexes", array("int32"), "0-7"),
    )), "0-7", nullable="2-7"),
    f("groups", array(struct(
        "OffsetFetchRequestGroup",
        f("group_id", "string", "8+"),
        f("member_id", "string", "9+", nullable="9+", default=None),
        f("member_epoch", "int32", "9+", default=-1),
        f("topics", array(struct(
            "OffsetFetchRequestTopics",
            f("name", "string", "8-9"),
            f("topic_id", "uuid", "10+"),
            f("partition_indexes", array("int32"), "8+"),
        )), "8+", nullable="8+"),
    )), "8+"),
    f("require_stable", "bool", "7+", default=False),
)

OffsetFetchResponse = response(
    "OffsetFetchResponse", 9, "0-10", "6+",
    f("throttle_time_ms", "int32", "3+"),
    f("topics", array(struct(
        "OffsetFetchResponseTopic",
        f("name", "string", "0-7"),
        f("partitions", array(struct(
            "OffsetFetchResponsePartition",
            f("partition_index", "int32", "0-7"),
            f("committed_offset", "int64", "0-7"),
            f("committed_leader_epoch", "int32", "5-7", default=-1),
            f("metadata", "string", "0-7", nullable="0-7"),
            f("error_code", "int16", "0-7"),
        )), "0-7"),
    )), "0-7"),
    f("error_code", "int16", "2-7", default=0),
    f("groups", array(struct(
        "OffsetFetchResponseGroup",
        f("group_id", "string", "8+"),
        f("topics", array(struct(
            "OffsetFetchResponseTopics",
            f("name", "string", "8-9"),
            f("topic_id", "uuid", "10+"),
            f("partitions", array(struct(
                "OffsetFetchResponsePartitions",
                f("partition_index", "int32", "8+"),
                f("committed_offset", "int64", "8+"),
                f("committed_leader_epoch", "int32", "8+", default=-1),
                f("metadata", "string", "8+", nullable="8+"),
                f("error_code", "int16", "8+"),
            )), "8+"),
        )), "8+"),
        f("error_code", "int16", "8+", default=0),
    )), "8+"),
)

API = Api(9, "OffsetFetch", OffsetFetchRequest, OffsetFetchResponse)
