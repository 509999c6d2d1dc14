"""Rule-based test of a streams group under churn, a fake clock and restarts.

Members join (dynamic or static), heartbeat reporting the tasks they hold (or, slow,
still holding tasks they were asked to give up), are fenced and rejoin, leave, leave for a
while; members come with another topology (refused, changing nothing); time passes
(sessions and rebalance time-outs expire, and with Kafka's delays the initial rebalance
delay and the assignment interval pass); partitions of the input and repartition topics
are paused and resumed (KIP-1249); the coordinator restarts from its log. Throughout: no
active task has two owners, no target holds a paused task, a Stable group owns every
unpaused task (but those awaiting a static member back under a new id) and no paused one,
and replaying the log reproduces the group and its paused set.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kcsim.protocol.errors import ErrorCode
from tests.coordinator.state_dump import dump
from tests.coordinator.streams_harness import (
    REPARTITION,
    StreamsHarness,
    T,
    streams_config,
    task_ids,
    tasks_of,
    word_count,
)

ALL_TASKS = {(s, p) for s in ("0", "1") for p in range(4)}
# The subtopology that reads each pausable topic: a paused partition p stops (sub, p).
READER = {"words": "0", REPARTITION: "1"}
PARTITIONS = st.sets(st.tuples(st.sampled_from(sorted(READER)), st.integers(0, 3)),
                     min_size=1, max_size=3)


class Client:
    """A Streams thread: its member id, epoch, the tasks it holds and those it was given."""

    def __init__(self, h: StreamsHarness, member_id: str, instance: str | None) -> None:
        self.h = h
        self.member_id = member_id
        self.instance = instance
        self.epoch = 0
        self.owned: set[tuple[str, int]] = set()
        self.given: set[tuple[str, int]] = set()
        self.gone = False

    def send(self, epoch: int, **fields: Any) -> Any:
        r = self.h.call(88, 1, T(group_id="app", member_id=self.member_id, member_epoch=epoch,
                                 instance_id=self.instance, **fields))
        if r.error_code != ErrorCode.NONE:
            self.gone = True
        elif r.active_tasks is not None:
            self.given = tasks_of(r.active_tasks)
        if r.error_code == ErrorCode.NONE:
            self.epoch = r.member_epoch
        return r

    def join(self) -> None:
        self.send(0, rebalance_timeout_ms=5_000, topology=word_count(),
                  process_id=f"p-{self.member_id}", active_tasks=[], standby_tasks=[],
                  warmup_tasks=[])

    def beat(self, release: bool) -> None:
        if release:
            self.owned = set(self.given)
        self.send(self.epoch, active_tasks=task_ids(self.owned), standby_tasks=[],
                  warmup_tasks=[])


class StreamsGroupMachine(RuleBasedStateMachine):
    @initialize(delays=st.booleans())
    def start(self, delays: bool) -> None:
        # With Kafka's delays, a new group's first target waits 3 s and later ones 1 s.
        timing = ({"streams_group_initial_rebalance_delay_ms": 3000,
                   "streams_group_assignment_interval_ms": 1000} if delays else {})
        self.h = StreamsHarness(cfg=streams_config(streams_group_session_timeout_ms=10_000,
                                                   **timing))
        self.clients: list[Client] = []
        self.count = 0
        self.paused: set[tuple[str, int]] = set()  # (topic, partition) as answered

    def group(self) -> Any:
        return self.h.gc.streams_group("app")

    @precondition(lambda self: len(self.clients) < 4)
    @rule(static=st.booleans())
    def join(self, static: bool) -> None:
        self.count += 1
        instance = f"i{self.count % 3}" if static else None
        client = Client(self.h, f"m{self.count}", instance)
        client.join()
        if not client.gone:
            self.clients.append(client)

    @precondition(lambda self: self.clients)
    @rule(data=st.data(), release=st.booleans())
    def heartbeat(self, data: st.DataObject, release: bool) -> None:
        client = data.draw(st.sampled_from(self.clients))
        client.beat(release)
        if client.gone:
            self.clients.remove(client)

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        client = data.draw(st.sampled_from(self.clients))
        static_leave = client.instance is not None and data.draw(st.booleans())
        client.send(-2 if static_leave else -1)
        self.clients.remove(client)

    @rule(ms=st.sampled_from([1_000, 4_000, 11_000]))
    def advance(self, ms: int) -> None:
        self.h.advance(ms)
        group = self.group()
        alive = set(group.members) if group is not None else set()
        self.clients = [c for c in self.clients if c.member_id in alive]

    def _change(self, pausing: bool, partitions: set[tuple[str, int]]) -> None:
        by_topic: dict[str, list[int]] = {}
        for topic, p in sorted(partitions):
            by_topic.setdefault(topic, []).append(p)
        change = self.h.pause if pausing else self.h.resume
        r = change("app", by_topic)
        if r.error_code == ErrorCode.GROUP_ID_NOT_FOUND:
            assert self.group() is None
            return
        assert r.error_code == ErrorCode.NONE
        for t in r.responses:
            for part in t.partitions:
                if part.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                    # The repartition topic is created once the first member has joined.
                    assert t.topic_name == REPARTITION and self.h.topics.partition_count(
                        REPARTITION) is None
                    continue
                assert part.error_code == ErrorCode.NONE, part
                entry = (t.topic_name, part.partition_index)
                if pausing:
                    self.paused.add(entry)
                else:
                    self.paused.discard(entry)

    @rule(partitions=PARTITIONS)
    def pause(self, partitions: set[tuple[str, int]]) -> None:
        self._change(True, partitions)

    @precondition(lambda self: self.paused)
    @rule(data=st.data())
    def resume(self, data: st.DataObject) -> None:
        chosen = data.draw(st.sets(st.sampled_from(sorted(self.paused)), min_size=1))
        self._change(False, chosen)

    def paused_tasks(self) -> set[tuple[str, int]]:
        return {(READER[topic], p) for topic, p in self.paused}

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def fenced(self, data: st.DataObject) -> None:
        """A heartbeat at an epoch ahead of the member's is fenced (one behind may be its
        previous epoch, which Kafka accepts); the member drops its tasks and rejoins under
        its id, as a Streams thread does."""
        client = data.draw(st.sampled_from(self.clients))
        r = client.send(client.epoch + 1, active_tasks=task_ids(client.owned), standby_tasks=[],
                        warmup_tasks=[])
        assert r.error_code in (ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID), r
        client.gone, client.epoch, client.owned = False, 0, set()
        client.join()
        if client.gone:
            self.clients.remove(client)

    @precondition(lambda self: self.group() is not None and self.group().topology is not None)
    @rule(newer=st.booleans())
    def another_topology(self, newer: bool) -> None:
        """A member with another topology: refused under the same epoch, and a newer epoch
        is not taken either (Kafka never updates a topology in place); nothing changes."""
        before = dump(self.h.gc)
        self.count += 1
        r = self.h.call(88, 1, T(
            group_id="app", member_id=f"m{self.count}", member_epoch=0,
            rebalance_timeout_ms=5_000,
            topology=word_count(epoch=2) if newer else word_count(repartition_partitions=3),
            process_id=f"p-m{self.count}", active_tasks=[], standby_tasks=[], warmup_tasks=[]))
        event(f"another topology: error {r.error_code}")
        if r.error_code != ErrorCode.NONE:
            assert dump(self.h.gc) == before

    @rule()
    def restart(self) -> None:
        self.h.gc = self.h.replayed()

    @rule()
    def everyone_settles(self) -> None:
        for _ in range(4):
            for client in list(self.clients):
                client.beat(release=True)
                if client.gone:
                    self.clients.remove(client)
        group = self.group()
        event(f"after settling: {group.state.value if group is not None else 'no group'}")

    @invariant()
    def no_task_has_two_owners(self) -> None:
        group = self.group()
        if group is None:
            return
        seen: dict[tuple[str, int], str] = {}
        for m in group.members.values():
            for tasks in (m.assigned.active, m.pending_revocation.active):
                for s, ps in tasks.items():
                    for p in ps:
                        assert (s, p) not in seen, f"{s}_{p}: {seen[(s, p)]} and {m.member_id}"
                        seen[(s, p)] = m.member_id

    @invariant()
    def a_stable_group_owns_every_task(self) -> None:
        group = self.group()
        if group is None or not group.members or group.state.value != "Stable":
            return
        owned = {(s, p) for m in group.members.values() for s, ps in m.assigned.active.items()
                 for p in ps}
        # A static member back under a new id is Stable holding nothing until its next
        # heartbeat (as in Kafka 4.4): its target's tasks are free, waiting for it.
        awaited = {(s, p) for m in group.members.values()
                   for s, ps in self.target_short(group, m).items() for p in ps}
        assert owned.isdisjoint(awaited)
        assert owned | awaited == ALL_TASKS - self.paused_tasks()

    @invariant()
    def no_paused_task_is_given(self) -> None:
        group = self.group()
        if group is None:
            return
        paused = self.paused_tasks()
        for target in group.target.values():
            given = {(s, p) for s, ps in target.active.items() for p in ps}
            assert given.isdisjoint(paused), given & paused

    @invariant()
    def the_paused_set_is_what_was_answered(self) -> None:
        if self.group() is None:
            return
        listed = self.h.list_paused("app")
        assert {(t.name, p.partition_index) for t in listed.topics
                for p in t.partitions} == self.paused

    @staticmethod
    def target_short(group: Any, member: Any) -> dict[str, Any]:
        target = group.target.get(member.member_id)
        if target is None or target.active == member.assigned.active:
            return {}
        return dict(target.active)

    @invariant()
    def replay_equals_live(self) -> None:
        live_gc, replayed_gc = dump(self.h.gc), dump(self.h.replayed())
        live, replayed = live_gc["streams"], replayed_gc["streams"]
        for state in (live, replayed):
            for g in state.values():
                g.pop("shutdown_requested_by")
        assert replayed == live
        assert replayed_gc["paused"] == live_gc["paused"]


TestStreamsGroupMachine = StreamsGroupMachine.TestCase
TestStreamsGroupMachine.settings = settings(
    max_examples=100, stateful_step_count=30, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow])
