"""What the metrics read of the groups, at scrape: counts by type and state, members,
committed offsets and lag, paused partitions; and rebalances, counted from the events.

Names follow the JMX exporter's default rules for Kafka's beans (names.py), and
kafka_exporter's for lag and members, which Kafka has no metric for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import names
from .families import escape, labels

if TYPE_CHECKING:
    from kcsim.coordinator import GroupCoordinator

    from ..state.topics import TopicRegistry
    from .counts import EventCounts
    from .families import Families

# The states Kafka reports each kind of group in (every one, zero or not), as it names them.
STATES = {
    "classic": ("CompletingRebalance", "Dead", "Empty", "PreparingRebalance", "Stable"),
    "consumer": ("Assigning", "Dead", "Empty", "Reconciling", "Stable"),
    "streams": ("Assigning", "Dead", "Empty", "NotReady", "Reconciling", "Stable"),
    "share": ("Dead", "Empty", "Stable"),
}
# GroupMetadataManager's gauges of classic groups by state (NumGroups counts every group).
_LEGACY_STATES = ("Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead")
# The event that counts as a rebalance of each kind of group, and the metric it counts in.
REBALANCES = (
    (("generation-bumped", "classic"), names.COMPLETED_REBALANCE),
    (("epoch-bumped", "consumer"), names.CONSUMER_REBALANCE),
    (("epoch-bumped", "streams"), names.STREAMS_REBALANCE),
    (("epoch-bumped", "share"), names.SHARE_REBALANCE),
)


def _each_group(groups: GroupCoordinator) -> list[tuple[str, str, str, int]]:
    """(group, type, state, members) of every group the coordinator holds (a KIP-848 or
    streams group before a classic one of the same id, as `group_state` reads them)."""
    classic, consumer, streams = groups.groups_by_type()
    found = [(g, "consumer", c.state.value, len(c.members)) for g, c in consumer.items()]
    found += [(g, "streams", s.state.value, len(s.members)) for g, s in streams.items()
              if g not in consumer]
    found += [(g, "classic", c.state.value, len(c.members)) for g, c in classic.items()
              if g not in consumer and g not in streams]
    return found


def group_families(out: Families, groups: GroupCoordinator, topics: TopicRegistry) -> None:
    """Group counts, members, offsets, lag and paused partitions, as the state holds them."""
    each = _each_group(groups)
    by_state: dict[tuple[str, str], int] = {}
    for _, kind, state, _ in each:
        by_state[kind, state] = by_state.get((kind, state), 0) + 1
    protocols = dict.fromkeys(STATES, 0)
    for (kind, _), n in by_state.items():
        protocols[kind] = protocols.get(kind, 0) + n
    out.untyped(names.GROUP_COUNT,
                [(labels(protocol=kind), n) for kind, n in protocols.items()])
    for kind, states in STATES.items():
        out.untyped(names.GROUP_COUNT_BY_STATE[kind],
                    [(labels(state=state), by_state.get((kind, state), 0)) for state in states])
    legacy = [(labels(name="NumGroups"), len(each))]
    legacy += [(labels(name=f"NumGroups{state}"), by_state.get(("classic", state), 0))
               for state in _LEGACY_STATES]
    escaped = [escape(g) for g, _, _, _ in each]
    out.gauge(names.MEMBERS, [(f'{{consumergroup="{g}"}}', members)
                              for g, (_, _, _, members) in zip(escaped, each)],
              "members of each group (kafka_exporter's)")
    offsets = _offset_families(out, groups, topics)
    legacy.append((labels(name="NumOffsets"), offsets))
    out.untyped(names.GROUP_METADATA_MANAGER, legacy)
    out.untyped(names.OFFSET_COUNT, [("", offsets)])
    # Only groups with partitions paused have a series (10,000 zeros would be a fifth of
    # a large scrape): a group's goes when its last partition is resumed.
    paused = {group: sum(map(len, groups.paused_partitions(group).values()))
              for group in groups.paused_groups()}
    out.gauge(names.PAUSED, [(f'{{group="{g}",type="{kind}"}}', paused[group])
                             for g, (group, kind, _, _) in zip(escaped, each)
                             if paused.get(group)],
              "partitions paused in each group (KIP-1249), for the groups with some")


def _offset_families(out: Families, groups: GroupCoordinator, topics: TopicRegistry) -> int:
    """Committed offsets and lag per group and partition (log end minus committed), as
    kafka_exporter shows them; the number of committed offsets."""
    # (topic, partition) -> (its log end, its labels after the group's); None: gone
    partitions: dict[tuple[str, int], tuple[int, str] | None] = {}
    current: list[tuple[str, float]] = []
    lag: list[tuple[str, float]] = []
    lag_sum: list[tuple[str, float]] = []
    count = 0
    for group, by_topic in groups.all_committed_offsets().items():
        g = escape(group)
        for topic, by_partition in by_topic.items():
            total = seen = 0
            count += len(by_partition)
            for partition, value in by_partition.items():
                key = (topic, partition)
                found = (partitions[key] if key in partitions
                         else partitions.setdefault(key, _partition(topics, topic, partition)))
                if found is None:  # the topic or partition is gone
                    continue
                end, rest = found
                row = f'{{consumergroup="{g}",{rest}'
                current.append((row, value.offset))
                lag.append((row, end - value.offset))
                total += end - value.offset
                seen += 1
            if seen:
                lag_sum.append((f'{{consumergroup="{g}",topic="{escape(topic)}"}}', total))
    out.gauge(names.CONSUMER_OFFSET, current, "each group's committed offset per partition")
    out.gauge(names.LAG, lag, "log end offset minus the group's committed offset")
    out.gauge(names.LAG_SUM, lag_sum, "each group's lag summed over a topic's partitions")
    return count


def _partition(topics: TopicRegistry, topic: str, partition: int) -> tuple[int, str] | None:
    """The partition's log end and the labels that name it; None if it is gone."""
    found = topics.get(topic)
    if found is None or not 0 <= partition < len(found.partitions):
        return None
    return (int(found.partitions[partition].high_watermark),
            f'partition="{partition}",topic="{escape(topic)}"}}')


def partition_families(out: Families, topics: TopicRegistry) -> None:
    """Each partition's log end and start offsets (kafka_exporter's current and oldest),
    internal topics (`__consumer_offsets`...) left out."""
    current, oldest = [], []
    for name, topic in topics.by_name.items():
        if name.startswith("__"):
            continue
        for partition in topic.partitions:
            row = labels(partition=str(partition.index), topic=name)
            current.append((row, partition.high_watermark))
            oldest.append((row, partition.log_start_offset))
    out.gauge(names.PARTITION_END, current, "each partition's log end offset")
    out.gauge(names.PARTITION_START, oldest, "each partition's log start offset")


def rebalance_families(out: Families, events: EventCounts, rate: Any) -> None:
    """Rebalances by kind of group (count and rate, from the events), and every event."""
    counts = events.by_kind
    for key, (count_name, rate_name) in REBALANCES:
        n = counts.get(key, 0)
        out.untyped(count_name, [("", n)])
        out.untyped(rate_name, [("", rate(rate_name, n))])
    out.counter(names.EVENTS, [(labels(kind=kind, type=kind_type), n)
                               for (kind, kind_type), n in sorted(counts.items())],
                "group events by kind and type of group")
