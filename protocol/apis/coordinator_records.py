"""The group coordinator's records as Kafka writes them to `__consumer_offsets`.

Kafka 4.x frames each record as a key prefixed by its record type (int16) and a
value prefixed by its version (int16); these are the key and value bodies, in
the versions Kafka 4.x writes (keys v0; OffsetCommitValue v4, or v1 with an
explicit expiry; GroupMetadataValue v3; the KIP-848 and KIP-1071 values v0). Fields kcsim
never sets (ConsumerGroupMemberMetadataValue.ClassicMemberMetadata, the
assignment epochs of KIP-1251) are tagged in Kafka's schemas, so leaving them
out is what Kafka writes for their defaults.

The KIP-1249 paused-partitions record has no type id in Kafka; its schemas are
the KIP's, under a type id kcsim chose (see `kcsim.coordinator.kafka_format`).
"""

from __future__ import annotations

from ..schema import Message, StructType, array, data, f, struct
from .streams_group import Endpoint, KeyValue, TaskIds  # the same structs as on the wire

OffsetCommitKey = data(
    "OffsetCommitKey", "0", "none",
    f("group", "string"),
    f("topic", "string"),
    f("partition", "int32"),
)

OffsetCommitValue = data(
    "OffsetCommitValue", "0-4", "4+",
    f("offset", "int64"),
    f("leader_epoch", "int32", "3+", default=-1),
    f("metadata", "string"),
    f("commit_timestamp", "int64"),
    f("expire_timestamp", "int64", "1", default=-1),
    f("topic_id", "uuid", "4+", tag=0, tagged="4+"),
)

GroupMetadataKey = data(
    "GroupMetadataKey", "0", "none",
    f("group", "string"),
)

GroupMetadataValue = data(
    "GroupMetadataValue", "0-4", "4+",
    f("protocol_type", "string"),
    f("generation", "int32"),
    f("protocol", "string", nullable="0+", default=None),
    f("leader", "string", nullable="0+", default=None),
    f("current_state_timestamp", "int64", "2+", default=-1),
    f("members", array(struct(
        "MemberMetadata",
        f("member_id", "string"),
        f("group_instance_id", "string", "3+", nullable="3+", default=None),
        f("client_id", "string"),
        f("client_host", "string"),
        f("rebalance_timeout", "int32", "1+", default=-1),
        f("session_timeout", "int32"),
        f("subscription", "bytes"),
        f("assignment", "bytes"),
    ))),
)


def _group_key(name: str) -> Message:
    return data(name, "0", "none", f("group_id", "string"))


def _member_key(name: str) -> Message:
    return data(name, "0", "none", f("group_id", "string"), f("member_id", "string"))


ConsumerGroupMetadataKey = _group_key("ConsumerGroupMetadataKey")

ConsumerGroupMetadataValue = data(
    "ConsumerGroupMetadataValue", "0", "0+",
    f("epoch", "int32"),
    f("metadata_hash", "int64", tag=0, tagged="0+", default=0),
)

ConsumerGroupMemberMetadataKey = _member_key("ConsumerGroupMemberMetadataKey")

ConsumerGroupMemberMetadataValue = data(
    "ConsumerGroupMemberMetadataValue", "0", "0+",
    f("instance_id", "string", nullable="0+", default=None),
    f("rack_id", "string", nullable="0+", default=None),
    f("client_id", "string"),
    f("client_host", "string"),
    f("subscribed_topic_names", array("string")),
    f("subscribed_topic_regex", "string", nullable="0+", default=None),
    f("rebalance_timeout_ms", "int32", default=-1),
    f("server_assignor", "string", nullable="0+", default=None),
)

ConsumerGroupTargetAssignmentMetadataKey = _group_key("ConsumerGroupTargetAssignmentMetadataKey")

ConsumerGroupTargetAssignmentMetadataValue = data(
    "ConsumerGroupTargetAssignmentMetadataValue", "0", "0+",
    f("assignment_epoch", "int32"),
    f("assignment_timestamp", "int64", tag=0, tagged="0+", default=0),
)

ConsumerGroupTargetAssignmentMemberKey = _member_key("ConsumerGroupTargetAssignmentMemberKey")


def _topic_partitions(name: str) -> StructType:
    return struct(name, f("topic_id", "uuid"), f("partitions", array("int32")))


ConsumerGroupTargetAssignmentMemberValue = data(
    "ConsumerGroupTargetAssignmentMemberValue", "0", "0+",
    f("topic_partitions", array(_topic_partitions("TopicPartition"))),
)

ConsumerGroupCurrentMemberAssignmentKey = _member_key("ConsumerGroupCurrentMemberAssignmentKey")

_ASSIGNED = _topic_partitions("TopicPartitions")  # one struct for both fields: one class

ConsumerGroupCurrentMemberAssignmentValue = data(
    "ConsumerGroupCurrentMemberAssignmentValue", "0", "0+",
    f("member_epoch", "int32"),
    f("previous_member_epoch", "int32"),
    f("state", "int8"),
    f("assigned_partitions", array(_ASSIGNED)),
    f("partitions_pending_revocation", array(_ASSIGNED)),
)

PausedTopicPartitionsKey = _group_key("PausedTopicPartitionsKey")

PausedTopicPartitionsValue = data(
    "PausedTopicPartitionsValue", "0", "0+",
    f("paused_topic_partitions",
      array(_topic_partitions("PausedTopicPartitions"))),
)

