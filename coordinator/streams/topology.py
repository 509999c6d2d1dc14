"""A streams application's topology: read from a joining member's heartbeat, checked, and
kept as the group's topology record.

The record value is the topology itself (`StreamsGroupTopologyValue`): subtopologies
sorted by id, each with its source topics, repartition topics it writes and reads,
changelog topics and copartition groups (indexes into its own topic lists). Two
topologies are the same when their records are equal, as Kafka compares them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.coordinator.records import (
    StreamsCopartitionGroup,
    StreamsGroupTopologyValue,
    StreamsSubtopology,
    StreamsTopicInfo,
)

from .rules import TopologyCase

if TYPE_CHECKING:
    from kcsim.protocol.messages.streams_group import StreamsGroupHeartbeatRequest

    RequestTopology = StreamsGroupHeartbeatRequest.Topology
    RequestTopicInfo = StreamsGroupHeartbeatRequest.TopicInfo


class InvalidTopology(Exception):
    """STREAMS_INVALID_TOPOLOGY, with Kafka's message."""


def _topic_info(info: RequestTopicInfo) -> StreamsTopicInfo:
    return StreamsTopicInfo(info.name, info.partitions, info.replication_factor,
                            [(c.key, c.value) for c in info.topic_configs])


def from_request(topology: RequestTopology) -> StreamsGroupTopologyValue:
    """The request's topology as the group keeps it (checked by `problem` first)."""
    subtopologies = [
        StreamsSubtopology(
            subtopology_id=s.subtopology_id,
            source_topics=list(s.source_topics),
            source_topic_regex=list(s.source_topic_regex),
            state_changelog_topics=[_topic_info(t) for t in s.state_changelog_topics],
            repartition_sink_topics=list(s.repartition_sink_topics),
            repartition_source_topics=[_topic_info(t) for t in s.repartition_source_topics],
            copartition_groups=[
                StreamsCopartitionGroup(list(g.source_topics), list(g.source_topic_regex),
                                        list(g.repartition_source_topics))
                for g in s.copartition_groups],
        )
        for s in topology.subtopologies
    ]
    subtopologies.sort(key=lambda s: s.subtopology_id)
    return StreamsGroupTopologyValue(topology.epoch, subtopologies)


def regex_problem(topology: RequestTopology) -> str | None:
    """Kafka 4.x refuses source topic regexes (INVALID_REQUEST) before anything else."""
    for s in topology.subtopologies:
        if s.source_topic_regex:
            return "Regular expressions for source topics are not supported yet."
    return None


def problem(topology: StreamsGroupTopologyValue) -> str | None:
    """Why the topology is invalid (STREAMS_INVALID_TOPOLOGY), or None."""
    seen: set[str] = set()
    for s in topology.subtopologies:
        if s.subtopology_id in seen:
            return f"Duplicate subtopology {s.subtopology_id}."
        seen.add(s.subtopology_id)
        for info in s.state_changelog_topics:
            if info.partitions != 0:
                return (f"Changelog topic {info.name} must have an undefined partition count, "
                        f"but it is set to {info.partitions}.")
        if not s.source_topics and not s.repartition_source_topics:
            return f"No source topics found for subtopology {s.subtopology_id}"
        for info in s.repartition_source_topics:
            if info.partitions < 0:
                return f"Repartition topic {info.name} has a negative partition count."
        for group in s.copartition_groups:
            if (_out_of(group.source_topics, len(s.source_topics))
                    or _out_of(group.source_topic_regex, len(s.source_topic_regex))
                    or _out_of(group.repartition_source_topics,
                               len(s.repartition_source_topics))):
                return (f"Copartition group of subtopology {s.subtopology_id} names a topic "
                        "the subtopology does not read.")
    return None


def _out_of(indexes: list[int], size: int) -> bool:
    return any(i < 0 or i >= size for i in indexes)


def compare(group: StreamsGroupTopologyValue | None,
            sent: StreamsGroupTopologyValue) -> TopologyCase:
    if group is None:
        return TopologyCase.FIRST
    if sent.epoch < group.epoch:
        return TopologyCase.OLDER
    return TopologyCase.SAME if sent == group else TopologyCase.OTHER


def copartition_groups(sub: StreamsSubtopology) -> list[set[str]]:
    """Each copartition group of a subtopology as the names of its topics."""
    return [
        {sub.source_topics[i] for i in g.source_topics}
        | {sub.repartition_source_topics[i].name for i in g.repartition_source_topics}
        for g in sub.copartition_groups
    ]
