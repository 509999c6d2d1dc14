"""Whether a topology can run on the topics there are, and the internal topics it needs
(Kafka's InternalTopicManager.configureTopics).

Pure: it reads partition counts through the coordinator's topic lookup and says which
topics are missing; the broker creates them (`Outcome.new_topics`). In Kafka's order:

1. every source topic must exist (else MISSING_SOURCE_TOPICS);
2. a repartition topic without a partition count gets the largest count among the
   sources of the subtopologies writing to it, repeated until every count is known;
3. each copartition group is made consistent: its external topics must agree, and its
   repartition topics take their count (or, with no external topic, the fixed count of
   one of them, or the largest); a disagreement is INCORRECTLY_PARTITIONED_TOPICS;
4. a changelog topic gets its subtopology's task count: the largest partition count of
   its sources (and is compacted unless the topology says otherwise);
5. internal topics that exist with another count are INCORRECTLY_PARTITIONED_TOPICS;
   those missing are asked for, and the group reports MISSING_INTERNAL_TOPICS until they
   exist.

Only a topology whose every topic is there is ready: then each subtopology has as many
tasks as its task count.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from ..shared.interface import NewTopic
from ..shared.java import hash_map_order
from .topology import InvalidTopology, copartition_groups

if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable

    from kcsim.coordinator.records import StreamsGroupTopologyValue, StreamsTopicInfo

    from ..shared.interface import TopicLookup

    Count = Callable[[str], int | None]  # a topic's partition count, existing or decided


class Status(IntEnum):
    """The status codes of a StreamsGroupHeartbeat answer."""

    STALE_TOPOLOGY = 0
    MISSING_SOURCE_TOPICS = 1
    INCORRECTLY_PARTITIONED_TOPICS = 2
    MISSING_INTERNAL_TOPICS = 3
    SHUTDOWN_APPLICATION = 4
    ASSIGNMENT_DELAYED = 5


@dataclass(frozen=True, slots=True)
class Configured:
    """A topology against the topics there are: its task counts when ready, else why not."""

    task_counts: dict[str, int] | None
    status: tuple[Status, str] | None = None
    missing: tuple[NewTopic, ...] = ()
    # The partition count of each repartition and changelog topic, when ready.
    internal_counts: dict[str, int] | None = None

    @property
    def ready(self) -> bool:
        return self.task_counts is not None


class _NotConfigured(Exception):
    def __init__(self, status: Status, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


COMPACT = ("cleanup.policy", "compact")


def configure(topology: StreamsGroupTopologyValue, topics: TopicLookup) -> Configured:
    """Raises InvalidTopology where Kafka answers STREAMS_INVALID_TOPOLOGY."""
    try:
        return _configure(topology, topics)
    except _NotConfigured as e:
        return Configured(None, (e.status, e.detail))


def _configure(topology: StreamsGroupTopologyValue, topics: TopicLookup) -> Configured:
    existing = topics.partition_count
    missing_sources = sorted({t for s in topology.subtopologies for t in s.source_topics
                              if existing(t) is None})
    if missing_sources:
        raise _NotConfigured(Status.MISSING_SOURCE_TOPICS,
                             f"Source topics {summarize(missing_sources)} are missing.")
    decided: dict[str, int] = {}

    def count(name: str) -> int | None:
        found = existing(name)
        return found if found is not None else decided.get(name)

    repartition = {t.name: t for s in topology.subtopologies for t in s.repartition_source_topics}
    written = {t for s in topology.subtopologies for t in s.repartition_sink_topics}
    if any(not info.partitions and name not in written for name, info in repartition.items()):
        raise InvalidTopology("Failed to compute number of partitions for all repartition topics, "
                              "because a repartition source topic is never used as a sink topic.")
    for name, info in repartition.items():
        if info.partitions:
            decided[name] = info.partitions
    _derive_repartition_counts(topology, repartition, decided, count)
    for sub in topology.subtopologies:
        for group in copartition_groups(sub):
            _copartition(group, repartition, decided, count)
    task_counts: dict[str, int] = {}
    for sub in topology.subtopologies:
        counts = [count(t) for t in sub.source_topics]
        counts += [count(t.name) for t in sub.repartition_source_topics]
        known = [c for c in counts if c is not None]
        if not known:
            raise InvalidTopology(f"Number of partitions must be set for the topics of "
                                  f"subtopology {sub.subtopology_id}.")
        task_counts[sub.subtopology_id] = max(known)
        for info in sub.state_changelog_topics:
            decided[info.name] = task_counts[sub.subtopology_id]
    missing = _missing(topology, decided, topics)
    if missing:
        names = summarize(hash_map_order(t.name for t in missing))
        return Configured(None, (Status.MISSING_INTERNAL_TOPICS,
                                 f"Internal topics are missing: {names}"), missing)
    return Configured(task_counts, internal_counts=decided)


def _derive_repartition_counts(topology: StreamsGroupTopologyValue,
                               repartition: dict[str, StreamsTopicInfo],
                               decided: dict[str, int], count: Count) -> None:
    while True:
        undecided = [n for n in repartition if n not in decided]
        if not undecided:
            return
        progress = False
        for name in undecided:
            candidates = [c for s in topology.subtopologies if name in s.repartition_sink_topics
                          for c in (count(t) for t in [*s.source_topics,
                                                         *(r.name for r in
                                                           s.repartition_source_topics)])
                          if c is not None]
            if candidates:
                decided[name] = max(candidates)
                progress = True
        if not progress:
            raise InvalidTopology(
                "Failed to compute number of partitions for all repartition topics. There may "
                "be loops in the topology that cannot be resolved.")


def summarize(names: list[str]) -> str:
    """Kafka's summarizeTopics: the first three names, and how many more there are."""
    more = len(names) - 3
    return ", ".join(names[:3]) + (f" and {more} additional topics" if more > 0 else "")


