"""Kafka's simple share assignor (SimpleAssignor): several members may share a partition.

Each member is first hashed onto one partition of what it subscribes to (Java's
String.hashCode of its id, modulo the partition count), so that a partition can get
more than one member; partitions that got no member this way and had none before go
round-robin over the members; then every member keeps what it had, of the topics it
still subscribes to. Members are taken in the order Kafka's HashMap of them lists them;
topics by id, partitions ascending.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from ..shared.java import hash_map_order, java_string_hash

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["Assignment", "TopicPartition", "simple_assign"]

TopicPartition = tuple[uuid.UUID, int]
Assignment = dict[uuid.UUID, frozenset[int]]


def simple_assign(
    subscriptions: Mapping[str, frozenset[uuid.UUID]],
    partition_counts: Mapping[uuid.UUID, int],
    current: Mapping[str, Assignment],
) -> dict[str, Assignment]:
    """Every member's new target, from what each subscribes to (topic ids), the
    partition count of each topic, and what each member is assigned now."""
    members = hash_map_order(subscriptions)
    if not members:
        return {}
    owners: dict[TopicPartition, list[str]] = {}
    for member in members:
        for topic, partitions in current.get(member, {}).items():
            for p in partitions:
                owners.setdefault((topic, p), []).append(member)
    fresh: dict[TopicPartition, list[str]] = {}
    first = subscriptions[members[0]]
    if all(subscriptions[m] == first for m in members):
        targets = _partitions(first, partition_counts)
        _hash(targets, members, fresh)
        _round_robin(members, [tp for tp in targets if tp not in fresh and tp not in owners], fresh)
        keep = dict.fromkeys(members, first)
    else:
        by_topic: dict[uuid.UUID, list[str]] = {}
        all_targets: dict[TopicPartition, None] = {}
        for member in members:
            targets = _partitions(subscriptions[member], partition_counts)
            if not targets:
                continue
            _hash(targets, [member], fresh)
            for tp in targets:
                all_targets[tp] = None
                subscribers = by_topic.setdefault(tp[0], [])
                if member not in subscribers:
                    subscribers.append(member)
        left: dict[uuid.UUID, list[TopicPartition]] = {}
        for tp in all_targets:
            if tp not in fresh and tp not in owners:
                left.setdefault(tp[0], []).append(tp)
        for topic, tps in left.items():
            _round_robin(by_topic[topic], tps, fresh)
        keep = dict(subscriptions)
    result: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in members}
    for (topic, p), holders in owners.items():
        for member in holders:
            if topic in keep[member] and p < partition_counts.get(topic, 0):
                result[member].setdefault(topic, set()).add(p)
    for (topic, p), holders in fresh.items():
        for member in holders:
            result[member].setdefault(topic, set()).add(p)
    return {m: {t: frozenset(ps) for t, ps in a.items()} for m, a in result.items()}


def _partitions(
    topics: frozenset[uuid.UUID], partition_counts: Mapping[uuid.UUID, int]
) -> list[TopicPartition]:
    return [
        (t, p)
        for t in sorted(topics, key=lambda t: t.bytes)
        for p in range(partition_counts.get(t, 0))
    ]


def _hash(
    targets: Sequence[TopicPartition], members: Sequence[str], into: dict[TopicPartition, list[str]]
) -> None:
    if targets:
        for member in members:
            # Java's Math.abs(hashCode % size): Java's remainder has the hash's sign.
            index = abs(java_string_hash(member)) % len(targets)
            into.setdefault(targets[index], []).append(member)


def _round_robin(
    members: Sequence[str], targets: Sequence[TopicPartition], into: dict[TopicPartition, list[str]]
) -> None:
    for i, tp in enumerate(targets):
        into.setdefault(tp, []).append(members[i % len(members)])
