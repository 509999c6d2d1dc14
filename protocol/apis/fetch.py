"""Fetch (1): how consumers and followers read record batches from partitions."""

from ..schema import Api, array, f, request, response, struct

FetchRequest = request(
    "FetchRequest", 1, "4-18", "12+",
    f("cluster_id", "string", "12+", nullable="12+", tag=0, tagged="12+", default=None),
    f("replica_id", "int32", "0-14", default=-1),
    f("replica_state", struct(
        "ReplicaState",
        f("replica_id", "int32", "15+", default=-1),
        f("replica_epoch", "int64", "15+", default=-1),
    ), "15+", tag=1, tagged="15+"),
    f("max_wait_ms", "int32", "0+"),
    f("min_bytes", "int32", "0+"),
    f("max_bytes", "int32", "3+", default=0x7FFFFFFF),
    f("isolation_level", "int8", "4+", default=0),
    f("session_id", "int32", "7+", default=0),
    f("session_epoch", "int32", "7+", default=-1),
    f("topics", array(struct(
        "FetchTopic",
        f("topic", "string", "0-12"),
        f("topic_id", "uuid", "13+"),
        f("partitions", array(struct(
            "FetchPartition",
            f("partition", "int32", "0+"),
            f("current_leader_epoch", "int32", "9+", default=-1),
            f("fetch_offset", "int64", "0+"),
            f("last_fetched_epoch", "int32", "12+", default=-1),
            f("log_start_offset", "int64", "5+", default=-1),
            f("partition_max_bytes", "int32", "0+"),
            f("replica_directory_id", "uuid", "17+", tag=0, tagged="17+"),
            f("high_watermark", "int64", "18+", tag=1, tagged="18+",
              default=9223372036854775807),
        )), "0+"),
    )), "0+"),
    f("forgotten_topics_data", array(struct(
        "ForgottenTopic",
        f("topic", "string", "7-12"),
        f("topic_id", "uuid", "13+"),
        f("partitions", array("int32"), "7+"),
    )), "7+"),
    f("rack_id", "string", "11+", default=""),
)

FetchResponse = response(
    "FetchResponse", 1, "4-18", "12+",
    f("throttle_time_ms", "int32", "1+"),
    f("error_code", "int16", "7+"),
    f("session_id", "int32", "7+", default=0),
    f("responses", array(struct(
        "FetchableTopicResponse",
        f("topic", "string", "0-12"),
        f("topic_id", "uuid", "13+"),
        f("partitions", array(struct(
            "PartitionData",
            f("partition_index", "int32", "0+"),
            f("error_code", "int16", "0+"),
            f("high_watermark", "int64", "0+"),
            f("last_stable_offset", "int64", "4+", default=-1),
            f("log_start_offset", "int64", "5+", default=-1),
            f("diverging_epoch", struct(
                "EpochEndOffset",
                f("epoch", "int32", "12+", default=-1),
                f("end_offset", "int64", "12+", default=-1),
            ), "12+", tag=0, tagged="12+"),
            f("current_leader", struct(
                "LeaderIdAndEpoch",
                f("leader_id", "int32", "12+", default=-1),
                f("leader_epoch", "int32", "12+", default=-1),
            ), "12+", tag=1, tagged="12+"),
            f("snapshot_id", struct(
                "SnapshotId",
                f("end_offset", "int64", "0+", default=-1),
                f("epoch", "int32", "0+", default=-1),
            ), "12+", tag=2, tagged="12+"),
            f("aborted_transactions", array(struct(
                "AbortedTransaction",
                f("producer_id", "int64", "4+"),
                f("first_offset", "int64", "4+"),
            )), "4+", nullable="4+"),
            f("preferred_read_replica", "int32", "11+", default=-1),
            f("records", "records", "0+", nullable="0+"),
        )), "0+"),
    )), "0+"),
    f("node_endpoints", array(struct(
        "NodeEndpoint",
        f("node_id", "int32", "16+"),
        f("host", "string", "16+"),
        f("port", "int32", "16+"),
        f("rack", "string", "16+", nullable="16+", default=None),
    )), "16+", tag=0, tagged="16+"),
)

API = Api(1, "Fetch", FetchRequest, FetchResponse)