def _java_map(counts: dict[str, int]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) + "}"


def _copartition(group: set[str], repartition: dict[str, StreamsTopicInfo],
                 decided: dict[str, int], count: Count) -> None:
    internal = sorted(t for t in group if t in repartition)
    external = {t: count(t) or 0 for t in group if t not in repartition}  # sources: all exist
    fixed = {t: repartition[t].partitions for t in internal if repartition[t].partitions}
    if external:
        if len(set(external.values())) > 1:
            raise _NotConfigured(Status.INCORRECTLY_PARTITIONED_TOPICS,
                                 f"Topics not co-partitioned: [{_java_map(external)}]")
        wanted = next(iter(external.values()))
    elif fixed:
        if len(set(fixed.values())) > 1:
            raise _NotConfigured(
                Status.INCORRECTLY_PARTITIONED_TOPICS,
                f"Following topics do not have the same number of partitions: "
                f"[{_java_map(fixed)}]")
        wanted = next(iter(fixed.values()))
    else:
        wanted = max((decided[t] for t in internal if t in decided), default=0)
    for name in internal:
        if name in fixed and fixed[name] != wanted:
            raise _NotConfigured(
                Status.INCORRECTLY_PARTITIONED_TOPICS,
                f"Number of partitions [{fixed[name]}] of repartition topic [{name}] doesn't "
                f"match number of partitions [{wanted}] of the source topic.")
        decided[name] = wanted


def _missing(topology: StreamsGroupTopologyValue, decided: dict[str, int],
             topics: TopicLookup) -> tuple[NewTopic, ...]:
    wanted: dict[str, NewTopic] = {}
    for sub in topology.subtopologies:
        for info in sub.repartition_source_topics:
            wanted[info.name] = NewTopic(info.name, decided[info.name], dict(info.topic_configs))
        for info in sub.state_changelog_topics:
            configs = dict([COMPACT, *info.topic_configs])
            wanted[info.name] = NewTopic(info.name, decided[info.name], configs)
    missing = []
    for name in wanted:  # Kafka's order: by subtopology, repartition topics first
        found = topics.partition_count(name)
        if found is None:
            missing.append(wanted[name])
        elif found != wanted[name].partitions:
            raise _NotConfigured(
                Status.INCORRECTLY_PARTITIONED_TOPICS,
                f"Existing topic {name} has different number of partitions: expected "
                f"{wanted[name].partitions}, found {found}.")
    return tuple(missing)


TopicsState = tuple[tuple["uuid.UUID | None", "int | None"], ...]


def required_topics(topology: StreamsGroupTopologyValue) -> tuple[str, ...]:
    """Every topic the topology names (sources, repartition and changelog topics), sorted."""
    names = {t for s in topology.subtopologies for t in s.source_topics}
    for s in topology.subtopologies:
        names.update(t.name for t in s.repartition_source_topics)
        names.update(t.name for t in s.state_changelog_topics)
    return tuple(sorted(names))


def topics_state(names: tuple[str, ...], topics: TopicLookup) -> TopicsState:
    """Each named topic's id and partition count (None: it does not exist)."""
    return tuple((topics.topic_id(n), topics.partition_count(n)) for n in names)


def metadata_hash(names: tuple[str, ...], state: TopicsState) -> int:
    """A stable 63-bit hash of the ids and partition counts of the named topics that exist
    (0: none does): a change means the topology is configured again."""
    h = hashlib.blake2b(digest_size=8)
    found = False
    for name, (topic_id, partitions) in zip(names, state):
        if topic_id is not None and partitions is not None:
            found = True
            h.update(b"%s\0%s%d;" % (name.encode(), topic_id.bytes, partitions))
    return int.from_bytes(h.digest(), "big") >> 1 or 1 if found else 0
