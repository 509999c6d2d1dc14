"""Streams groups over a real socket: two members heartbeat a word-count topology from
nothing to a stable split of its tasks, with the internal topics the broker created; a
paused input partition takes its task away until it is resumed (KIP-1249).

Raw frames through kcsim's codec (tests/server/rawkafka.py): the members do what the
test says and nothing else, as a Kafka Streams thread's heartbeats would.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode as E
from tests.coordinator.streams_harness import (
    CHANGELOG,
    REPARTITION,
    task_ids,
    tasks_of,
    word_count,
)

from . import rawgroup
from .durability.wire import Wire
from .rawgroup import connect

HEARTBEAT, DESCRIBE, API_VERSIONS, LIST_GROUPS, METADATA, DESCRIBE_CONFIGS = 88, 89, 18, 16, 3, 32
PAUSE, RESUME, LIST_PAUSED = 1000, 1001, 1002  # KIP-1249, kcsim's keys
Heartbeat = request_class(HEARTBEAT)
ALL_TASKS = {(s, p) for s in ("0", "1") for p in range(4)}


class StreamsThread:
    """One member: joins with the topology, then reports the tasks it was given."""

    def __init__(self, wire: Any, member_id: str) -> None:
        self.wire = wire
        self.member_id = member_id
        self.epoch = 0
        self.owned: set[tuple[str, int]] = set()
        self.last: Any = None

    async def heartbeat(self) -> Any:
        joining = self.epoch == 0
        r = await self.wire.call(HEARTBEAT, 1, Heartbeat(
            group_id="word-count", member_id=self.member_id, member_epoch=self.epoch,
            rebalance_timeout_ms=30000 if joining else -1,
            topology=word_count() if joining else None,
            process_id=f"process-{self.member_id}" if joining else None,
            active_tasks=task_ids(self.owned), standby_tasks=[], warmup_tasks=[]))
        assert r.error_code == 0, r
        self.epoch = r.member_epoch
        if r.active_tasks is not None:
            self.owned = tasks_of(r.active_tasks)  # gives up what was taken at once
        self.last = r
        return r


async def test_two_members_heartbeat_a_word_count_to_a_stable_split(
        autojump_clock: Any, kcsim_trio: Any) -> None:
    admin = await connect(kcsim_trio.port)
    versions = await admin.call(API_VERSIONS, 3, request_class(API_VERSIONS)(
        client_software_name="t", client_software_version="1"))
    served = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
    assert served[HEARTBEAT] == (0, 1) and served[DESCRIBE] == (0, 1)
    assert {f.name: f.max_version_level for f in versions.finalized_features}[
        "streams.version"] == 1
    await rawgroup.create_topic(admin, "words", 4)

    a = StreamsThread(await connect(kcsim_trio.port), "member-a")
    first = await a.heartbeat()
    # As Kafka 4.4 answers a new group's first member (the order of its statuses too).
    assert [(s.status_code, s.status_detail) for s in first.status] == [
        (5, "Assignment delayed due to the configured initial rebalance delay."),
        (3, f"Internal topics are missing: {REPARTITION}, {CHANGELOG}")]
    await trio.sleep(3)  # the broker's default initial rebalance delay, on the mock clock
    await a.heartbeat()
    assert a.owned == ALL_TASKS and a.last.status == []

    b = StreamsThread(await connect(kcsim_trio.port), "member-b")
    joined = await b.heartbeat()
    assert [(s.status_code, s.status_detail) for s in joined.status] == [
        (5, "Assignment delayed due to the configured assignment interval.")]
    await trio.sleep(1)  # the broker's default assignment interval
    for _ in range(4):
        for member in (a, b):
            await member.heartbeat()
    assert a.owned | b.owned == ALL_TASKS
    assert not a.owned & b.owned and len(a.owned) == len(b.owned) == 4

    described = (await admin.call(DESCRIBE, 1, request_class(DESCRIBE)(
        group_ids=["word-count"]))).groups[0]
    assert described.group_state == "Stable"
    assert {m.member_id: tasks_of(m.assignment.active_tasks) for m in described.members} == {
        "member-a": a.owned, "member-b": b.owned}
    listed = (await admin.call(LIST_GROUPS, 5, request_class(LIST_GROUPS)(
        types_filter=["streams"]))).groups
    assert [(g.group_id, g.group_type, g.group_state) for g in listed] == [
        ("word-count", "streams", "Stable")]

    # The broker created the internal topics: four partitions each, the changelog compacted.
    M = request_class(METADATA)
    topics = (await admin.call(METADATA, 12, M(topics=[
        M.MetadataRequestTopic(name=n) for n in (REPARTITION, CHANGELOG)]))).topics
    assert [(t.name, t.error_code, len(t.partitions)) for t in topics] == [
        (REPARTITION, 0, 4), (CHANGELOG, 0, 4)]
    C = request_class(DESCRIBE_CONFIGS)
    configs = (await admin.call(DESCRIBE_CONFIGS, 4, C(resources=[C.DescribeConfigsResource(
        resource_type=2, resource_name=CHANGELOG, configuration_keys=["cleanup.policy"])])))
    assert [(c.name, c.value) for c in configs.results[0].configs] == [
        ("cleanup.policy", "compact")]


@pytest.mark.kcsim(feature=["streams.version=0"])
def test_without_streams_version_1_streams_groups_are_unsupported(kcsim: Any) -> None:
    host, port = kcsim.bootstrap.rsplit(":", 1)
    with Wire(host, int(port)) as wire:
        answer = wire.call(HEARTBEAT, 0, Heartbeat(
            group_id="g", member_id="m", member_epoch=0, rebalance_timeout_ms=1000,
            topology=word_count()))
    assert answer.error_code == E.UNSUPPORTED_VERSION


async def test_a_paused_input_partition_takes_its_task_away_until_it_is_resumed(
        autojump_clock: Any, kcsim_trio: Any) -> None:
    admin = await connect(kcsim_trio.port)
    await rawgroup.create_topic(admin, "words", 4)
    a = StreamsThread(await connect(kcsim_trio.port), "member-a")
    await a.heartbeat()
    await trio.sleep(3)  # the broker's default initial rebalance delay, on the mock clock
    await a.heartbeat()
    assert a.owned == ALL_TASKS

    async def change(api_key: int) -> dict[tuple[str, int], int]:
        cls = request_class(api_key)
        name = cls.__name__.removesuffix("Request")
        topic = getattr(cls, f"{name}RequestTopic")
        partition = getattr(cls, f"{name}RequestPartition")
        answer = await admin.call(api_key, 0, cls(group_id="word-count", topics=[
            topic(name="words", partitions=[partition(partition_index=0)])]))
        assert answer.error_code == 0
        return {(t.topic_name, p.partition_index): p.error_code
                for t in answer.responses for p in t.partitions}

    epoch = a.epoch
    assert await change(PAUSE) == {("words", 0): 0}
    await a.heartbeat()  # revoke first: the task is taken away, at the old epoch
    assert a.owned == ALL_TASKS - {("0", 0)} and a.epoch == epoch
    await a.heartbeat()  # the revocation confirmed: the new epoch
    assert a.owned == ALL_TASKS - {("0", 0)} and a.epoch > epoch
    listed = await admin.call(LIST_PAUSED, 0, request_class(LIST_PAUSED)(group_id="word-count"))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in listed.topics] == [
        ("words", [0])]

    assert await change(RESUME) == {("words", 0): 0}
    await a.heartbeat()
    assert a.owned == ALL_TASKS
