"""Produce (0): how clients append record batches to partitions."""

from ..schema import Api, array, f, request, response, struct

ProduceRequest = request(
    "ProduceRequest", 0, "3-13", "9+",
    f("transactional_id", "string", "3+", nullable="3+", default=None),
    f("acks", "int16", "0+"),
    f("timeout_ms", "int32", "0+"),
    f("topic_data", array(struct(
        "TopicProduceData",
        f("name", "string", "0-12"),
        f("topic_id", "uuid", "13+"),
        f("partition_data", array(struct(
            "PartitionProduceData",
            f("index", "int32", "0+"),
            f("records", "records", "0+", nullable="0+"),
        )), "0+"),
    )), "0+"),
)

ProduceResponse = response(
    "ProduceResponse", 0, "3-13", "9+",
    f("responses", array(struct(
        "TopicProduceResponse",
        f("name", "string", "0-12"),
        f("topic_id", "uuid", "13+"),
        f("partition_responses", array(struct(
            "PartitionProduceResponse",
            f("index", "int32", "0+"),
            f("error_code", "int16", "0+"),
            f("base_offset", "int64", "0+"),
            f("log_append_time_ms", "int64", "2+", default=-1),
            f("log_start_offset", "int64", "5+", default=-1),
            f("record_errors", array(struct(
                "BatchIndexAndErrorMessage",
                f("batch_index", "int32", "8+"),
                f("batch_index_error_message", "string", "8+", nullable="8+", default=None),
            )), "8+"),
            f("error_message", "string", "8+", nullable="8+", default=None),
            f("current_leader", struct(
                "LeaderIdAndEpoch",
                f("leader_id", "int32", "10+", default=-1),
                f("leader_epoch", "int32", "10+", default=-1),
            ), "10+", tag=0, tagged="10+"),
        )), "0+"),
    )), "0+"),
    f("throttle_time_ms", "int32", "1+", default=0),
    f("node_endpoints", array(struct(
        "NodeEndpoint",
        f("node_id", "int32", "10+"),
        f("host", "string", "10+"),
        f("port", "int32", "10+"),
        f("rack", "string", "10+", nullable="10+", default=None),
    )), "10+", tag=0, tagged="10+"),
)

API = Api(0, "Produce", ProduceRequest, ProduceResponse)
