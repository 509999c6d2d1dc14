"""ShareGroupHeartbeat (76), ShareGroupDescribe (77), ShareFetch (78) and ShareAcknowledge
(79): KIP-932 share groups, their membership and their records."""

from ..schema import Api, array, f, request, response, struct

HeartbeatTopicPartitions = struct(
    "TopicPartitions",
    f("topic_id", "uuid"),
    f("partitions", array("int32")),
)

ShareGroupHeartbeatRequest = request(
    "ShareGroupHeartbeatRequest", 76, "1", "0+",
    f("group_id", "string"),
    f("member_id", "string"),
    f("member_epoch", "int32"),
    f("rack_id", "string", nullable="0+", default=None),
    f("subscribed_topic_names", array("string"), nullable="0+", default=None),
)

ShareGroupHeartbeatResponse = response(
    "ShareGroupHeartbeatResponse", 76, "1", "0+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
    f("error_message", "string", nullable="0+", default=None),
    f("member_id", "string", nullable="0+", default=None),
    f("member_epoch", "int32"),
    f("heartbeat_interval_ms", "int32"),
    f("assignment", struct(
        "Assignment",
        f("topic_partitions", array(HeartbeatTopicPartitions)),
    ), nullable="0+", default=None),
)

DescribeTopicPartitions = struct(
    "TopicPartitions",
    f("topic_id", "uuid"),
    f("topic_name", "string"),
    f("partitions", array("int32")),
)

ShareGroupDescribeRequest = request(
    "ShareGroupDescribeRequest", 77, "1", "0+",
    f("group_ids", array("string")),
    f("include_authorized_operations", "bool"),
)

ShareGroupDescribeResponse = response(
    "ShareGroupDescribeResponse", 77, "1", "0+",
    f("throttle_time_ms", "int32"),
    f("groups", array(struct(
        "DescribedGroup",
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+", default=None),
        f("group_id", "string"),
        f("group_state", "string"),
        f("group_epoch", "int32"),
        f("assignment_epoch", "int32"),
        f("assignor_name", "string"),
        f("members", array(struct(
            "Member",
            f("member_id", "string"),
            f("rack_id", "string", nullable="0+", default=None),
            f("member_epoch", "int32"),
            f("client_id", "string"),
            f("client_host", "string"),
            f("subscribed_topic_names", array("string")),
            f("assignment", struct(
                "Assignment",
                f("topic_partitions", array(DescribeTopicPartitions)),
            )),
        ))),
        f("authorized_operations", "int32", default=-2147483648),
    ))),
)

AcknowledgementBatch = struct(
    "AcknowledgementBatch",
    f("first_offset", "int64"),
    f("last_offset", "int64"),
    f("acknowledge_types", array("int8")),
)

LeaderIdAndEpoch = struct(
    "LeaderIdAndEpoch",
    f("leader_id", "int32"),
    f("leader_epoch", "int32"),
)

NodeEndpoint = struct(
    "NodeEndpoint",
    f("node_id", "int32"),
    f("host", "string"),
    f("port", "int32"),
    f("rack", "string", nullable="0+", default=None),
)

ShareFetchRequest = request(
    "ShareFetchRequest", 78, "1-2", "0+",
    f("group_id", "string", nullable="0+", default=None),
    f("member_id", "string", nullable="0+"),
    f("share_session_epoch", "int32"),
    f("max_wait_ms", "int32"),
    f("min_bytes", "int32"),
    f("max_bytes", "int32", default=0x7FFFFFFF),
    f("max_records", "int32", "1+"),
    f("batch_size", "int32", "1+"),
    f("share_acquire_mode", "int8", "2+", default=0),
    f("is_renew_ack", "bool", "2+", default=False),
    f("topics", array(struct(
        "FetchTopic",
        f("topic_id", "uuid"),
        f("partitions", array(struct(
            "FetchPartition",
            f("partition_index", "int32"),
            f("partition_max_bytes", "int32", "0"),
            f("acknowledgement_batches", array(AcknowledgementBatch)),
        ))),
    ))),
    f("forgotten_topics_data", array(struct(
        "ForgottenTopic",
        f("topic_id", "uuid"),
        f("partitions", array("int32")),
    ))),
)

ShareFetchResponse = response(
    "ShareFetchResponse", 78, "1-2", "0+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
    f("error_message", "string", nullable="0+", default=None),
    f("acquisition_lock_timeout_ms", "int32", "1+"),
    f("responses", array(struct(
        "ShareFetchableTopicResponse",
        f("topic_id", "uuid"),
        f("partitions", array(struct(
            "PartitionData",
            f("partition_index", "int32"),
            f("error_code", "int16"),
            f("error_message", "string", nullable="0+", default=None),
            f("acknowledge_error_code", "int16"),
            f("acknowledge_error_message", "string", nullable="0+", default=None),
            f("current_leader", LeaderIdAndEpoch),
            f("records", "records", nullable="0"),
            f("acquired_records", array(struct(
                "AcquiredRecords",
                f("first_offset", "int64"),
                f("last_offset", "int64"),
                f("delivery_count", "int16"),
            ))),
        ))),
    ))),
    f("node_endpoints", array(NodeEndpoint)),
)

ShareAcknowledgeRequest = request(
    "ShareAcknowledgeRequest", 79, "1-2", "0+",
    f("group_id", "string", nullable="0+", default=None),
    f("member_id", "string", nullable="0+"),
    f("share_session_epoch", "int32"),
    f("is_renew_ack", "bool", "2+", default=False),
    f("topics", array(struct(
        "AcknowledgeTopic",
        f("topic_id", "uuid"),
        f("partitions", array(struct(
            "AcknowledgePartition",
            f("partition_index", "int32"),
            f("acknowledgement_batches", array(AcknowledgementBatch)),
        ))),
    ))),
)

ShareAcknowledgeResponse = response(
    "ShareAcknowledgeResponse", 79, "1-2", "0+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
    f("error_message", "string", nullable="0+", default=None),
    f("acquisition_lock_timeout_ms", "int32", "2+", default=0),
    f("responses", array(struct(
        "ShareAcknowledgeTopicResponse",
        f("topic_id", "uuid"),
        f("partitions", array(struct(
            "PartitionData",
            f("partition_index", "int32"),
            f("error_code", "int16"),
            f("error_message", "string", nullable="0+", default=None),
            f("current_leader", LeaderIdAndEpoch),
        ))),
    ))),
    f("node_endpoints", array(NodeEndpoint)),
)

APIS = (
    Api(76, "ShareGroupHeartbeat", ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse),
    Api(77, "ShareGroupDescribe", ShareGroupDescribeRequest, ShareGroupDescribeResponse),
    Api(78, "ShareFetch", ShareFetchRequest, ShareFetchResponse),
    Api(79, "ShareAcknowledge", ShareAcknowledgeRequest, ShareAcknowledgeResponse),
)
