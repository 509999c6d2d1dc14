"""DescribeShareGroupOffsets (90), AlterShareGroupOffsets (91) and DeleteShareGroupOffsets
(92): a share group's start offsets, read, moved and forgotten (KIP-932)."""

from ..schema import Api, array, f, request, response, struct

DescribeShareGroupOffsetsRequest = request(
    "DescribeShareGroupOffsetsRequest", 90, "0-1", "0+",
    f("groups", array(struct(
        "DescribeShareGroupOffsetsRequestGroup",
        f("group_id", "string"),
        f("topics", array(struct(
            "DescribeShareGroupOffsetsRequestTopic",
            f("topic_name", "string"),
            f("partitions", array("int32")),
        )), nullable="0+"),
    ))),
)

DescribeShareGroupOffsetsResponse = response(
    "DescribeShareGroupOffsetsResponse", 90, "0-1", "0+",
    f("throttle_time_ms", "int32"),
    f("groups", array(struct(
        "DescribeShareGroupOffsetsResponseGroup",
        f("group_id", "string"),
        f("topics", array(struct(
            "DescribeShareGroupOffsetsResponseTopic",
            f("topic_name", "string"),
            f("topic_id", "uuid"),
            f("partitions", array(struct(
                "DescribeShareGroupOffsetsResponsePartition",
                f("partition_index", "int32"),
                f("start_offset", "int64"),
                f("leader_epoch", "int32"),
                f("lag", "int64", "1+", default=-1),
                f("error_code", "int16"),
                f("error_message", "string", nullable="0+", default=None),
            ))),
        ))),
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+", default=None),
    ))),
)

AlterShareGroupOffsetsRequest = request(
    "AlterShareGroupOffsetsRequest", 91, "0", "0+",
    f("group_id", "string"),
    f("topics", array(struct(
        "AlterShareGroupOffsetsRequestTopic",
        f("topic_name", "string"),
        f("partitions", array(struct(
            "AlterShareGroupOffsetsRequestPartition",
            f("partition_index", "int32"),
            f("start_offset", "int64"),
        ))),
    ))),
)

AlterShareGroupOffsetsResponse = response(
    "AlterShareGroupOffsetsResponse", 91, "0", "0+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
    f("error_message", "string", nullable="0+", default=None),
    f("responses", array(struct(
        "AlterShareGroupOffsetsResponseTopic",
        f("topic_name", "string"),
        f("topic_id", "uuid"),
        f("partitions", array(struct(
            "AlterShareGroupOffsetsResponsePartition",
            f("partition_index", "int32"),
            f("error_code", "int16"),
            f("error_message", "string", nullable="0+", default=None),
        ))),
    ))),
)

DeleteShareGroupOffsetsRequest = request(
    "DeleteShareGroupOffsetsRequest", 92, "0", "0+",
    f("group_id", "string"),
    f("topics", array(struct(
        "DeleteShareGroupOffsetsRequestTopic",
        f("topic_name", "string"),
    ))),
)

DeleteShareGroupOffsetsResponse = response(
    "DeleteShareGroupOffsetsResponse", 92, "0", "0+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
    f("error_message", "string", nullable="0+", default=None),
    f("responses", array(struct(
        "DeleteShareGroupOffsetsResponseTopic",
        f("topic_name", "string"),
        f("topic_id", "uuid"),
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+", default=None),
    ))),
)

APIS = (
    Api(90, "DescribeShareGroupOffsets", DescribeShareGroupOffsetsRequest,
        DescribeShareGroupOffsetsResponse),
    Api(91, "AlterShareGroupOffsets", AlterShareGroupOffsetsRequest,
        AlterShareGroupOffsetsResponse),
    Api(92, "DeleteShareGroupOffsets", DeleteShareGroupOffsetsRequest,
        DeleteShareGroupOffsetsResponse),
)
