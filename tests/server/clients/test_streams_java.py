"""A real Kafka Streams 4.4 application (group.protocol=streams) on kcsim.

A word count with a repartition step (groupBy) and a state store (count) runs in one or
two JVMs (tests/server/clients/streamsapp.py) against `kcsim serve` in a subprocess, so
the server can be killed and started again. Input lines go to chosen partitions of a
four-partition topic: eight tasks, (0, p) reading the input and (1, p) the repartition
topic. Each test checks the counts on the output topic with a plain consumer, what each
instance says it owns, and what StreamsGroupDescribe says over the wire.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.admin import AdminClient, AdminError, OffsetSpec, TopicPartition

from ..durability.wire import Wire
from .streamsapp import OutputCounts, StreamsApp, WordFeed, describe, owners, task_names

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tests.conftest import KcsimProcess

# The first run on a machine fetches kafka-streams and rocksdbjni with Maven (minutes).
pytestmark = [pytest.mark.java, pytest.mark.timeout(300)]

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

    def start_static(self, name: str, **props: Any) -> StreamsApp:
        """An instance that is a static member (group.instance.id "static-<name>")."""
        return self.start(name, group_instance_id=f"static-{name}", **props)

    def two(self, static: bool = False, **props: Any) -> tuple[StreamsApp, StreamsApp]:
        """Instances "a" and "b", running with the tasks split between them."""
        start = self.start_static if static else self.start
        a, b = start("a", **props), start("b", **props)
        self.wait_split(a, b)
        return a, b

    def wait_split(self, *apps: StreamsApp) -> None:
        """Until all of `apps` run, each with tasks, every task owned by exactly one."""
        def split() -> bool:
            gone = [app for app in apps if app.ended]
            assert not gone, f"an instance exited: {gone[0].stderr()}"
            owned = [app.active for app in apps]
            return (all(app.state == "RUNNING" and app.active for app in apps)
                    and set().union(*owned) == ALL_TASKS
                    and sum(map(len, owned)) == len(ALL_TASKS))
        apps[0].wait("tasks split", split)

    def send_and_check(self, rounds: int = 3) -> None:
        """More input on every partition; the output counts all of it, exactly."""
        self.feed.send(rounds)
        self.counts.wait_for(self.feed.expected)

    def describe(self) -> Any:
        return describe(self.server, APP)

    def wait_committed(self) -> None:
        """Until the group has committed every partition it reads up to its end (input and
        repartition topic), so an instance killed now leaves nothing to process twice."""
        for _ in range(200):
            committed = self.committed()
            with AdminClient(self.server.bootstrap) as admin:
                ends = admin.list_offsets(dict.fromkeys(committed, OffsetSpec.latest()))
            topics = {tp.topic for tp in committed}
            if (INPUT in topics and len(topics) == 2
                    and all(committed[tp] == ends[tp].offset for tp in committed)):
                return
            time.sleep(0.1)
        raise AssertionError(f"offsets not committed to the end: {committed}")

    def committed(self) -> dict[TopicPartition, int]:
        with AdminClient(self.server.bootstrap) as admin:
            found = admin.list_group_offsets(APP)[APP]
        return {tp: meta.offset for tp, meta in found.items()}

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
    app.wait_split(a, b)
    described = app.describe()
    assert described.group_state == "Stable"
    assert_split(described, a, b)
    app.send_and_check()

    a.close()
    b.wait_running(tasks=len(ALL_TASKS))
    assert_split(app.describe(), b)
    app.send_and_check()


def test_a_killed_instance_s_tasks_go_to_the_other(wordcount: Callable[..., WordCount]) -> None:
    app = wordcount()
    a, b = app.two()
    app.send_and_check()
    app.wait_committed()
    a.kill()
    b.wait_running(tasks=len(ALL_TASKS))
    assert_split(app.describe(), b)
    app.send_and_check()


def test_an_instance_s_shutdown_request_stops_the_whole_application(
        wordcount: Callable[..., WordCount]) -> None:
    """A record that makes processing throw, with the handler answering
    SHUTDOWN_APPLICATION: the instance that hit it asks the group to shut down, and the
    broker's answer to the other instance's heartbeat stops that one too."""
    app = wordcount()
    a, b = app.two(on_error="SHUTDOWN_APPLICATION")
    app.send_and_check()
    failed, other = (a, b) if "0_0" in a.active else (b, a)
    app.feed.poison(0)
    a.wait("both instances stopped", lambda: a.state == b.state == "ERROR")
    assert failed.errors and "poison record" in failed.stderr()
    assert other.errors == []


# Exactly-once v2 with transactions kept open for a while: a commit every 3 s, aborted
# by kcsim when 5 s old.
SLOW_EOS = {"processing_guarantee": "exactly_once_v2", "commit_interval_ms": 3000,
            "producer_transaction_timeout_ms": 5000}


@contextlib.contextmanager
def open_transaction(app: WordCount, aborted: bool) -> Iterator[None]:
    """Input processed in a transaction still open: its counts are on the output,
    uncommitted. Afterwards a read_committed reader must see each word counted 1, 2, ...
    n, and a read_uncommitted one, when the transaction is to be `aborted`, some count
    twice (aborted and done again)."""
    dirty = OutputCounts(app.server.bootstrap, OUTPUT, PARTITIONS, read_committed=False)
    try:
        dirty.wait_for(app.counts.latest())
        app.feed.send(3)
        dirty.wait_for(app.feed.expected)
        app.counts.poll()
        assert app.counts.latest() != dict(app.feed.expected), "committed already"
        yield
        app.send_and_check()
        for word, n in app.feed.expected.items():
            assert app.counts.values[word] == list(range(1, n + 1)), word
        dirty.wait_for(app.feed.expected)
        assert any(len(v) > len(set(v)) for v in dirty.values.values()) == aborted
    finally:
        dirty.close()


def test_exactly_once_v2_counts_every_input_once_across_a_sigkill(
        wordcount: Callable[..., WordCount]) -> None:
    """An instance is killed with a transaction open: kcsim aborts it when it times out,
    the other instance takes over from the committed offsets and state, and each input
    is counted once."""
    app = wordcount(read_committed=True)
    a, b = app.two(**SLOW_EOS)
    app.send_and_check()
    with open_transaction(app, aborted=True):
        a.kill()
        b.wait_running(tasks=len(ALL_TASKS))


def test_a_static_member_restarts_and_gets_its_tasks_back_without_a_rebalance(
        wordcount: Callable[..., WordCount]) -> None:
    """A static member closes (it leaves with epoch -2, keeping its place) and comes back
    within its session: its tasks wait for it, the other instance goes on untouched.

    As in Kafka 4.4, the rejoin under a new member id is answered with no tasks and the
    member's next heartbeat bumps the group epoch once; the new target is the old one."""
    app = wordcount(streams_group_session_timeout_ms=30000)
    a, b = app.two(static=True)
    app.send_and_check()
    before = app.describe()
    held, b_held = set(a.active), set(b.active)
    b_owned, b_states = len(b.owned), len(b.states)
    a.close()
    app.feed.send(2)
    a = app.start_static("a")
    a.wait_running(tasks=len(held))
    assert a.active == held
    app.counts.wait_for(app.feed.expected)
    after = app.describe()
    assert after.group_epoch <= before.group_epoch + 1
    assert_split(after, a, b)
    assert b.owned[b_owned:] == [] and b.active == b_held
    assert b.states[b_states:] == []
    assert {m.instance_id for m in after.members} == {"static-a-1", "static-b-1"}
    app.send_and_check()


