"""The records the group coordinator persists, with their stable type ids.

The coordinator's state is a fold over these records (committed offsets,
classic groups, paused partitions, KIP-848 consumer groups, KIP-1071 streams groups); storage keeps
them as typed keys and values, knowing only what
:data:`COORDINATOR_RECORD_TYPES` declares. An id is never reused and a value changed
incompatibly gets a new version, so logs written by an older kcsim stay
readable. Keys and values hold only scalars and other records, never a
reference back, so they are kept out of the cyclic garbage collector
(``gc=False``): millions of committed offsets then cost the collector nothing
and 16 bytes less each.
"""

from __future__ import annotations

from msgspec import Struct

from kcsim.storage.records import RecordType


class OffsetCommitKey(Struct, frozen=True, array_like=True, gc=False):
    group: str
    topic: str
    partition: int


class OffsetCommitValue(Struct, array_like=True, gc=False):
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""
    commit_timestamp: int = 0
    expire_timestamp: int = -1  # explicit retention (OffsetCommit v1-v4), -1 otherwise


class GroupMemberValue(Struct, array_like=True, gc=False):
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]  # (protocol name, subscription metadata)
    assignment: bytes = b""


class GroupMetadataKey(Struct, frozen=True, array_like=True, gc=False):
    group: str


class GroupMetadataValue(Struct, array_like=True, gc=False):
    """A classic group as of its last completed rebalance (or its Empty state)."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    state_timestamp: int  # when this value was written (offset retention counts from Empty)
    members: list[GroupMemberValue] = []


class PausedTopicPartitionsKey(Struct, frozen=True, array_like=True, gc=False):
    group: str


class PausedTopic(Struct, array_like=True, gc=False):
    topic_id: bytes
    topic_name: str
    partitions: list[int]


class PausedTopicPartitionsValue(Struct, array_like=True, gc=False):
    topics: list[PausedTopic] = []


# -- KIP-848 consumer groups ------------------------------------------------


class ConsumerGroupMetadataKey(Struct, frozen=True, array_like=True, gc=False):
    group: str


class ConsumerGroupMetadataValue(Struct, array_like=True, gc=False):
    epoch: int
    metadata_hash: int = 0  # of the subscribed topics' ids and partition counts (Kafka 4.x)


class ConsumerGroupMemberKey(Struct, frozen=True, array_like=True, gc=False):
    group: str
    member_id: str


class ConsumerGroupMemberValue(Struct, array_like=True, gc=False):
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    subscribed_topic_regex: str | None
    server_assignor: str | None
    rebalance_timeout_ms: int


class ConsumerGroupTargetAssignmentMetadataKey(Struct, frozen=True, array_like=True, gc=False):
    group: str


class ConsumerGroupTargetAssignmentMetadataValue(Struct, array_like=True, gc=False):
    assignment_epoch: int
    # When the target was computed (Kafka 4.3+'s assignment interval), 0: never. Added
    # later: a value written without it reads as 0, and a kcsim that predates it reads
    # the epoch and skips it.
    assignment_timestamp: int = 0


class ConsumerGroupTargetAssignmentMemberKey(Struct, frozen=True, array_like=True, gc=False):
    group: str
    member_id: str


class TopicPartitions(Struct, array_like=True, gc=False):
    topic_id: bytes
    partitions: list[int]


class ConsumerGroupTargetAssignmentMemberValue(Struct, array_like=True, gc=False):
    topic_partitions: list[TopicPartitions]


class ConsumerGroupCurrentMemberAssignmentKey(Struct, frozen=True, array_like=True, gc=False):
    group: str
    member_id: str


class ConsumerGroupCurrentMemberAssignmentValue(Struct, array_like=True, gc=False):
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: list[TopicPartitions]
    partitions_pending_revocation: list[TopicPartitions]


# -- KIP-1071 streams groups --------------------------------------------------


class StreamsGroupMetadataKey(Struct, frozen=True, array_like=True, gc=False):
    group: str


class StreamsGroupMetadataValue(Struct, array_like=True, gc=False):
    epoch: int
    metadata_hash: int = 0  # of the topology's source topics' ids and partition counts
    validated_topology_epoch: int = -1  # the topology epoch whose internal topics exist
    # What the target was last computed with (num.standby.replicas); None: not recorded.
    last_assignment_configs: tuple[tuple[str, str], ...] | None = None


class StreamsGroupTopologyKey(Struct, frozen=True, array_like=True, gc=False):
    group: str


class StreamsTopicInfo(Struct, array_like=True, gc=False):
    """A repartition or changelog topic the topology names (0 partitions: derived)."""

    name: str
    partitions: int
    replication_factor: int
    topic_configs: list[tuple[str, str]]


class StreamsCopartitionGroup(Struct, array_like=True, gc=False):
    """Indexes into its subtopology's source topics, regexes and repartition sources."""

    source_topics: list[int]
    source_topic_regex: list[int]
    repartition_source_topics: list[int]


