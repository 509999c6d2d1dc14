"""`__consumer_offsets` is written from its first read on, and stays so over restarts.

Until a client fetches it or lists its offsets, commits leave nothing of the topic in the
data directory (no partition file, no checkpoint), whatever Metadata and DescribeConfigs
ask and however often the server restarts. The first read finds the state the commits
left; from then on commits are written as they come, also after a clean stop or a SIGKILL.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.coordinator.kafka_format import OFFSETS_TOPIC
from kcsim.protocol.codecs import request_class

from .test_crash import kill
from .test_offsets_topic_restart import commit_round, committed_offsets, expected, read
from .wire import COMMIT_V, OFFSET_COMMIT, Wire, commit_request

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.timeout(120)

LIST_OFFSETS, METADATA, DESCRIBE_CONFIGS = 2, 3, 32
LATEST, TOPIC_RESOURCE = -1, 2
CHECKPOINT = "offsets-topic.checkpoint"


def topic_id(server: Any) -> uuid.UUID:
    """Asked with Metadata, as every client does: it leaves the topic unwritten."""
    cls = request_class(METADATA)
    with Wire.to(server) as wire:
        response = wire.call(METADATA, 12, cls(
            topics=[cls.MetadataRequestTopic(name=OFFSETS_TOPIC)],
            allow_auto_topic_creation=True))
    [topic] = response.topics
    assert (topic.error_code, topic.is_internal) == (0, True)
    return uuid.UUID(str(topic.topic_id))


def describe_configs(server: Any) -> dict[str, str]:
    cls = request_class(DESCRIBE_CONFIGS)
    with Wire.to(server) as wire:
        response = wire.call(DESCRIBE_CONFIGS, 4, cls(resources=[cls.DescribeConfigsResource(
            resource_type=TOPIC_RESOURCE, resource_name=OFFSETS_TOPIC,
            configuration_keys=None)]))
    return {c.name: c.value for c in response.results[0].configs}


def topic_bytes(server: Any, topic: uuid.UUID) -> int:
    """What the topic's partition files hold on disk (written to the OS on every append)."""
    files = (server.data_dir / "partitions" / topic.hex).rglob("*")
    return sum(f.stat().st_size for f in files if f.is_file())


def checkpoint(server: Any) -> Path:
    return server.data_dir / CHECKPOINT  # type: ignore[no-any-return]


def list_latest(server: Any) -> dict[int, int]:
    cls = request_class(LIST_OFFSETS)
    with Wire.to(server) as wire:
        response = wire.call(LIST_OFFSETS, 7, cls(
            replica_id=-1, isolation_level=0, topics=[cls.ListOffsetsTopic(
                name=OFFSETS_TOPIC, partitions=[
                    cls.ListOffsetsPartition(partition_index=p, timestamp=LATEST)
                    for p in range(50)])]))
    parts = response.topics[0].partitions
    assert {p.error_code for p in parts} == {0}
    return {p.partition_index: p.offset for p in parts}


def test_commits_write_nothing_for_the_topic_until_it_is_read_across_restarts(
        kcsim_factory: Callable[..., Any]) -> None:
    server = kcsim_factory(fsync="interval")
    commit_round(server, 1)
    topic = topic_id(server)
    assert describe_configs(server)["cleanup.policy"] == "compact"
    assert server.stop() == 0
    server.start()
    commit_round(server, 2)
    kill(server)
    server.start()
    latest = commit_round(server, 3)
    assert topic_id(server) == topic
    assert topic_bytes(server, topic) == 0 and not checkpoint(server).exists()
    assert OFFSETS_TOPIC not in server.stderr()  # no start did any work for it

    ends = list_latest(server)  # the first read: filled with the state the commits left
    assert sum(ends.values()) == len(expected(latest))
    assert topic_bytes(server, topic) > 0 and checkpoint(server).exists()
    topic_records = read(server)
    assert committed_offsets(topic_records) == expected(latest)
    assert all(r.value is not None for records in topic_records.values() for r in records)


@pytest.mark.parametrize("stop", ["clean", "sigkill"])
def test_once_read_the_topic_is_written_at_each_commit_after_a_restart(
        kcsim_factory: Callable[..., Any], stop: str) -> None:
    server = kcsim_factory(fsync="interval")
    commit_round(server, 1)
    before = read(server)
    if stop == "clean":
        assert server.stop() == 0
    else:
        kill(server)
    server.start()
    topic = topic_id(server)
    written = topic_bytes(server, topic)
    latest = commit_round(server, 2)
    assert topic_bytes(server, topic) > written  # written as committed, before any read
    after = read(server)
    assert all(records[:len(before[p])] == before[p] for p, records in after.items())
    assert committed_offsets(after) == expected(latest)
    assert sum(map(len, after.values())) == 2 * len(expected(latest))  # each commit, once


@pytest.mark.parametrize("fsync", ["interval", "always"])
def test_commits_are_answered_while_the_first_read_fills_the_topic_and_all_reach_it(
        kcsim_factory: Callable[..., Any], fsync: str) -> None:
    """The fill reads the log beside the serving: a committer goes on being answered while
    the first ListOffsets waits for it, and every one of its commits is in the topic."""
    groups, partitions = 4000, 20  # 80,000 offsets to fill the topic with
    server = kcsim_factory(fsync=fsync)
    with Wire.to(server) as wire:
        wire.create_topic("orders", partitions)
        offsets = dict.fromkeys(range(partitions), 1)
        for first in range(0, groups, 200):
            for g in range(first, first + 200):
                wire.send(OFFSET_COMMIT, COMMIT_V, commit_request(f"g{g}", "orders", offsets))
            for _ in range(200):
                wire.receive()
    answered: list[tuple[int, float]] = []
    stop = threading.Event()

    def committer() -> None:
        with Wire.to(server) as live:
            n = 0
            while not stop.is_set():
                n += 1
                live.commit("live", "orders", {0: n})
                answered.append((n, time.monotonic()))

    thread = threading.Thread(target=committer)
    thread.start()
    try:
        while not answered:
            time.sleep(0.01)
        asked = time.monotonic()
        list_latest(server)
        filled = time.monotonic()
        while answered[-1][1] <= filled:
            time.sleep(0.01)
    finally:
        stop.set()
        thread.join(30)
    during = [n for n, at in answered if asked < at < filled]
    # Blocking the loop for the fill would let through only the few commits already in
    # flight when the read arrived.
    assert len(during) >= 10, f"{len(during)} commits answered in {filled - asked:.3f} s"
    shown_offsets = committed_offsets(read(server))
    assert shown_offsets[("live", 0)] == answered[-1][0]
    assert len(shown_offsets) == groups * partitions + 1