def test_the_application_goes_on_across_a_kcsim_sigkill(
        wordcount: Callable[..., WordCount]) -> None:
    """kcsim is killed and started on the same data dir: the group comes back from the log
    with its epochs, its members' tasks and its offsets, and the instances go on."""
    app = wordcount()
    a, b = app.two()
    app.send_and_check()
    app.wait_committed()
    before, offsets = app.describe(), app.committed()
    held = (set(a.active), set(b.active))
    kill_and_restart(app.server)
    after = app.describe()
    assert (after.group_epoch, after.assignment_epoch) == (before.group_epoch,
                                                           before.assignment_epoch)
    assert sorted((m.member_id, m.member_epoch) for m in after.members) == sorted(
        (m.member_id, m.member_epoch) for m in before.members)
    assert owners(after) == owners(before)
    assert app.committed() == offsets
    app.send_and_check()
    assert (set(a.active), set(b.active)) == held


def test_exactly_once_v2_counts_every_input_once_across_a_kcsim_sigkill(
        wordcount: Callable[..., WordCount]) -> None:
    """kcsim is killed with transactions open: they are in its log, so after its restart
    the instances carry them on and commit them, and each input is counted once."""
    app = wordcount(read_committed=True)
    app.two(**SLOW_EOS)
    app.send_and_check()
    with open_transaction(app, aborted=False):
        kill_and_restart(app.server)


def kill_and_restart(server: KcsimProcess) -> None:
    """SIGKILL kcsim and start it again on the same port and data dir."""
    assert server.proc is not None
    server.proc.kill()
    server.proc.wait()
    server.proc = None
    server.start()


# -- KIP-1249: pausing the partitions a streams group reads ---------------------------------

def pause(app: WordCount, topic: str, partition: int, resume: bool = False) -> None:
    with AdminClient(app.server.bootstrap) as admin:
        call = admin.resume_partitions if resume else admin.pause_partitions
        outcome = call(APP, [TopicPartition(topic, partition)])
        assert outcome.error(TopicPartition(topic, partition)) is None


