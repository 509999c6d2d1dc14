"""Every metric's name, and where it comes from.

Kafka's own metrics are named as the Prometheus JMX exporter (the
`io.prometheus.jmx:jmx_prometheus_javaagent` Java agent) names them under its default
rules (a config of `rules: [{pattern: ".*"}]`): `<domain>_<type>_<attribute>` with the
bean's other key properties as labels for Yammer beans (`kafka.network:type=
RequestMetrics,name=RequestsPerSec,request=X,version=V`, attribute Count:
`kafka_network_RequestMetrics_Count{name="RequestsPerSec",request="X",version="V"}`), and
`<domain>_<type>_<attribute>` with dashes as underscores for Kafka's own metrics
(`kafka.server:type=group-coordinator-metrics`, attribute `offset-commit-count`:
`kafka_server_group_coordinator_metrics_offset_commit_count`). Their type is `untyped`,
as the exporter shows them. tests/oracle/test_metrics_names.py checks each against a
Kafka 4.4 broker's scrape.

Consumer lag and members have no Kafka metric: they are named as kafka_exporter
(danielqsj/kafka_exporter) names them. kcsim's own carry the `kcsim_` prefix.
"""

from __future__ import annotations

# kafka.server:type=group-coordinator-metrics
_GCM = "kafka_server_group_coordinator_metrics_"
GROUP_COUNT = _GCM + "group_count"  # {protocol}
GROUP_COUNT_BY_STATE = {kind: f"{_GCM}{kind}_group_count"  # {state}
                        for kind in ("classic", "consumer", "streams", "share")}
OFFSET_COUNT = _GCM + "offset_count"
OFFSET_COMMIT_COUNT = _GCM + "offset_commit_count"
OFFSET_COMMIT_RATE = _GCM + "offset_commit_rate"
COMPLETED_REBALANCE = (_GCM + "group_completed_rebalance_count",
                       _GCM + "group_completed_rebalance_rate")
CONSUMER_REBALANCE = (_GCM + "consumer_group_rebalance_count",
                      _GCM + "consumer_group_rebalance_rate")
STREAMS_REBALANCE = (_GCM + "streams_group_rebalance_count",
                     _GCM + "streams_group_rebalance_rate")
SHARE_REBALANCE = (_GCM + "share_group_rebalance_count", _GCM + "share_group_rebalance_rate")
# kafka.coordinator.group:type=GroupMetadataManager,name=NumGroups* / NumOffsets (Value)
GROUP_METADATA_MANAGER = "kafka_coordinator_group_GroupMetadataManager_Value"
# kafka.network:type=RequestMetrics,name=RequestsPerSec|ErrorsPerSec|TotalTimeMs,request=...
REQUEST_METRICS_COUNT = "kafka_network_RequestMetrics_Count"
REQUEST_METRICS_MEAN = "kafka_network_RequestMetrics_Mean"
# kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec|BytesOutPerSec|MessagesInPerSec[,topic]
BROKER_TOPIC_METRICS_COUNT = "kafka_server_BrokerTopicMetrics_Count"

# Every name above that claims a Kafka bean: the oracle test looks each up in Kafka's scrape.
KAFKA_NAMES = (GROUP_COUNT, *GROUP_COUNT_BY_STATE.values(), OFFSET_COUNT, OFFSET_COMMIT_COUNT,
               OFFSET_COMMIT_RATE, *COMPLETED_REBALANCE, *CONSUMER_REBALANCE,
               *STREAMS_REBALANCE, *SHARE_REBALANCE, GROUP_METADATA_MANAGER,
               REQUEST_METRICS_COUNT, REQUEST_METRICS_MEAN, BROKER_TOPIC_METRICS_COUNT)

# kafka_exporter's
LAG = "kafka_consumergroup_lag"  # {consumergroup, topic, partition}
LAG_SUM = "kafka_consumergroup_lag_sum"  # {consumergroup, topic}
CONSUMER_OFFSET = "kafka_consumergroup_current_offset"  # {consumergroup, topic, partition}
MEMBERS = "kafka_consumergroup_members"  # {consumergroup}
PARTITION_END = "kafka_topic_partition_current_offset"  # {topic, partition}
PARTITION_START = "kafka_topic_partition_oldest_offset"  # {topic, partition}

# kcsim's own
PAUSED = "kcsim_group_paused_partitions"  # {group, type}
EVENTS = "kcsim_group_events"  # counter: kcsim_group_events_total{kind, type}
TRANSACTIONS = "kcsim_transactions"  # {state}: transactional ids by state
TRANSACTIONS_OPEN = "kcsim_transactions_open"  # begun and not yet completed
