"""OffsetCommit (8): a consumer stores the offsets it has processed in its group."""

from ..schema import Api, array, f, request, response, struct

OffsetCommitRequest = request(
    "OffsetCommitRequest", 8, "0-10", "8+",
    f("group_id", "string"),
    f("generation_id_or_member_epoch", "int32", "1+", default=-1),
    f("member_id", "string", "1+"),
    f("group_instance_id", "string", "7+", nullable="7+", default=None),
    f("retention_time_ms", "int64", "2-4", default=-1),
    f("topics", array(struct(
        "OffsetCommitRequestTopic",
        f("name", "string", "0-9"),
        f("topic_id", "uuid", "10+"),
        f("partitions", array(struct(
            "OffsetCommitRequestPartition",
            f("partition_index", "int32"),
            f("committed_offset", "int64"),
            f("committed_leader_epoch", "int32", "6+", default=-1),
            f("commit_timestamp", "int64", "1", default=-1),
            f("committed_metadata", "string", nullable="0+"),
        ))),
    ))),
)

OffsetCommitResponse = response(
    "OffsetCommitResponse", 8, "0-10", "8+",
    f("throttle_time_ms", "int32", "3+"),
    f("topics", array(struct(
        "OffsetCommitResponseTopic",
        f("name", "string", "0-9"),
        f("topic_id", "uuid", "10+"),
        f("partitions", array(struct(
            "OffsetCommitResponsePartition",
            f("partition_index", "int32"),
            f("error_code", "int16"),
        ))),
    ))),
)

API = Api(8, "OffsetCommit", OffsetCommitRequest, OffsetCommitResponse)