def frozen(app: WordCount, stopped: Callable[[str], bool]) -> dict[str, int]:
    """The counts to expect while the words `stopped` says are not counted: those keep
    what the output shows now, the others count all the input."""
    now = app.counts.latest()
    return {w: now[w] if stopped(w) else n for w, n in app.feed.expected.items()}


def test_a_paused_input_partition_stops_its_task_and_is_reread_from_a_reset_offset(
        wordcount: Callable[..., WordCount]) -> None:
    """Pausing partition 0 of the input takes task 0_0 from its instance and nobody gets
    it; words from partition 0 stop counting, the others go on. With both instances
    running, the group's offset of the paused partition is reset to 1 (an unpaused one is
    refused), and once resumed the task comes back and reads partition 0 again from 1.
    The pause holds across a kcsim SIGKILL."""
    app = wordcount()
    a, b = app.two()
    app.send_and_check()
    app.wait_committed()
    read_before_pause = app.feed.lines[0]
    pause(app, INPUT, 0)
    a.wait("task 0_0 taken away", lambda: a.active | b.active == ALL_TASKS - {"0_0"}
           and not a.active & b.active and a.state == b.state == "RUNNING")
    assert set(owners(app.describe())) == ALL_TASKS - {"0_0"}
    from_p0 = lambda word: word.startswith("p0-")  # noqa: E731
    stopped = frozen(app, from_p0)
    app.feed.send(3)
    app.counts.wait_for(frozen(app, from_p0))
    assert {w: n for w, n in app.counts.latest().items() if from_p0(w)} == {
        w: n for w, n in stopped.items() if from_p0(w)}
    # The pause is a record: it holds across a kcsim SIGKILL.
    kill_and_restart(app.server)
    app.feed.send(1, partitions=[1, 2, 3])
    app.counts.wait_for(frozen(app, from_p0))
    assert set(owners(app.describe())) == ALL_TASKS - {"0_0"}
    assert "0_0" not in a.active | b.active

    with AdminClient(app.server.bootstrap) as admin:
        with pytest.raises(AdminError, match="UNKNOWN_MEMBER_ID"):
            admin.alter_group_offsets(APP, {TopicPartition(INPUT, 1): 0})
        reset = admin.alter_group_offsets(APP, {TopicPartition(INPUT, 0): 1})
        assert reset.error(TopicPartition(INPUT, 0)) is None
    assert app.committed()[TopicPartition(INPUT, 0)] == 1
    reread = Counter(WordFeed.line(0).split())
    for _ in range(read_before_pause - 1):  # read again: those from offset 1 on
        app.feed.expected.update(reread)

    pause(app, INPUT, 0, resume=True)
    a.wait("task 0_0 back", lambda: a.active | b.active == ALL_TASKS
           and not a.active & b.active and a.state == b.state == "RUNNING")
    app.counts.wait_for(app.feed.expected)
    app.send_and_check()


def test_a_paused_stateful_task_leaves_its_standby_where_it_is(
        wordcount: Callable[..., WordCount]) -> None:
    """With a standby replica per stateful task (the counting subtopology 1), pausing
    partition 0 of the repartition topic takes active task 1_0 away while its standby
    stays on the other instance; the words counted by 1_0 stop, the others go on, and
    after the resume all of them are counted exactly."""
    app = wordcount(streams_group_num_standby_replicas=1)
    a, b = app.two()
    stateful = {t for t in ALL_TASKS if t.startswith("1_")}

    def standbys_placed() -> bool:
        return (a.standby | b.standby == stateful and not a.standby & b.standby
                and not a.standby & a.active and not b.standby & b.active)
    a.wait("standbys placed", standbys_placed)
    app.send_and_check()
    app.wait_committed()
    repartition, = {tp.topic for tp in app.committed()} - {INPUT}
    keeper = a if "1_0" in a.standby else b
    seen = len(keeper.owned)

    pause(app, repartition, 0)
    a.wait("task 1_0 taken away", lambda: a.active | b.active == ALL_TASKS - {"1_0"}
           and a.state == b.state == "RUNNING")
    assert "1_0" in keeper.standby
    described = app.describe()
    assert set(owners(described)) == ALL_TASKS - {"1_0"}
    holders = [m for m in described.members
               if "1_0" in task_names(m.assignment.standby_tasks)]
    assert [task_names(m.assignment.active_tasks) for m in holders] == [keeper.active]
    on_1_0 = lambda word: app.counts.partition[word] == 0  # noqa: E731
    assert any(map(on_1_0, app.feed.expected)), "no word is counted by task 1_0"
    app.feed.send(3)
    app.counts.wait_for(frozen(app, on_1_0))
    assert all("1_0" in standby for _, standby in keeper.owned[seen:])

    pause(app, repartition, 0, resume=True)
    a.wait("task 1_0 back", lambda: a.active | b.active == ALL_TASKS
           and a.state == b.state == "RUNNING")
    app.counts.wait_for(app.feed.expected)
    app.send_and_check()
