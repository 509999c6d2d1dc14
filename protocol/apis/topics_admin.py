"""CreateTopics (19), DeleteTopics (20), CreatePartitions (37): how admin clients manage topics."""

from ..schema import Api, array, f, request, response, struct

CreateTopicsRequest = request(
    "CreateTopicsRequest", 19, "0-7", "5+",
    f("topics", array(struct(
        "CreatableTopic",
        f("name", "string", "0+"),
        f("num_partitions", "int32", "0+"),
        f("replication_factor", "int16", "0+"),
        f("assignments", array(struct(
            "CreatableReplicaAssignment",
            f("partition_index", "int32", "0+"),
            f("broker_ids", array("int32"), "0+"),
        )), "0+"),
        f("configs", array(struct(
            "CreatableTopicConfig",
            f("name", "string", "0+"),
            f("value", "string", "0+", nullable="0+"),
        )), "0+"),
    )), "0+"),
    f("timeout_ms", "int32", "0+", default=60000),
    f("validate_only", "bool", "1+", default=False),
)

CreateTopicsResponse = response(
    "CreateTopicsResponse", 19, "0-7", "5+",
    f("throttle_time_ms", "int32", "2+"),
    f("topics", array(struct(
        "CreatableTopicResult",
        f("name", "string", "0+"),
        f("topic_id", "uuid", "7+"),
        f("error_code", "int16", "0+"),
        f("error_message", "string", "1+", nullable="0+"),
        f("topic_config_error_code", "int16", "5+", tag=0, tagged="5+"),
        f("num_partitions", "int32", "5+", default=-1),
        f("replication_factor", "int16", "5+", default=-1),
        f("configs", array(struct(
            "CreatableTopicConfigs",
            f("name", "string", "5+"),
            f("value", "string", "5+", nullable="5+"),
            f("read_only", "bool", "5+"),
            f("config_source", "int8", "5+", default=-1),
            f("is_sensitive", "bool", "5+"),
        )), "5+", nullable="5+"),
    )), "0+"),
)

DeleteTopicsRequest = request(
    "DeleteTopicsRequest", 20, "0-6", "4+",
    f("topics", array(struct(
        "DeleteTopicState",
        f("name", "string", "6+", nullable="6+", default=None),
        f("topic_id", "uuid", "6+"),
    )), "6+"),
    f("topic_names", array("string"), "0-5"),
    f("timeout_ms", "int32", "0+"),
)

DeleteTopicsResponse = response(
    "DeleteTopicsResponse", 20, "0-6", "4+",
    f("throttle_time_ms", "int32", "1+"),
    f("responses", array(struct(
        "DeletableTopicResult",
        f("name", "string", "0+", nullable="6+"),
        f("topic_id", "uuid", "6+"),
        f("error_code", "int16", "0+"),
        f("error_message", "string", "5+", nullable="5+", default=None),
    )), "0+"),
)

CreatePartitionsRequest = request(
    "CreatePartitionsRequest", 37, "0-3", "2+",
    f("topics", array(struct(
        "CreatePartitionsTopic",
        f("name", "string", "0+"),
        f("count", "int32", "0+"),
        f("assignments", array(struct(
            "CreatePartitionsAssignment",
            f("broker_ids", array("int32"), "0+"),
        )), "0+", nullable="0+"),
    )), "0+"),
    f("timeout_ms", "int32", "0+"),
    f("validate_only", "bool", "0+"),
)

CreatePartitionsResponse = response(
    "CreatePartitionsResponse", 37, "0-3", "2+",
    f("throttle_time_ms", "int32", "0+"),
    f("results", array(struct(
        "CreatePartitionsTopicResult",
        f("name", "string", "0+"),
        f("error_code", "int16", "0+"),
        f("error_message", "string", "0+", nullable="0+", default=None),
    )), "0+"),
)

APIS = (
    Api(19, "CreateTopics", CreateTopicsRequest, CreateTopicsResponse),
    Api(20, "DeleteTopics", DeleteTopicsRequest, DeleteTopicsResponse),
    Api(37, "CreatePartitions", CreatePartitionsRequest, CreatePartitionsResponse),
)
