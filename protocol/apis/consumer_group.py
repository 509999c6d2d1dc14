"""ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69): the KIP-848 consumer group protocol."""

from ..schema import Api, array, f, request, response, struct

HeartbeatTopicPartitions = struct(
    "TopicPartitions",
    f("topic_id", "uuid"),
    f("partitions", array("int32")),
)

ConsumerGroupHeartbeatRequest = request(
    "ConsumerGroupHeartbeatRequest", 68, "0-1", "0+",
    f("group_id", "string"),
    f("member_id", "string"),
    f("member_epoch", "int32"),
    f("instance_id", "string", nullable="0+", default=None),
    f("rack_id", "string", nullable="0+", default=None),
    f("rebalance_timeout_ms", "int32", default=-1),
    f("subscribed_topic_names", array("string"), nullable="0+", default=None),
    f("subscribed_topic_regex", "string", "1+", nullable="1+", default=None),
    f("server_assignor", "string", nullable="0+", default=None),
    f("topic_partitions", array(HeartbeatTopicPartitions), nullable="0+", default=None),
)

ConsumerGroupHeartbeatResponse = response(
    "ConsumerGroupHeartbeatResponse", 68, "0-1", "0+",
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

DescribeAssignment = struct(
    "Assignment",
    f("topic_partitions", array(DescribeTopicPartitions)),
)

ConsumerGroupDescribeRequest = request(
    "ConsumerGroupDescribeRequest", 69, "0-1", "0+",
    f("group_ids", array("string")),
    f("include_authorized_operations", "bool"),
)

ConsumerGroupDescribeResponse = response(
    "ConsumerGroupDescribeResponse", 69, "0-1", "0+",
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
            f("instance_id", "string", nullable="0+", default=None),
            f("rack_id", "string", nullable="0+", default=None),
            f("member_epoch", "int32"),
            f("client_id", "string"),
            f("client_host", "string"),
            f("subscribed_topic_names", array("string")),
            f("subscribed_topic_regex", "string", nullable="0+", default=None),
            f("assignment", DescribeAssignment),
            f("target_assignment", DescribeAssignment),
            f("member_type", "int8", "1+", default=-1),
        ))),
        f("authorized_operations", "int32", default=-2147483648),
    ))),
)

APIS = (
    Api(68, "ConsumerGroupHeartbeat", ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse),
    Api(69, "ConsumerGroupDescribe", ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse),
)
