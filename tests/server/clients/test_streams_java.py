"""A real Kafka Streams 4.4 application (group.protocol=streams) on kcsim.

A word count with a repartition step (groupBy) and a state store (count) runs in one or
two JVMs (tests/server/clients/streamsapp.py) against `kcsim serve` in a subprocess, so
the server can be killed and started again. Input lines go to chosen partitions of a
four-partition topic: eight tasks, (0, p) reading the input and (1, p) the repartition
topic. Each test checks the counts on the output topic with a plain consumer, what each
instance says it owns, and what StreamsGroupDescribe says over the wire.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.admin import AdminClient, OffsetSpec

from ..durability.wire import Wire
from .streamsapp import OutputCounts, StreamsApp, WordFeed, describe, owners

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tests.conftest import KcsimProcess

pytestmark = [pytest.mark.java, pytest.mark.timeout(150)]

PARTITIONS = 4
ALL_TASKS = {f"{s}_{p}" for s in (0, 1) for p in range(PARTITIONS)}
APP = "wordcount"
INPUT, OUTPUT = "words", "counts"
# Assign at once; a killed instance's session ends after 4 s.
SERVER = {"streams_group_initial_rebalance_delay_ms": 0,
          "streams_group_assignment_interval_ms": 0,
          "streams_group_session_timeout_ms": 4000,
          "streams_group_heartbeat_interval_ms": 500}


class WordCount:
    """kcsim, the topics, the input feed, the output reader and the instances started."""

    def __init__(self, server: KcsimProcess, tmp_path: Path, read_committed: bool) -> None:
        self.server, self.tmp_path = server, tmp_path
        with Wire.to(server) as wire:
            wire.create_topic(INPUT, PARTITIONS)
            wire.create_topic(OUTPUT, PARTITIONS)
        self.feed = WordFeed(server.bootstrap, INPUT, PARTITIONS)
        self.counts = OutputCounts(server.bootstrap, OUTPUT, PARTITIONS, read_committed)
        self.apps: list[StreamsApp] = []
        self.changed = threading.Condition()

    def start(self, name: str, **props: Any) -> StreamsApp:
        """An instance with its own state dir (the same one when `name` comes back)."""
        app = StreamsApp(self.server.bootstrap, APP, (INPUT, OUTPUT),
                         self.tmp_path / f"state-{name}",
                         self.tmp_path / f"{name}.stderr.log", self.changed, **props)
        self.apps.append(app)
        return app

    def send_and_check(self, rounds: int = 3) -> None:
        """More input on every partition; the output counts all of it, exactly."""
        self.feed.send(rounds)
        self.counts.wait_for(self.feed.expected)

    def describe(self) -> Any:
        return describe(self.server, APP)

    def wait_committed(self) -> None:
        """Until the group has committed every partition it reads up to its end (input and
        repartition topic), so an instance killed now leaves nothing to process twice."""
        with AdminClient(self.server.bootstrap) as admin:
            for _ in range(200):
                committed = admin.list_group_offsets(APP).value(APP)
                ends = admin.list_offsets(dict.fromkeys(committed, OffsetSpec.latest()))
                topics = {tp.topic for tp in committed}
                if (INPUT in topics and len(topics) == 2
                        and all(committed[tp].offset == ends.value(tp).offset for tp in committed)):
                    return
                time.sleep(0.1)
        raise AssertionError(f"offsets not committed to the end: {committed}")

    def close(self) -> None:
        for app in self.apps:
            app.stop()
        self.counts.close()


@pytest.fixture
def wordcount(kcsim_factory: Callable[..., KcsimProcess],
              tmp_path: Path) -> Iterator[Callable[..., WordCount]]:
    """Start kcsim (SERVER plus any settings given) and set up the word count on it."""
    made: list[WordCount] = []

    def make(read_committed: bool = False, **settings: Any) -> WordCount:
        made.append(WordCount(kcsim_factory(**{**SERVER, **settings}), tmp_path, read_committed))
        return made[-1]

    yield make
    for world in made:
        world.close()
        for i, app in enumerate(world.apps):
            print(f"instance {i} stderr:\n{app.stderr()}")


def assert_split(described: Any, *apps: StreamsApp) -> None:
    """Every task has exactly one owner, in the broker's view, and each instance owns
    what the broker says its member owns."""
    by_task = owners(described)
    assert set(by_task) == ALL_TASKS
    assert all(len(members) == 1 for members in by_task.values()), by_task
    broker_sets = sorted(sorted(t for t, m in by_task.items() if m == [member.member_id])
                         for member in described.members)
    assert broker_sets == sorted(sorted(app.active) for app in apps)


def test_instances_join_split_the_tasks_and_the_last_one_takes_all(
        wordcount: Callable[..., WordCount]) -> None:
    app = wordcount()
    a = app.start("a")
    a.wait_running(tasks=len(ALL_TASKS))
    assert a.active == ALL_TASKS
    app.send_and_check()

    b = app.start("b")
    both = (a, b)
    a.wait("tasks split", lambda: a.active | b.active == ALL_TASKS and not a.active & b.active
           and bool(a.active) and bool(b.active) and all(x.state == "RUNNING" for x in both))
    described = app.describe()
    assert described.group_state == "Stable"
    assert_split(described, a, b)
    app.send_and_check()

    a.close()
    b.wait_running(tasks=len(ALL_TASKS))
    assert_split(app.describe(), b)
    app.send_and_check()
