"""KIP-1071 clients over the coordinator harness: a word-count topology, heartbeats, and
a broker that creates the internal topics the coordinator asks for."""

from __future__ import annotations

from typing import Any

from kcsim.protocol.codecs import request_class
from tests.coordinator.consumer_harness import Harness, config

StreamsHeartbeat = request_class(88)
StreamsDescribe = request_class(89)
T = StreamsHeartbeat

REPARTITION = "app-count-repartition"
CHANGELOG = "app-store-changelog"


def word_count(epoch: int = 1, repartition_partitions: int = 0) -> Any:
    """Words in, a repartition by word, a counting store: two subtopologies."""
    return T.Topology(epoch=epoch, subtopologies=[
        T.Subtopology(subtopology_id="0", source_topics=["words"],
                      repartition_sink_topics=[REPARTITION]),
        T.Subtopology(
            subtopology_id="1",
            repartition_source_topics=[T.TopicInfo(name=REPARTITION,
                                                   partitions=repartition_partitions)],
            state_changelog_topics=[T.TopicInfo(name=CHANGELOG, topic_configs=[
                T.KeyValue(key="message.timestamp.type", value="CreateTime")])]),
    ])


def tasks_of(ids: list[Any] | None) -> set[tuple[str, int]]:
    return {(t.subtopology_id, p) for t in ids or () for p in t.partitions}


def task_ids(tasks: set[tuple[str, int]]) -> list[Any]:
    by_sub: dict[str, list[int]] = {}
    for sub, p in sorted(tasks):
        by_sub.setdefault(sub, []).append(p)
    return [T.TaskIds(subtopology_id=s, partitions=ps) for s, ps in by_sub.items()]


def streams_config(**overrides: Any) -> Any:
    return config(**{"streams_group_initial_rebalance_delay_ms": 0,
                     "streams_group_assignment_interval_ms": 0, **overrides})


class StreamsHarness(Harness):
    """The coordinator harness, whose broker creates the topics the coordinator asks for."""

    def __init__(self, topics: dict[str, int] | None = None, create: bool = True,
                 cfg: Any = None, **kwargs: Any) -> None:
        # No initial rebalance delay or assignment interval unless a test asks: heartbeats
        # step the protocol.
        super().__init__(cfg=cfg or streams_config(),
                         topics=topics if topics is not None else {"words": 4}, **kwargs)
        self.create = create
        self.asked: list[Any] = []

    def _collect(self, outcome: Any) -> list[Any]:
        for topic in outcome.new_topics:
            self.asked.append(topic)
            if self.create and self.topics.partition_count(topic.name) is None:
                self.topics.create(topic.name, topic.partitions)
        return super()._collect(outcome)

    def join(self, member_id: str, topology: Any = None, version: int = 1, **fields: Any) -> Any:
        return self.call(88, version, T(
            group_id=fields.pop("group_id", "app"), member_id=member_id, member_epoch=0,
            rebalance_timeout_ms=fields.pop("rebalance_timeout_ms", 30000),
            topology=topology if topology is not None else word_count(),
            process_id=fields.pop("process_id", f"process-{member_id}"),
            active_tasks=[], standby_tasks=[], warmup_tasks=[], **fields))

    def beat(self, member_id: str, epoch: int, owned: set[tuple[str, int]] | None = None,
             version: int = 1, **fields: Any) -> Any:
        tasks = None if owned is None else task_ids(owned)
        return self.call(88, version, T(
            group_id=fields.pop("group_id", "app"), member_id=member_id, member_epoch=epoch,
            active_tasks=tasks, standby_tasks=None if owned is None else [],
            warmup_tasks=None if owned is None else [], **fields))

    def describe(self, group_id: str = "app", version: int = 1) -> Any:
        return self.call(89, version, StreamsDescribe(group_ids=[group_id])).groups[0]