# -- KIP-1071 streams groups ----------------------------------------------------

StreamsGroupMetadataKey = _group_key("StreamsGroupMetadataKey")

StreamsGroupMetadataValue = data(
    "StreamsGroupMetadataValue", "0", "0+",
    f("epoch", "int32"),
    f("metadata_hash", "int64"),
    f("validated_topology_epoch", "int32", tag=0, tagged="0+", default=-1),
    f("last_assignment_configs", array(struct(
        "LastAssignmentConfig",
        f("key", "string"),
        f("value", "string"),
    )), tag=1, tagged="0+", nullable="0+", default=None),
    f("stored_description_topology_epoch", "int32", tag=2, tagged="0+", default=-1),
    f("failed_description_topology_epoch", "int32", tag=3, tagged="0+", default=-1),
)

StreamsGroupTopologyKey = _group_key("StreamsGroupTopologyKey")

_TOPIC_INFO = struct(
    "TopicInfo",
    f("name", "string"),
    f("partitions", "int32"),
    f("replication_factor", "int16"),
    f("topic_configs", array(struct(
        "TopicConfig",
        f("key", "string"),
        f("value", "string"),
    ))),
)

StreamsGroupTopologyValue = data(
    "StreamsGroupTopologyValue", "0", "0+",
    f("epoch", "int32"),
    f("subtopologies", array(struct(
        "Subtopology",
        f("subtopology_id", "string"),
        f("source_topics", array("string")),
        f("source_topic_regex", array("string")),
        f("state_changelog_topics", array(_TOPIC_INFO)),
        f("repartition_sink_topics", array("string")),
        f("repartition_source_topics", array(_TOPIC_INFO)),
        f("copartition_groups", array(struct(
            "CopartitionGroup",
            f("source_topics", array("int16")),
            f("source_topic_regex", array("int16")),
            f("repartition_source_topics", array("int16")),
        ))),
    ))),
)

StreamsGroupMemberMetadataKey = _member_key("StreamsGroupMemberMetadataKey")

StreamsGroupMemberMetadataValue = data(
    "StreamsGroupMemberMetadataValue", "0", "0+",
    f("instance_id", "string", nullable="0+"),
    f("rack_id", "string", nullable="0+"),
    f("client_id", "string"),
    f("client_host", "string"),
    f("rebalance_timeout_ms", "int32", default=-1),
    f("topology_epoch", "int32"),
    f("process_id", "string"),
    f("user_endpoint", Endpoint, nullable="0+", default=None),
    f("client_tags", array(KeyValue)),
)

StreamsGroupTargetAssignmentMetadataKey = _group_key("StreamsGroupTargetAssignmentMetadataKey")

StreamsGroupTargetAssignmentMetadataValue = data(
    "StreamsGroupTargetAssignmentMetadataValue", "0", "0+",
    f("assignment_epoch", "int32"),
    f("assignment_timestamp", "int64", tag=0, tagged="0+", default=0),
)

StreamsGroupTargetAssignmentMemberKey = _member_key("StreamsGroupTargetAssignmentMemberKey")

StreamsGroupTargetAssignmentMemberValue = data(
    "StreamsGroupTargetAssignmentMemberValue", "0", "0+",
    f("active_tasks", array(TaskIds)),
    f("standby_tasks", array(TaskIds)),
    f("warmup_tasks", array(TaskIds)),
)

StreamsGroupCurrentMemberAssignmentKey = _member_key("StreamsGroupCurrentMemberAssignmentKey")

_CURRENT_TASKS = struct(
    "TaskIds",
    f("subtopology_id", "string"),
    f("partitions", array("int32")),
    f("assignment_epochs", array("int32"), tag=0, tagged="0+", nullable="0+", default=None),
)

StreamsGroupCurrentMemberAssignmentValue = data(
    "StreamsGroupCurrentMemberAssignmentValue", "0", "0+",
    f("member_epoch", "int32"),
    f("previous_member_epoch", "int32"),
    f("state", "int8"),
    f("active_tasks", array(_CURRENT_TASKS)),
    f("standby_tasks", array(_CURRENT_TASKS)),
    f("warmup_tasks", array(_CURRENT_TASKS)),
    f("active_tasks_pending_revocation", array(_CURRENT_TASKS)),
    f("standby_tasks_pending_revocation", array(_CURRENT_TASKS)),
    f("warmup_tasks_pending_revocation", array(_CURRENT_TASKS)),
)

DATA = (
    OffsetCommitKey, OffsetCommitValue, GroupMetadataKey, GroupMetadataValue,
    ConsumerGroupMetadataKey, ConsumerGroupMetadataValue,
    ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue,
    ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue,
    PausedTopicPartitionsKey, PausedTopicPartitionsValue,
    StreamsGroupMetadataKey, StreamsGroupMetadataValue,
    StreamsGroupTopologyKey, StreamsGroupTopologyValue,
    StreamsGroupMemberMetadataKey, StreamsGroupMemberMetadataValue,
    StreamsGroupTargetAssignmentMetadataKey, StreamsGroupTargetAssignmentMetadataValue,
    StreamsGroupTargetAssignmentMemberKey, StreamsGroupTargetAssignmentMemberValue,
    StreamsGroupCurrentMemberAssignmentKey, StreamsGroupCurrentMemberAssignmentValue,
)
