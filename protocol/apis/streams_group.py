"""StreamsGroupHeartbeat (88) and StreamsGroupDescribe (89): the KIP-1071 streams group protocol."""

from ..schema import Api, array, f, request, response, struct

KeyValue = struct(
    "KeyValue",
    f("key", "string"),
    f("value", "string"),
)

TopicInfo = struct(
    "TopicInfo",
    f("name", "string"),
    f("partitions", "int32"),
    f("replication_factor", "int16"),
    f("topic_configs", array(KeyValue)),
)

Endpoint = struct(
    "Endpoint",
    f("host", "string"),
    f("port", "uint16"),
)

TaskOffset = struct(
    "TaskOffset",
    f("subtopology_id", "string"),
    f("partition", "int32"),
    f("offset", "int64"),
)

TaskIds = struct(
    "TaskIds",
    f("subtopology_id", "string"),
    f("partitions", array("int32")),
)

StreamsGroupHeartbeatRequest = request(
    "StreamsGroupHeartbeatRequest", 88, "0-1", "0+",
    f("group_id", "string"),
    f("member_id", "string"),
    f("member_epoch", "int32"),
    f("endpoint_information_epoch", "int32"),
    f("instance_id", "string", nullable="0+", default=None),
    f("rack_id", "string", nullable="0+", default=None),
    f("rebalance_timeout_ms", "int32", default=-1),
    f("topology", struct(
        "Topology",
        f("epoch", "int32"),
        f("subtopologies", array(struct(
            "Subtopology",
            f("subtopology_id", "string"),
            f("source_topics", array("string")),
            f("source_topic_regex", array("string")),
            f("state_changelog_topics", array(TopicInfo)),
            f("repartition_sink_topics", array("string")),
            f("repartition_source_topics", array(TopicInfo)),
            f("copartition_groups", array(struct(
                "CopartitionGroup",
                f("source_topics", array("int16")),
                f("source_topic_regex", array("int16")),
                f("repartition_source_topics", array("int16")),
            ))),
        ))),
    ), nullable="0+", default=None),
    f("active_tasks", array(TaskIds), nullable="0+", default=None),
    f("standby_tasks", array(TaskIds), nullable="0+", default=None),
    f("warmup_tasks", array(TaskIds), nullable="0+", default=None),
    f("process_id", "string", nullable="0+", default=None),
    f("user_endpoint", Endpoint, nullable="0+", default=None),
    f("client_tags", array(KeyValue), nullable="0+", default=None),
    f("task_offsets", array(TaskOffset), nullable="0+", default=None),
    f("task_end_offsets", array(TaskOffset), nullable="0+", default=None),
    f("shutdown_application", "bool", default=False),
)

TopicPartition = struct(
    "TopicPartition",
    f("topic", "string"),
    f("partitions", array("int32")),
)

StreamsGroupHeartbeatResponse = response(
    "StreamsGroupHeartbeatResponse", 88, "0-1", "0+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
    f("error_message", "string", nullable="0+", default=None),
    f("member_id", "string"),
    f("member_epoch", "int32"),
    f("heartbeat_interval_ms", "int32"),
    f("acceptable_recovery_lag_legacy", "int32", "0"),
    f("task_offset_interval_ms", "int32"),
    f("acceptable_recovery_lag", "int64", "1+", default=-1),
    f("status", array(struct(
        "Status",
        f("status_code", "int8"),
        f("status_detail", "string"),
    )), nullable="0+"),
    f("active_tasks", array(TaskIds), nullable="0+", default=None),
    f("standby_tasks", array(TaskIds), nullable="0+", default=None),
    f("warmup_tasks", array(TaskIds), nullable="0+", default=None),
    f("topology_description_required", "bool", "1+", default=False),
    f("endpoint_information_epoch", "int32"),
    f("partitions_by_user_endpoint", array(struct(
        "EndpointToPartitions",
        f("user_endpoint", Endpoint),
        f("active_partitions", array(TopicPartition)),
        f("standby_partitions", array(TopicPartition)),
    )), nullable="0+", default=None),
)

StreamsGroupDescribeRequest = request(
    "StreamsGroupDescribeRequest", 89, "0-1", "0+",
    f("group_ids", array("string")),
    f("include_authorized_operations", "bool"),
    f("include_topology_description", "bool", "1+", default=False),
)

DescribeAssignment = struct(
    "Assignment",
    f("active_tasks", array(TaskIds)),
    f("standby_tasks", array(TaskIds)),
    f("warmup_tasks", array(TaskIds)),
)

TopologyDescriptionNode = struct(
    "TopologyDescriptionNode",
    f("name", "string", "1+"),
    f("node_type", "int8", "1+"),
    f("source_topics", array("string"), "1+"),
    f("sink_topic", "string", "1+", nullable="1+", default=None),
    f("stores", array("string"), "1+"),
    f("successors", array("string"), "1+"),
)

StreamsGroupDescribeResponse = response(
    "StreamsGroupDescribeResponse", 89, "0-1", "0+",
    f("throttle_time_ms", "int32"),
    f("groups", array(struct(
        "DescribedGroup",
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+", default=None),
        f("group_id", "string"),
        f("group_state", "string"),
        f("group_epoch", "int32"),
        f("assignment_epoch", "int32"),
        f("topology", struct(
            "Topology",
            f("epoch", "int32"),
            f("subtopologies", array(struct(
                "Subtopology",
                f("subtopology_id", "string"),
                f("source_topics", array("string")),
                f("repartition_sink_topics", array("string")),
                f("state_changelog_topics", array(TopicInfo)),
                f("repartition_source_topics", array(TopicInfo)),
            )), nullable="0+", default=None),
        ), nullable="0+", default=None),
        f("members", array(struct(
            "Member",
            f("member_id", "string"),
            f("member_epoch", "int32"),
            f("instance_id", "string", nullable="0+", default=None),
            f("rack_id", "string", nullable="0+", default=None),
            f("client_id", "string"),
            f("client_host", "string"),
            f("topology_epoch", "int32"),
            f("process_id", "string"),
            f("user_endpoint", Endpoint, nullable="0+", default=None),
            f("client_tags", array(KeyValue)),
            f("task_offsets", array(TaskOffset)),
            f("task_end_offsets", array(TaskOffset)),
            f("assignment", DescribeAssignment),
            f("target_assignment", DescribeAssignment),
            f("is_classic", "bool"),
        ))),
        f("authorized_operations", "int32", default=-2147483648),
        f("topology_description", struct(
            "TopologyDescription",
            f("subtopologies", array(struct(
                "TopologyDescriptionSubtopology",
                f("subtopology_id", "string", "1+"),
                f("nodes", array(TopologyDescriptionNode), "1+"),
            )), "1+"),
            f("global_stores", array(struct(
                "TopologyDescriptionGlobalStore",
                f("source", TopologyDescriptionNode, "1+"),
                f("processor", TopologyDescriptionNode, "1+"),
            )), "1+"),
        ), "1+", nullable="1+", default=None),
        f("topology_description_status", "int8", "1+", default=0),
        f("assignor_name", "string", "1+", nullable="1+", default=None),
    ))),
)

APIS = (
    Api(88, "StreamsGroupHeartbeat", StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse),
    Api(89, "StreamsGroupDescribe", StreamsGroupDescribeRequest, StreamsGroupDescribeResponse),
)