class StreamsSubtopology(Struct, array_like=True, gc=False):
    subtopology_id: str
    source_topics: list[str]
    source_topic_regex: list[str]
    state_changelog_topics: list[StreamsTopicInfo]
    repartition_sink_topics: list[str]
    repartition_source_topics: list[StreamsTopicInfo]
    copartition_groups: list[StreamsCopartitionGroup]


class StreamsGroupTopologyValue(Struct, array_like=True, gc=False):
    epoch: int
    subtopologies: list[StreamsSubtopology]


class StreamsGroupMemberKey(Struct, frozen=True, array_like=True, gc=False):
    group: str
    member_id: str


class StreamsGroupMemberValue(Struct, array_like=True, gc=False):
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    topology_epoch: int
    process_id: str
    user_endpoint: tuple[str, int] | None  # (host, port) for interactive queries
    client_tags: list[tuple[str, str]]


class StreamsGroupTargetAssignmentMetadataKey(Struct, frozen=True, array_like=True, gc=False):
    group: str


class StreamsGroupTargetAssignmentMetadataValue(Struct, array_like=True, gc=False):
    assignment_epoch: int
    assignment_timestamp: int = 0


class StreamsTaskIds(Struct, array_like=True, gc=False):
    """The tasks of one subtopology: one per partition number."""

    subtopology_id: str
    partitions: list[int]


class StreamsGroupTargetAssignmentMemberKey(Struct, frozen=True, array_like=True, gc=False):
    group: str
    member_id: str


class StreamsGroupTargetAssignmentMemberValue(Struct, array_like=True, gc=False):
    active_tasks: list[StreamsTaskIds]
    standby_tasks: list[StreamsTaskIds]
    warmup_tasks: list[StreamsTaskIds]


class StreamsGroupCurrentMemberAssignmentKey(Struct, frozen=True, array_like=True, gc=False):
    group: str
    member_id: str


class StreamsGroupCurrentMemberAssignmentValue(Struct, array_like=True, gc=False):
    member_epoch: int
    previous_member_epoch: int
    state: int
    active_tasks: list[StreamsTaskIds]
    standby_tasks: list[StreamsTaskIds]
    warmup_tasks: list[StreamsTaskIds]
    active_tasks_pending_revocation: list[StreamsTaskIds]
    standby_tasks_pending_revocation: list[StreamsTaskIds]
    warmup_tasks_pending_revocation: list[StreamsTaskIds]


# -- transactions -------------------------------------------------------------


class PendingTxnOffsetKey(Struct, frozen=True, array_like=True, gc=False):
    """An offset committed inside a producer's open transaction (TxnOffsetCommit)."""

    group: str
    producer_id: int
    topic: str
    partition: int


class TxnPartitions(Struct, array_like=True, gc=False):
    topic: str
    partitions: list[int]


class TransactionKey(Struct, frozen=True, array_like=True, gc=False):
    transactional_id: str


