"""What each config kcsim models is for, in one line: the documentation DescribeConfigs
gives when a client asks for it (`include_documentation`, v3+; kafka-configs shows it).

The lines are kcsim's own, written for kcsim: they say what the config means and, where
kcsim only keeps a value to show it, that it has no effect here. Kafka's own text is
longer and differs (docs/kafka-differences.md). A broker's dynamic default of a topic
config (log.retention.ms for retention.ms) is described through the topic config.
"""

from __future__ import annotations

from .topic_configs import TOPIC_CONFIGS

_KEPT = " kcsim keeps and shows it; it has no effect here."

TOPIC_DOCS: dict[str, str] = {
    "cleanup.policy": "How old records leave the log: delete them by age or size, compact "
                      "them to the latest value per key, or both.",
    "compression.gzip.level": "The gzip level used where the topic recompresses batches as "
                              "gzip.",
    "compression.lz4.level": "The lz4 level used where the topic recompresses batches as lz4.",
    "compression.type": "The codec batches are stored with; 'producer' keeps the codec each "
                        "producer chose.",
    "compression.zstd.level": "The zstd level used where the topic recompresses batches as "
                              "zstd.",
    "delete.retention.ms": "How long compaction keeps a tombstone (a null value) so readers "
                           "can see the delete.",
    "errors.deadletterqueue.group.enable": "Whether groups may send failed records to this "
                                           "topic as a dead letter queue." + _KEPT,
    "file.delete.delay.ms": "How long a deleted segment file lingers before it is removed."
                            + _KEPT,
    "flush.messages": "Force an fsync of the log after this many records." + _KEPT,
    "flush.ms": "Force an fsync of the log after this much time." + _KEPT,
    "follower.replication.throttled.replicas": "Replicas whose follower-side replication is "
                                               "throttled." + _KEPT,
    "index.interval.bytes": "How many bytes of log lie between two offset index entries."
                            + _KEPT,
    "leader.replication.throttled.replicas": "Replicas whose leader-side replication is "
                                             "throttled." + _KEPT,
    "local.retention.bytes": "With tiered storage, the size of the log kept on local disk."
                             + _KEPT,
    "local.retention.ms": "With tiered storage, how long records stay on local disk."
                          + _KEPT,
    "max.compaction.lag.ms": "The longest a record may wait before compaction considers it.",
    "max.decompressed.message.bytes": "The largest a batch may grow when decompressed to be "
                                      "checked." + _KEPT,
    "max.message.bytes": "The largest record batch the topic accepts, in bytes.",
    "message.timestamp.after.max.ms": "How far in the future a record's timestamp may lie "
                                      "before the batch is refused.",
    "message.timestamp.before.max.ms": "How far in the past a record's timestamp may lie "
                                       "before the batch is refused.",
    "message.timestamp.type": "Whether records keep the producer's timestamp (CreateTime) or "
                              "get the broker's append time (LogAppendTime).",
    "min.cleanable.dirty.ratio": "The share of uncompacted log that makes a partition due for "
                                 "compaction.",
    "min.compaction.lag.ms": "The shortest a record stays uncompacted after it is written.",
    "min.insync.replicas": "How many in-sync replicas an acks=all write needs; kcsim has one.",
    "preallocate": "Whether segment files are allocated in full when created." + _KEPT,
    "remote.copy.lag.bytes": "With tiered storage, how far copying to remote storage may lag, "
                             "in bytes." + _KEPT,
    "remote.copy.lag.ms": "With tiered storage, how far copying to remote storage may lag, "
                          "in time." + _KEPT,
    "remote.log.copy.disable": "Stop copying the topic's segments to remote storage." + _KEPT,
    "remote.log.delete.on.disable": "Delete the remote copy when tiered storage is turned "
                                    "off." + _KEPT,
    "remote.storage.enable": "Whether the topic uses tiered storage." + _KEPT,
    "retention.bytes": "The size a partition's log may reach before its oldest records are "
                       "deleted; -1 for no limit.",
    "retention.ms": "How long records are kept before they are deleted; -1 for ever.",
    "segment.bytes": "The size at which the log starts a new segment.",
    "segment.index.bytes": "The size of a segment's offset index." + _KEPT,
    "segment.jitter.ms": "A random delay taken off segment.ms so segments do not all roll at "
                         "once.",
    "segment.ms": "The age at which the log starts a new segment even if it is not full.",
    "unclean.leader.election.enable": "Whether a replica that is not in sync may become "
                                      "leader." + _KEPT,
}

