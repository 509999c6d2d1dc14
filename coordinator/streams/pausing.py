"""Which tasks a group's paused partitions stop (KIP-1249 for streams groups).

A streams group reads the source topics of its subtopologies, repartition topics
included (each task consumes its partition of every one of them). Pausing partition p of
such a topic stops task (subtopology, p) of every subtopology that reads the topic: the
task is in no member's target until the partition is resumed. Changelog topics are not
read by the group (only restored from), and an external topic the topology does not
name means nothing to it: pausing either is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from kcsim.coordinator.records import StreamsGroupTopologyValue

    from .model import Task

NOT_READ_MESSAGE = "The topic is not a source topic of the streams group's topology."


def _readers(topology: StreamsGroupTopologyValue, topic: str) -> Iterator[str]:
    """The subtopologies that read `topic`."""
    for sub in topology.subtopologies:
        if topic in sub.source_topics or any(
                t.name == topic for t in sub.repartition_source_topics):
            yield sub.subtopology_id


def reads(topology: StreamsGroupTopologyValue | None, topic: str) -> bool:
    return topology is not None and next(_readers(topology, topic), None) is not None


def paused_tasks(topology: StreamsGroupTopologyValue | None, task_counts: Mapping[str, int],
                 paused: Mapping[str, frozenset[int]]) -> frozenset[Task]:
    """The tasks stopped by the paused partitions (`paused`: partitions by topic name)."""
    if topology is None or not paused:
        return frozenset()
    stopped: set[Task] = set()
    for topic, partitions in paused.items():
        for sub in _readers(topology, topic):
            count = task_counts.get(sub, 0)
            stopped.update((sub, p) for p in partitions if p < count)
    return frozenset(stopped)
