"""OffsetForLeaderEpoch (23): where a leader epoch ended, which consumers ask to detect a
log truncated under them (KIP-320)."""

from ..schema import Api, array, f, request, response, struct

OffsetForLeaderEpochRequest = request(
    "OffsetForLeaderEpochRequest", 23, "2-4", "4+",
    f("replica_id", "int32", "3+", default=-2),
    f("topics", array(struct(
        "OffsetForLeaderTopic",
        f("topic", "string"),
        f("partitions", array(struct(
            "OffsetForLeaderPartition",
            f("partition", "int32"),
            f("current_leader_epoch", "int32", "2+", default=-1),
            f("leader_epoch", "int32"),
        ))),
    ))),
)

OffsetForLeaderEpochResponse = response(
    "OffsetForLeaderEpochResponse", 23, "2-4", "4+",
    f("throttle_time_ms", "int32", "2+"),
    f("topics", array(struct(
        "OffsetForLeaderTopicResult",
        f("topic", "string"),
        f("partitions", array(struct(
            "EpochEndOffset",
            f("error_code", "int16"),
            f("partition", "int32"),
            f("leader_epoch", "int32", "1+", default=-1),
            f("end_offset", "int64", default=-1),
        ))),
    ))),
)

API = Api(23, "OffsetForLeaderEpoch", OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse)
