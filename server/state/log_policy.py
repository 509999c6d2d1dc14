"""What retention and the log cleaner do to one partition, by Kafka's rules (pure).

Retention (cleanup.policy delete) deletes whole segments from the oldest, as
Kafka's `UnifiedLog.deleteOldSegments` does: first those whose largest timestamp
is more than `retention.ms` old, then, while the log is more than `retention.bytes`
without the next one, that one. A segment is judged by its largest timestamp, the
broker's clock by `now_ms`. The active segment goes too once it qualifies (Kafka
rolls a new one first), so a partition whose every record expired is empty, its
log start offset at its end.

The cleaner (cleanup.policy compact) works on the closed segments below the
first unstable offset (an open transaction's first batch) and below the first
segment that holds a record younger than `min.compaction.lag.ms`; it cleans a
partition once the part written since its last cleaning is more than
`min.cleanable.dirty.ratio` of that (a test's forced run cleans whatever there
is). What it keeps is `kcsim.storage.clean_segments` over `log_cleaner`.

Kafka rolls a segment older than `segment.ms` at the next append; kcsim rolls it
at the next check instead, so that appends cost nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from .config_defs import ConfigSource
from .topic_configs import TOPIC_CONFIGS

if TYPE_CHECKING:
    from .broker_configs import BrokerConfigs
    from .topics import Partition, Topic

Segments = list[tuple[int, int, int]]  # (base offset, end offset, bytes), the active one last


class TopicPolicy(NamedTuple):
    """A topic's configs that retention and the cleaner read, as they stand now."""

    delete: bool
    compact: bool
    retention_ms: int
    retention_bytes: int
    delete_retention_ms: int
    min_cleanable_dirty_ratio: float
    min_compaction_lag_ms: int
    segment_bytes: int | None  # None: the store's own (kcsim's segments are 64 MiB)
    segment_ms: int


def topic_setting(topic: Topic, name: str, broker: BrokerConfigs, node_id: int) -> str:
    """A topic's config: its own, else the broker's dynamic value of its synonym (this
    node's, then the cluster's), else Kafka's default, as DescribeConfigs shows it."""
    own = topic.configs.get(name)
    if own is not None:
        return own
    spec = TOPIC_CONFIGS[name]
    if spec.synonym is not None:
        for _name, value, _source in broker.chain(spec.synonym, node_id):
            if value is not None:
                return value
    return spec.config.default or ""


def topic_policy(topic: Topic, broker: BrokerConfigs, node_id: int) -> TopicPolicy:
    def get(name: str) -> str:
        return topic_setting(topic, name, broker, node_id)

    policies = {p.strip() for p in get("cleanup.policy").split(",")}
    return TopicPolicy(
        delete="delete" in policies, compact="compact" in policies,
        retention_ms=int(get("retention.ms")), retention_bytes=int(get("retention.bytes")),
        delete_retention_ms=int(get("delete.retention.ms")),
        min_cleanable_dirty_ratio=float(get("min.cleanable.dirty.ratio")),
        min_compaction_lag_ms=int(get("min.compaction.lag.ms")),
        segment_bytes=_segment_bytes(topic, broker, node_id), segment_ms=int(get("segment.ms")))


def _segment_bytes(topic: Topic, broker: BrokerConfigs, node_id: int) -> int | None:
    """segment.bytes where the topic or the broker sets it."""
    if "segment.bytes" in topic.configs:
        return int(topic.configs["segment.bytes"])
    for _name, value, source in broker.chain("log.segment.bytes", node_id):
        if value is not None and source != ConfigSource.DEFAULT_CONFIG:
            return int(value)
    return None


def retention_start(partition: Partition, segments: Segments, now_ms: int,
                    policy: TopicPolicy) -> int | None:
    """The log start offset retention moves the partition to; None: it stays."""
    if not policy.delete:
        return None
    count = 0
    last = len(segments) - 1
    if policy.retention_ms >= 0:
        while count <= last and _holds_data(segments, count) and now_ms - \
                partition.largest_timestamp(*segments[count][:2]) > policy.retention_ms:
            count += 1
    if policy.retention_bytes >= 0:
        excess = sum(size for _b, _e, size in segments[count:]) - policy.retention_bytes
        while count <= last and _holds_data(segments, count) and excess - segments[count][2] >= 0:
            excess -= segments[count][2]
            count += 1
    if count == 0:
        return None
    start = segments[count][0] if count <= last else segments[last][1]
    return start if start > partition.log_start_offset else None


def _holds_data(segments: Segments, index: int) -> bool:
    """Kafka never deletes the active segment while it is empty."""
    base, end, _size = segments[index]
    return index < len(segments) - 1 or end > base


def roll_due(partition: Partition, segments: Segments, now_ms: int, policy: TopicPolicy) -> bool:
    """Whether the active segment is older than segment.ms (by its first batch's
    timestamp, as Kafka's `LogSegment.shouldRoll`)."""
    base, end, _size = segments[-1]
    if end == base:
        return False
    first = partition.largest_timestamp(base, base + 1)
    return first >= 0 and now_ms - first > policy.segment_ms


def cleanable_segments(partition: Partition, segments: Segments, now_ms: int,
                       policy: TopicPolicy) -> Segments:
    """The closed segments the cleaner may clean now, oldest first."""
    stable = partition.last_stable_offset
    out: Segments = []
    for base, end, size in segments[:-1]:
        if end > stable:
            break
        if policy.min_compaction_lag_ms > 0 and \
                now_ms - partition.largest_timestamp(base, end) < policy.min_compaction_lag_ms:
            break
        out.append((base, end, size))
    return out


def cleaning_due(cleanable: Segments, cleaned_to: int, policy: TopicPolicy) -> bool:
    """Kafka's dirty ratio: the bytes written since the last cleaning over all the cleanable
    bytes, above min.cleanable.dirty.ratio."""
    total = sum(size for _b, _e, size in cleanable)
    dirty = sum(size for base, _e, size in cleanable if base >= cleaned_to)
    return total > 0 and dirty > 0 and dirty / total > policy.min_cleanable_dirty_ratio
