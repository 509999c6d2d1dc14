"""Consumer protocol: the bytes classic consumers put in JoinGroup metadata and SyncGroup assignments.

Declared here; `kcsim.protocol.consumer_protocol` reads and writes them.
"""

from __future__ import annotations

from ..schema import array, data, f, struct

TopicPartition = struct(
    "TopicPartition",
    f("topic", "string"),
    f("partitions", array("int32")),
)

ConsumerProtocolSubscription = data(
    "ConsumerProtocolSubscription", "0-3", "none",
    f("topics", array("string")),
    f("user_data", "bytes", nullable="0+", default=None),
    f("owned_partitions", array(struct(
        "TopicPartition",
        f("topic", "string", "1+"),
        f("partitions", array("int32"), "1+"),
    )), "1+"),
    f("generation_id", "int32", "2+", default=-1),
    f("rack_id", "string", "3+", nullable="3+", default=None),
)

ConsumerProtocolAssignment = data(
    "ConsumerProtocolAssignment", "0-3", "none",
    f("assigned_partitions", array(TopicPartition)),
    f("user_data", "bytes", nullable="0+", default=None),
)

DATA = (ConsumerProtocolSubscription, ConsumerProtocolAssignment)