BROKER_DOCS: dict[str, str] = {
    "auto.create.topics.enable": "Whether a topic that is asked for but missing is created "
                                 "with the broker's defaults.",
    "broker.id": "This broker's id; the same as node.id.",
    "default.replication.factor": "The replication factor of automatically created topics; "
                                  "kcsim has one replica.",
    "group.consumer.assignment.interval.ms": "The least time between two target assignments "
                                             "of a consumer group (KIP-848), unless its group "
                                             "says otherwise.",
    "group.consumer.heartbeat.interval.ms": "How often a consumer group (KIP-848) member "
                                            "heartbeats, unless its group says otherwise.",
    "group.consumer.max.assignment.interval.ms": "The longest assignment interval a consumer "
                                                 "group may set.",
    "group.consumer.max.heartbeat.interval.ms": "The longest heartbeat interval a consumer "
                                                "group may set.",
    "group.consumer.max.session.timeout.ms": "The longest session time-out a consumer group "
                                             "may set.",
    "group.consumer.min.assignment.interval.ms": "The shortest assignment interval a consumer "
                                                 "group may set.",
    "group.consumer.min.heartbeat.interval.ms": "The shortest heartbeat interval a consumer "
                                                "group may set.",
    "group.consumer.min.session.timeout.ms": "The shortest session time-out a consumer group "
                                             "may set.",
    "group.consumer.session.timeout.ms": "How long a consumer group (KIP-848) member may go "
                                         "without a heartbeat, unless its group says otherwise.",
    "group.initial.rebalance.delay.ms": "How long a new classic group waits for more members "
                                        "before its first rebalance.",
    "group.max.session.timeout.ms": "The longest session time-out a classic group member may "
                                    "ask for.",
    "group.min.session.timeout.ms": "The shortest session time-out a classic group member may "
                                    "ask for.",
    "node.id": "This node's id in the cluster.",
    "log.retention.hours": "The broker's retention in hours, where log.retention.ms is not "
                           "set.",
    "num.partitions": "How many partitions an automatically created topic gets.",
    "offsets.retention.minutes": "How long a group's committed offsets outlive the group's "
                                 "last member.",
    "offsets.topic.num.partitions": "How many partitions __consumer_offsets has.",
    "offsets.topic.replication.factor": "The replication factor of __consumer_offsets; kcsim "
                                        "has one replica.",
    "transaction.max.timeout.ms": "The longest transaction time-out a producer may ask for.",
}

GROUP_DOCS: dict[str, str] = {
    "consumer.session.timeout.ms": "How long a member of this consumer group may go without a "
                                   "heartbeat before it is removed.",
    "consumer.heartbeat.interval.ms": "How often members of this consumer group heartbeat.",
    "consumer.assignment.interval.ms": "The least time between two target assignments of "
                                       "this consumer group.",
    "streams.session.timeout.ms": "How long a member of this streams group may go without a "
                                  "heartbeat before it is removed.",
    "streams.heartbeat.interval.ms": "How often members of this streams group heartbeat.",
    "streams.num.standby.replicas": "Standby tasks per stateful task of this streams group, "
                                    "each on another process; a change applies at once.",
    "streams.initial.rebalance.delay.ms": "How long this streams group, while new, waits for "
                                          "more members before its first assignment.",
    "streams.assignment.interval.ms": "The least time between two target assignments of "
                                      "this streams group.",
    "share.session.timeout.ms": "How long a member of this share group may go without a "
                                "heartbeat before it is removed.",
    "share.heartbeat.interval.ms": "How often members of this share group heartbeat.",
    "share.record.lock.duration.ms": "How long a member of this share group holds the records "
                                     "it fetched before they go back (on the broker's clock).",
    "share.delivery.count.limit": "Deliveries of a record before it is archived.",
    "share.auto.offset.reset": "Where a partition of this share group starts: latest or "
                               "earliest.",
    "share.isolation.level": "Whether this share group reads only committed records.",
}

# The topic config a broker config is the default of (log.retention.ms: retention.ms).
_DEFAULT_OF: dict[str, str] = {t.synonym: name for name, t in TOPIC_CONFIGS.items()
                               if t.synonym is not None}


def topic_doc(name: str) -> str | None:
    return TOPIC_DOCS.get(name)


def broker_doc(name: str) -> str | None:
    if name in BROKER_DOCS:
        return BROKER_DOCS[name]
    topic = _DEFAULT_OF.get(name)
    if topic is None:
        return None
    return f"The default of {topic} for topics without their own: {TOPIC_DOCS[topic]}"


def group_doc(name: str) -> str | None:
    return GROUP_DOCS.get(name)