class TransactionValue(Struct, array_like=True, gc=False):
    """A transactional id's producer and its transaction, as Kafka's TransactionLogValue."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: str
    # Named apart from the topic record's `partitions` (a count): the pipeline's columns
    # are by field name across record types.
    txn_partitions: list[TxnPartitions] = []
    groups: list[str] = []
    start_ms: int = -1
    update_ms: int = -1
    # Kafka's tagged fields (TransactionLogValue v1): the transaction version the client
    # used for this transition (2: KIP-890 part 2, the epoch bumped at every end; 0 before),
    # the producer id before an epoch overflow moved to a new one, and the id an ending
    # transaction's overflow will move to. Older logs lack them and read as Kafka's defaults.
    client_transaction_version: int = 0
    previous_producer_id: int = -1
    next_producer_id: int = -1


class ProducerIdBlockKey(Struct, frozen=True, array_like=True, gc=False):
    """The one key of the producer-id allocator: ids below `next_block` are handed out."""


class ProducerIdBlockValue(Struct, array_like=True, gc=False):
    next_block: int


class GroupConfigKey(Struct, frozen=True, array_like=True, gc=False):
    """A group's dynamic configs (IncrementalAlterConfigs on resource type GROUP)."""

    group: str


class GroupConfigValue(Struct, array_like=True, gc=False):
    configs: dict[str, str] = {}


class GroupEventKey(Struct, frozen=True, array_like=True, gc=False):
    """An event's slot: its sequence number modulo `EVENT_SLOTS`, so that compaction
    keeps the newest `EVENT_SLOTS` events of the broker and drops older ones."""

    slot: int


class GroupEventValue(Struct, array_like=True, gc=False):
    """One change in a group's (or a transactional id's) life, and why it happened.

    `kind` and `cause` are words of `coordinator/shared/events.py`; `detail` holds what
    the change was about (a generation, the partitions that moved, a count)."""

    seq: int  # the broker's running number of events
    time_ms: int  # the coordinator's time
    group: str  # the group id, or the transactional id
    group_type: str  # classic, consumer, streams, share, transaction
    kind: str
    cause: str = ""
    member: str = ""
    detail: dict[str, str | int | list[str]] = {}


# -- KIP-932 share groups -------------------------------------------------------
# The share coordinator's records (Kafka's ShareSnapshot and ShareUpdate) and the group
# coordinator's (ShareGroup*), field for field.


class ShareSnapshotKey(Struct, frozen=True, array_like=True, gc=False):
    group: str
    topic_id: bytes
    partition: int


class ShareStateBatch(Struct, array_like=True, gc=False):
    first_offset: int
    last_offset: int
    delivery_state: int  # 0 available, 2 acknowledged, 4 archived
    delivery_count: int


class ShareSnapshotValue(Struct, array_like=True, gc=False):
    """A share partition's whole written state; the updates after it apply on top."""

    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    create_timestamp: int
    write_timestamp: int
    state_batches: list[ShareStateBatch] = []
    delivery_complete_count: int = -1


class ShareUpdateKey(Struct, frozen=True, array_like=True, gc=False):
    """One update since the partition's last snapshot: `slot` is its number since then
    (Kafka keeps one key and deletes records behind the snapshot; kcsim's log keeps the
    newest value of a key, so each update of a snapshot's run has its own)."""

    group: str
    topic_id: bytes
    partition: int
    slot: int


class ShareUpdateValue(Struct, array_like=True, gc=False):
    snapshot_epoch: int  # of the snapshot it applies on; others are stale
    leader_epoch: int
    start_offset: int  # -1: unchanged
    state_batches: list[ShareStateBatch] = []
    delivery_complete_count: int = -1


class ShareGroupMetadataKey(Struct, frozen=True, array_like=True, gc=False):
    group: str


class ShareGroupMetadataValue(Struct, array_like=True, gc=False):
    epoch: int
    metadata_hash: int = 0


class ShareGroupMemberKey(Struct, frozen=True, array_like=True, gc=False):
    group: str
    member_id: str


class ShareGroupMemberValue(Struct, array_like=True, gc=False):
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]


class ShareGroupTargetAssignmentMetadataKey(Struct, frozen=True, array_like=True, gc=False):
    group: str


class ShareGroupTargetAssignmentMetadataValue(Struct, array_like=True, gc=False):
    assignment_epoch: int
    assignment_timestamp: int = 0


class ShareGroupTargetAssignmentMemberKey(Struct, frozen=True, array_like=True, gc=False):
    group: str
    member_id: str


class ShareGroupTargetAssignmentMemberValue(Struct, array_like=True, gc=False):
    topic_partitions: list[TopicPartitions]


class ShareGroupCurrentMemberAssignmentKey(Struct, frozen=True, array_like=True, gc=False):
    group: str
    member_id: str


