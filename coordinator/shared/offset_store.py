"""Committed offsets indexed by group, topic and partition (Kafka's Offsets).

Nested dicts so that one partition, one topic or one whole group is found
without scanning: fetch-by-partition, fetch-all and delete-group each touch
only what they return.
"""

from __future__ import annotations

from kcsim.coordinator.records import OffsetCommitValue

TopicOffsets = dict[int, OffsetCommitValue]
GroupOffsets = dict[str, TopicOffsets]


class OffsetStore:
    __slots__ = ("by_group",)

    def __init__(self) -> None:
        self.by_group: dict[str, GroupOffsets] = {}

    def get(self, group: str, topic: str, partition: int) -> OffsetCommitValue | None:
        topics = self.by_group.get(group)
        if topics is None:
            return None
        partitions = topics.get(topic)
        if partitions is None:
            return None
        return partitions.get(partition)

    def put(self, group: str, topic: str, partition: int, value: OffsetCommitValue) -> None:
        topics = self.by_group.get(group)
        if topics is None:
            topics = self.by_group[group] = {}
        partitions = topics.get(topic)
        if partitions is None:
            partitions = topics[topic] = {}
        partitions[partition] = value

    def partitions_of(self, group: str, topic: str) -> dict[int, OffsetCommitValue]:
        """The (created if missing) partition -> value map of one group's topic."""
        topics = self.by_group.get(group)
        if topics is None:
            topics = self.by_group[group] = {}
        partitions = topics.get(topic)
        if partitions is None:
            partitions = topics[topic] = {}
        return partitions

    def remove(self, group: str, topic: str, partition: int) -> OffsetCommitValue | None:
        topics = self.by_group.get(group)
        if topics is None:
            return None
        partitions = topics.get(topic)
        if partitions is None:
            return None
        removed = partitions.pop(partition, None)
        if not partitions:
            del topics[topic]
        if not topics:
            del self.by_group[group]
        return removed

    def group(self, group: str) -> GroupOffsets | None:
        return self.by_group.get(group)

    def flat(self, group: str) -> dict[tuple[str, int], OffsetCommitValue]:
        topics = self.by_group.get(group) or {}
        return {(t, p): v for t, parts in topics.items() for p, v in parts.items()}
