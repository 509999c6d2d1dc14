"""Offsets committed inside open transactions (TxnOffsetCommit), per group and producer.

Kafka's OffsetMetadataManager keeps them apart from committed offsets until the
transaction's marker arrives: commit makes them committed offsets, abort drops them.
While any is pending for a partition, OffsetFetch with RequireStable answers
UNSTABLE_OFFSET_COMMIT for it and retention leaves its committed offset alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kcsim.coordinator.records import OffsetCommitValue

Partition = tuple[str, int]


class PendingOffsets:
    __slots__ = ("by_group", "groups_of")

    def __init__(self) -> None:
        # group -> producer id -> (topic, partition) -> offset
        self.by_group: dict[str, dict[int, dict[Partition, OffsetCommitValue]]] = {}
        self.groups_of: dict[int, set[str]] = {}  # producer id -> groups it has offsets pending in

    def put(self, group: str, producer_id: int, topic: str, partition: int,
            value: OffsetCommitValue) -> None:
        producers = self.by_group.setdefault(group, {})
        producers.setdefault(producer_id, {})[(topic, partition)] = value
        self.groups_of.setdefault(producer_id, set()).add(group)

    def remove(self, group: str, producer_id: int, topic: str, partition: int) -> None:
        producers = self.by_group.get(group)
        if producers is None:
            return
        offsets = producers.get(producer_id)
        if offsets is None:
            return
        offsets.pop((topic, partition), None)
        if not offsets:
            del producers[producer_id]
            groups = self.groups_of.get(producer_id)
            if groups is not None:
                groups.discard(group)
                if not groups:
                    del self.groups_of[producer_id]
        if not producers:
            del self.by_group[group]

    def of_producer(self, producer_id: int) -> list[tuple[str, Partition, OffsetCommitValue]]:
        """(group, partition, offset) of everything the producer has pending."""
        return [(group, tp, value)
                for group in sorted(self.groups_of.get(producer_id, ()))
                for tp, value in self.by_group[group][producer_id].items()]

    def is_pending(self, group: str, topic: str, partition: int) -> bool:
        producers = self.by_group.get(group)
        if not producers:
            return False
        return any((topic, partition) in offsets for offsets in producers.values())

    def has_group(self, group: str) -> bool:
        return group in self.by_group

    def of_group(self, group: str) -> dict[int, dict[Partition, OffsetCommitValue]]:
        """Pending offsets of one group by producer id (read-only use)."""
        return self.by_group.get(group, {})