class ShareGroupCurrentMemberAssignmentValue(Struct, array_like=True, gc=False):
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: list[TopicPartitions]


class ShareTopicPartitionsInfo(Struct, array_like=True, gc=False):
    topic_id: bytes
    topic_name: str
    partitions: list[int]


class ShareTopicInfo(Struct, array_like=True, gc=False):
    topic_id: bytes
    topic_name: str


class ShareGroupStatePartitionMetadataKey(Struct, frozen=True, array_like=True, gc=False):
    group: str


class ShareGroupStatePartitionMetadataValue(Struct, array_like=True, gc=False):
    """Which partitions' share state is being set up, is set up, or is being deleted."""

    initializing_topics: list[ShareTopicPartitionsInfo] = []
    initialized_topics: list[ShareTopicPartitionsInfo] = []
    deleting_topics: list[ShareTopicInfo] = []


# Id 3 is the broker's topic record; ids are unique across everything one log holds.
COORDINATOR_RECORD_TYPES: tuple[RecordType, ...] = (
    RecordType(1, "offset_commit", OffsetCommitKey, OffsetCommitValue),
    RecordType(2, "group_metadata", GroupMetadataKey, GroupMetadataValue),
    RecordType(4, "paused_topic_partitions", PausedTopicPartitionsKey, PausedTopicPartitionsValue),
    RecordType(5, "consumer_group_metadata", ConsumerGroupMetadataKey, ConsumerGroupMetadataValue),
    RecordType(6, "consumer_group_member", ConsumerGroupMemberKey, ConsumerGroupMemberValue),
    RecordType(7, "consumer_group_target_assignment_metadata",
               ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue),
    RecordType(8, "consumer_group_target_assignment_member",
               ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue),
    RecordType(9, "consumer_group_current_member_assignment",
               ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue),
    RecordType(10, "pending_txn_offset", PendingTxnOffsetKey, OffsetCommitValue),
    RecordType(11, "transaction", TransactionKey, TransactionValue),
    RecordType(12, "producer_id_block", ProducerIdBlockKey, ProducerIdBlockValue),
    RecordType(21, "group_config", GroupConfigKey, GroupConfigValue),
    RecordType(22, "streams_group_metadata", StreamsGroupMetadataKey, StreamsGroupMetadataValue),
    RecordType(23, "streams_group_topology", StreamsGroupTopologyKey, StreamsGroupTopologyValue),
    RecordType(24, "streams_group_member", StreamsGroupMemberKey, StreamsGroupMemberValue),
    RecordType(25, "streams_group_target_assignment_metadata",
               StreamsGroupTargetAssignmentMetadataKey, StreamsGroupTargetAssignmentMetadataValue),
    RecordType(26, "streams_group_target_assignment_member",
               StreamsGroupTargetAssignmentMemberKey, StreamsGroupTargetAssignmentMemberValue),
    RecordType(27, "streams_group_current_member_assignment",
               StreamsGroupCurrentMemberAssignmentKey, StreamsGroupCurrentMemberAssignmentValue),
    RecordType(30, "share_snapshot", ShareSnapshotKey, ShareSnapshotValue),
    RecordType(31, "share_update", ShareUpdateKey, ShareUpdateValue),
    RecordType(32, "share_group_metadata", ShareGroupMetadataKey, ShareGroupMetadataValue),
    RecordType(33, "share_group_member", ShareGroupMemberKey, ShareGroupMemberValue),
    RecordType(34, "share_group_target_assignment_metadata",
               ShareGroupTargetAssignmentMetadataKey, ShareGroupTargetAssignmentMetadataValue),
    RecordType(35, "share_group_target_assignment_member",
               ShareGroupTargetAssignmentMemberKey, ShareGroupTargetAssignmentMemberValue),
    RecordType(36, "share_group_current_member_assignment",
               ShareGroupCurrentMemberAssignmentKey, ShareGroupCurrentMemberAssignmentValue),
    RecordType(37, "share_group_state_partition_metadata",
               ShareGroupStatePartitionMetadataKey, ShareGroupStatePartitionMetadataValue),
    RecordType(50, "group_event", GroupEventKey, GroupEventValue),
)
