"""Kafka's simple share assignor (SimpleAssignor, as of Kafka 4.4): several members may
share a partition.

It works from a desired sharing: each partition wants ceil(members / partitions) members,
and so each member wants an even share of partitions x sharing (where it does not divide,
the larger shares spread evenly over the members by index). Starting from the current assignment,
it takes back what a member no longer subscribes to, what a member holds over its share,
and members from partitions shared more than desired; then it walks the partitions and
hands each one still short of members to the members still short of partitions, round
and round, until a whole round places nothing. When every member subscribes to the same
topics (Kafka's SimpleHomogeneousAssignmentBuilder) this is done over all their
partitions at once; otherwise (SimpleHeterogeneousAssignmentBuilder) topic by topic,
among the members that subscribe to it, and a member keeps what it holds of a topic
nobody subscribes to any more.

Kafka's result depends on the order it walks things in, and it walks HashMaps and
HashSets, so this does too (:class:`~..shared.java.JavaHashMap`): members numbered in the
order the group's HashMap of them lists them, and a table per step sized as Kafka sizes
it. The function is pure: same inputs, same assignment.
"""

from __future__ import annotations

import math
import uuid
from typing import TYPE_CHECKING, Generic, TypeVar

from ..shared.java import (
    JavaHashMap,
    JavaHashSet,
    hash_map_order,
    java_int_hash,
    java_record_hash,
    java_uuid_hash,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = ["Assignment", "TopicPartition", "simple_assign"]

TopicPartition = tuple[uuid.UUID, int]
Assignment = dict[uuid.UUID, frozenset[int]]
# A member's assignment as Kafka holds it: a HashMap of topic id to a HashSet of partitions.
_Held = JavaHashMap[uuid.UUID, JavaHashSet[int]]
_Taken = dict[uuid.UUID, set[int]]  # a member's assignment once the assignor changed it
_Key = TypeVar("_Key")  # a partition: a TopicPartition over the group, an index in a topic


def simple_assign(
    subscriptions: Mapping[str, frozenset[uuid.UUID]],
    partition_counts: Mapping[uuid.UUID, int],
    current: Mapping[str, Assignment],
    *,
    homogeneous: bool | None = None,
    topic_order: Sequence[uuid.UUID] = (),
) -> dict[str, Assignment]:
    """Every member's new target, from what each subscribes to (topic ids of existing
    topics), the partition count of each topic, and what each member is assigned now.

    `homogeneous` is Kafka's subscription type, which it decides on topic names (a name
    with no topic counts); by default, whether the subscriptions are equal. `topic_order`
    is the order Kafka lists a member's subscribed topics in (its set of their names);
    topics not in it come after, by id.
    """
    members = hash_map_order(subscriptions)
    if not members:
        return {}
    if homogeneous is None:
        homogeneous = len({subscriptions[m] for m in members}) == 1
    held = [_held(current.get(m, {})) for m in members]
    rank = {t: i for i, t in enumerate(topic_order)}
    if homogeneous:
        topics = sorted(subscriptions[members[0]], key=lambda t: (rank.get(t, len(rank)), t.bytes))
        if not topics:
            return {m: {} for m in members}
        taken = _Homogeneous(topics, partition_counts, held).build()
    else:
        subscribed = {t for m in members for t in subscriptions[m]}
        if not subscribed:
            return {m: {} for m in members}
        taken = {}
        for topic in subscribed:
            subscribers = [i for i, m in enumerate(members) if topic in subscriptions[m]]
            _TopicShare(topic, partition_counts.get(topic, 0), subscribers, held, taken).build()
    return {m: _frozen(taken[i]) if i in taken else _frozen_held(held[i])
            for i, m in enumerate(members)}


def _tp_hash(tp: TopicPartition) -> int:
    """Kafka's TopicIdPartition is a record of (topicId, partitionId)."""
    return java_record_hash(java_uuid_hash(tp[0]), tp[1])


def _sized(count: int) -> int:
    """The initial capacity Kafka's assignors give a map for `count` entries."""
    return int((count + 1) / 0.75 + 1)


def _held(assignment: Assignment) -> _Held:
    """A member's current assignment as Kafka reads it back from its target record."""
    held: _Held = JavaHashMap(java_uuid_hash)
    for topic, partitions in sorted(assignment.items(), key=lambda kv: kv[0].bytes):
        held.put(topic, JavaHashSet.of(java_int_hash, sorted(partitions)))
    return held


def _copy(held: _Held) -> _Taken:
    return {topic: set(partitions) for topic, partitions in held.items()}


def _frozen(taken: _Taken) -> Assignment:
    return {t: frozenset(ps) for t, ps in taken.items()}


def _frozen_held(held: _Held) -> Assignment:
    return {t: frozenset(ps) for t, ps in held.items()}


def _desired_counts(sharing: int, partitions: int, members: int) -> list[int]:
    """Each member's even share of partitions x sharing, in Java's doubles: where it
    does not divide, the larger shares fall evenly spread over the members by index."""
    precise = sharing * partitions / members
    return [math.ceil(precise * (i + 1)) - math.ceil(precise * i) for i in range(members)]


def _new_members() -> JavaHashSet[int]:
    return JavaHashSet(java_int_hash)


def _fill(
    by_partition: JavaHashMap[_Key, JavaHashSet[int]],
    unfilled: JavaHashSet[int],
    sharing: int,
    give: Callable[[int, _Key], int],
) -> None:
    """Kafka's assignRemainingPartitions: walk the partitions once, handing each one short
    of `sharing` members to the unfilled members in turn (`give` returns how many the
    member then holds against its desired count, 0 when it is full); the members' walk
    starts over while the last pass placed something. As in Kafka, a partition's
    members are not updated as it is handed out."""
    queue, at = unfilled.keys(), 0
    placed = False
    for key, assigned in by_partition.items():
        wanted = sharing - len(assigned)
        while wanted > 0:
            if at == len(queue):
                if not placed or not unfilled:
                    break  # (Kafka would fail on an empty walk; nobody is left to take it)
                queue, at, placed = unfilled.keys(), 0, False
            member = queue[at]
            at += 1
            if member not in assigned:
                wanted -= 1
                placed = True
                if give(member, key) <= 0:
                    unfilled.remove(member)
        if not unfilled:
            break


class _Builder(Generic[_Key]):
    """What both of Kafka's builders share: the members' assignments as they change (a
    copy of what a member holds, made when first changed), the members of each partition
    and the partitions of each member as counted so far, and taking a member off a
    partition shared more than desired."""

    held: list[_Held]
    taken: dict[int, _Taken]
    sharing: int
    by_partition: JavaHashMap[_Key, JavaHashSet[int]]
    by_member: JavaHashMap[int, JavaHashSet[_Key]]

    def _where(self, key: _Key) -> TopicPartition:
        raise NotImplementedError

    def _revoked(self, member: int) -> None:
        """A member lost a partition to over-sharing."""

    def _taken(self, member: int) -> _Taken:
        if member not in self.taken:
            self.taken[member] = _copy(self.held[member])
        return self.taken[member]

    def _revoke_overshared(self) -> None:
        for key, assigned in self.by_partition.items():
            count = len(assigned)
            if count <= self.sharing:
                continue
            topic, p = self._where(key)
            for member in assigned:
                partitions = self._taken(member).get(topic)
                if partitions is not None and p in partitions:
                    partitions.remove(p)
                    count -= 1
                    assigned.remove(member)
                    mine = self.by_member.get(member)
                    assert mine is not None
                    mine.remove(key)
                    self._revoked(member)
                if count <= self.sharing:
                    break


class _Homogeneous(_Builder[TopicPartition]):
    """SimpleHomogeneousAssignmentBuilder: all members over all the partitions at once."""

    def __init__(self, topics: Sequence[uuid.UUID], counts: Mapping[uuid.UUID, int],
                 held: list[_Held]) -> None:
        self.topics = frozenset(topics)
        self.held = held
        self.targets = [(t, p) for t in topics for p in range(counts.get(t, 0))]
        n, total = len(held), len(self.targets)
        self.sharing = (n + total - 1) // total if total else 0
        self.desired = _desired_counts(self.sharing, total, n)
        self.taken = {}
        self.by_partition = JavaHashMap(_tp_hash, _sized(total))
        self.by_member = JavaHashMap(java_int_hash, _sized(n))
        self.unfilled: JavaHashSet[int] = JavaHashSet(java_int_hash, _sized(n))
        self.overfilled: JavaHashSet[int] = JavaHashSet(java_int_hash, _sized(n))

    def build(self) -> dict[int, _Taken]:
        self._revoke_unsubscribed()
        self._revoke_overfilled()
        self._revoke_overshared()
        for tp in self.targets:
            self.by_partition.compute_if_absent(tp, _new_members)
        if self.unfilled:
            _fill(self.by_partition, self.unfilled, self.sharing, self._give)
        return self.taken

    def _where(self, key: TopicPartition) -> TopicPartition:
        return key

    def _revoked(self, member: int) -> None:
        self.unfilled.add(member)

    def _revoke_unsubscribed(self) -> None:
        """Count what each member holds of the subscribed topics, drop the rest, and sort
        the members into over and under their share."""
        for member, held in enumerate(self.held):
            count, desired = 0, self.desired[member]
            for topic, partitions in held.items():
                if topic not in self.topics:
                    self._taken(member).pop(topic, None)
                    continue
                for p in partitions:
                    count += 1
                    self.by_partition.compute_if_absent((topic, p), _new_members).add(member)
                    self.by_member.compute_if_absent(
                        member, lambda: JavaHashSet(_tp_hash)).add((topic, p))
                    if count >= desired:
                        self._taken(member)
            if count < desired:
                self.unfilled.add(member)
            elif count > desired:
                self.overfilled.add(member)

    def _revoke_overfilled(self) -> None:
        for member in self.overfilled:
            desired = self.desired[member]
            mine = self.by_member.get(member)
            assert mine is not None
            if len(mine) <= desired:
                continue
            for topic, p in mine:
                self.taken[member][topic].discard(p)
                members = self.by_partition.get((topic, p))
                assert members is not None
                members.remove(member)
                mine.remove((topic, p))
                if len(mine) == desired:
                    break

    def _give(self, member: int, tp: TopicPartition) -> int:
        self._taken(member).setdefault(tp[0], set()).add(tp[1])
        mine = self.by_member.compute_if_absent(member, lambda: JavaHashSet(_tp_hash))
        mine.add(tp)
        return self.desired[member] - len(mine)


class _TopicShare(_Builder[int]):
    """SimpleHeterogeneousAssignmentBuilder's TopicAssignmentPartialBuilder: one topic's
    partitions among the members that subscribe to it. Members are numbered over the
    whole group; one that does not subscribe desires none of the topic."""

    def __init__(self, topic: uuid.UUID, count: int, subscribers: list[int],
                 held: list[_Held], taken: dict[int, _Taken]) -> None:
        self.topic, self.count, self.subscribers = topic, count, subscribers
        self.held, self.taken = held, taken
        self.sharing = (len(subscribers) + count - 1) // count if count else 0
        self.desired = [0] * len(held)
        shares = _desired_counts(self.sharing, count, len(subscribers))
        for member, share in zip(subscribers, shares, strict=True):
            self.desired[member] = share
        self.by_partition = JavaHashMap(java_int_hash, _sized(count))
        self.by_member = JavaHashMap(java_int_hash, _sized(len(subscribers)))

    def build(self) -> None:
        for member, held in enumerate(self.held):
            for p in held.get(self.topic) or ():
                self.by_partition.compute_if_absent(p, _new_members).add(member)
                self.by_member.compute_if_absent(member, _new_members).add(p)
        self._revoke_overfilled()
        self._revoke_overshared()
        for p in range(self.count):
            self.by_partition.compute_if_absent(
                p, lambda: JavaHashSet(java_int_hash, _sized(len(self.subscribers))))
        unfilled: JavaHashSet[int] = JavaHashSet(java_int_hash, _sized(len(self.held)))
        for member in self.subscribers:
            mine = self.by_member.get(member)
            if (len(mine) if mine is not None else 0) < self.desired[member]:
                unfilled.add(member)
        _fill(self.by_partition, unfilled, self.sharing, self._give)

    def _where(self, key: int) -> TopicPartition:
        return self.topic, key

    def _revoke_overfilled(self) -> None:
        for member, mine in self.by_member.items():
            desired = self.desired[member]
            for p in mine:
                if len(mine) <= desired:
                    break
                members = self.by_partition.get(p)
                assert members is not None
                members.remove(member)
                mine.remove(p)
                self._taken(member)[self.topic].remove(p)

    def _give(self, member: int, p: int) -> int:
        self._taken(member).setdefault(self.topic, set()).add(p)
        mine = self.by_member.compute_if_absent(member, _new_members)
        mine.add(p)
        return self.desired[member] - len(mine)
