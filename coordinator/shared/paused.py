"""Each group's paused partitions (KIP-1249), folded from PausedTopicPartitions records.

Paused partitions are kept by topic id, as the KIP's record does, so a topic
deleted and created again under the same name is not paused by accident; the
name is kept beside the id for answers about topics that are gone. An index
from topic id to groups finds the groups a deleted topic concerns without a
scan.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kcsim.coordinator.records import (
    PausedTopic,
    PausedTopicPartitionsKey,
    PausedTopicPartitionsValue,
)
from kcsim.storage.records import Record

if TYPE_CHECKING:
    from .interface import TopicLookup

# topic id -> (topic name when paused, partitions)
PausedSet = dict[uuid.UUID, tuple[str, frozenset[int]]]


class PausedRegistry:
    __slots__ = ("by_group", "by_topic")

    def __init__(self) -> None:
        self.by_group: dict[str, PausedSet] = {}
        self.by_topic: dict[uuid.UUID, set[str]] = {}

    def get(self, group_id: str) -> PausedSet:
        return self.by_group.get(group_id) or {}

    def partitions(self, group_id: str, topic_id: uuid.UUID) -> frozenset[int]:
        entry = self.by_group.get(group_id, {}).get(topic_id)
        return frozenset() if entry is None else entry[1]

    def groups_of_topic(self, topic_id: uuid.UUID) -> set[str]:
        return set(self.by_topic.get(topic_id, ()))

    def apply(self, record: Record) -> None:
        group_id = record.key.group
        old = self.by_group.pop(group_id, None)
        for topic_id in old or ():
            groups = self.by_topic.get(topic_id)
            if groups is not None:
                groups.discard(group_id)
                if not groups:
                    del self.by_topic[topic_id]
        value = record.value
        if value is None:
            return
        paused: PausedSet = {}
        for topic in value.topics:
            if topic.partitions:
                topic_id = uuid.UUID(bytes=bytes(topic.topic_id))
                paused[topic_id] = (topic.topic_name, frozenset(topic.partitions))
        if paused:
            self.by_group[group_id] = paused
            for topic_id in paused:
                self.by_topic.setdefault(topic_id, set()).add(group_id)


def paused_record(group_id: str, paused: PausedSet) -> Record:
    """The group's whole paused set; a tombstone when nothing is paused any more."""
    key = PausedTopicPartitionsKey(group_id)
    topics = [
        PausedTopic(topic_id.bytes, name, sorted(partitions))
        for topic_id, (name, partitions) in sorted(paused.items(), key=lambda kv: kv[1][0])
        if partitions
    ]
    return Record(key, PausedTopicPartitionsValue(topics) if topics else None)


def paused_by_name(
    paused: PausedRegistry, topics: TopicLookup, group_id: str
) -> dict[str, frozenset[int]]:
    """The group's paused partitions by topic name, for the topics that still exist."""
    out = {}
    for topic_id, (_, partitions) in paused.get(group_id).items():
        name = topics.topic_name(topic_id)
        if name is not None:
            out[name] = partitions
    return out
