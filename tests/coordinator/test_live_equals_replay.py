"""Live state equals replayed state: every record type folds through one apply.

Random sequences of classic joins, syncs, heartbeats and leaves, KIP-848
heartbeats and leaves, offset commits (the hot path), offset and group
deletions, pauses and resumes, over group ids either kind of group may take,
with the clock moving. After every step the records written so far are folded
into a fresh coordinator, and what a client can see of the durable state must
be the same on both: committed offsets (OffsetFetch), groups (ListGroups,
DescribeGroups, ConsumerGroupDescribe) and paused sets (ListPausedPartitions).
A classic group in the middle of a rebalance is compared with the generation
it last stored, as Kafka reloads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kcsim.coordinator import Caller, GroupConfig
from kcsim.coordinator.shared.events import event_fields
from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode as E
from kcsim.storage.records import Record

from . import state_dump
from .group_harness import Harness, Token, assignment, subscription

if TYPE_CHECKING:
    import uuid

GROUPS = ["a", "b"]
TOPICS = {"t": 4, "u": 2}
HeartbeatRequest = request_class(68)
ConsumerDescribeRequest = request_class(69)
ListPausedRequest = request_class(1002)
OffsetFetchRequest = request_class(9)


class Classic:
    """A classic consumer: joins, syncs (the leader assigns round-robin), heartbeats."""

    def __init__(self, name: str, group: str, instance: str | None) -> None:
        self.name, self.group, self.instance = name, group, instance
        self.member_id = ""
        self.generation = -1
        self.members: list[str] = []
        self.leader = False
        self.join_token: Token | None = None
        self.sync_token: Token | None = None
        self.synced = -1

    def reset(self) -> None:
        self.member_id, self.generation, self.members, self.leader = "", -1, [], False


class Consumer:
    """A KIP-848 consumer that gives revoked partitions up at once."""

    def __init__(self, name: str, group: str) -> None:
        self.name, self.group = name, group
        self.member_id = f"m-{name}"
        self.epoch = 0
        self.owned: dict[uuid.UUID, list[int]] = {}


class LiveEqualsReplay(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(GroupConfig(initial_rebalance_delay_ms=50,
                                     offsets_retention_ms=20_000,
                                     offsets_retention_check_interval_ms=5_000,
                                     consumer_group_session_timeout_ms=10_000,
                                     events=True),
                         topics=TOPICS)
        self.classic = [Classic("c0", "a", None), Classic("c1", "a", "i-1"),
                        Classic("c2", "b", None)]
        self.consumers = [Consumer("k0", "b"), Consumer("k1", "b"), Consumer("k2", "a")]

    # -- classic clients ------------------------------------------------------------

    def _answers(self) -> None:
        for c in self.classic:
            if c.join_token is not None and c.join_token in self.h.responses:
                r = self.h.responses[c.join_token]
                c.join_token = None
                if r.error_code == E.NONE:
                    c.member_id, c.generation = r.member_id, r.generation_id
                    c.leader = r.leader == r.member_id
                    c.members = [m.member_id for m in r.members]
                elif r.error_code == E.MEMBER_ID_REQUIRED:
                    c.member_id = r.member_id
                else:
                    c.reset()
            if c.sync_token is not None and c.sync_token in self.h.responses:
                r = self.h.responses[c.sync_token]
                c.sync_token = None
                if r.error_code == E.NONE:
                    c.synced = c.generation
                else:
                    c.reset()

    @rule(i=st.integers(0, 2))
    def classic_step(self, i: int) -> None:
        c = self.classic[i]
        if c.join_token is not None or c.sync_token is not None:
            return
        if c.generation < 0:
            c.join_token = self.h.join(c.group, c.member_id, instance=c.instance,
                                       client_id=c.name, protocols=[("range", subscription("t"))])
        elif c.synced != c.generation:
            plan = {}
            if c.leader:
                n = len(c.members)
                plan = {m: assignment({"t": [p for p in range(4) if p % n == k]})
                        for k, m in enumerate(c.members)}
            c.sync_token = self.h.sync(c.group, c.member_id, c.generation, assignments=plan,
                                       instance=c.instance)
        else:
            r = self.h.heartbeat(c.group, c.member_id, c.generation, instance=c.instance)
            if r.error_code != E.NONE:
                c.generation = -1
                if r.error_code in (E.UNKNOWN_MEMBER_ID, E.FENCED_INSTANCE_ID):
                    c.reset()
        self._answers()

    @rule(i=st.integers(0, 2))
    def classic_leave(self, i: int) -> None:
        c = self.classic[i]
        if c.member_id and c.join_token is None and c.sync_token is None:
            self.h.leave(c.group, (c.member_id, c.instance))
            c.reset()
        self._answers()

    # -- KIP-848 clients ----------------------------------------------------------------

    @rule(i=st.integers(0, 2), names=st.sampled_from([["t"], ["t", "u"]]))
    def consumer_beat(self, i: int, names: list[str]) -> None:
        k = self.consumers[i]
        joining = k.epoch == 0
        request = HeartbeatRequest(
            group_id=k.group, member_id=k.member_id, member_epoch=k.epoch, instance_id=None,
            rack_id=None, rebalance_timeout_ms=5_000 if joining else -1,
            subscribed_topic_names=names, subscribed_topic_regex=None, server_assignor=None,
            topic_partitions=[HeartbeatRequest.TopicPartitions(topic_id=t, partitions=ps)
                              for t, ps in k.owned.items()])
        r = self.h.answer(68, 1, request)
        if r.error_code != E.NONE:
            k.epoch, k.owned = 0, {}
        else:
            k.epoch = r.member_epoch
            if r.assignment is not None:
                k.owned = {tp.topic_id: list(tp.partitions)
                           for tp in r.assignment.topic_partitions if tp.partitions}
        self._answers()

    @rule(i=st.integers(0, 2))
    def consumer_leave(self, i: int) -> None:
        k = self.consumers[i]
        if k.epoch > 0:
            self.h.answer(68, 1, HeartbeatRequest(
                group_id=k.group, member_id=k.member_id, member_epoch=-1, instance_id=None,
                rack_id=None, rebalance_timeout_ms=-1, subscribed_topic_names=None,
                subscribed_topic_regex=None, server_assignor=None, topic_partitions=None))
            k.epoch, k.owned = 0, {}

    # -- offsets, admin, time ---------------------------------------------------------------

    @rule(group=st.sampled_from([*GROUPS, "simple"]), topic=st.sampled_from(sorted(TOPICS)),
          offsets=st.lists(st.integers(0, 100), min_size=1, max_size=4))
    def commit(self, group: str, topic: str, offsets: list[int]) -> None:
        """A commit from outside the group (an admin tool, or a simple consumer)."""
        self.h.commit(group, {(topic, p % TOPICS[topic]): o for p, o in enumerate(offsets)})

    @rule(i=st.integers(0, 2), offset=st.integers(0, 100))
    def member_commit(self, i: int, offset: int) -> None:
        c = self.classic[i]
        if c.generation >= 0 and c.join_token is None and c.sync_token is None:
            self.h.commit(c.group, {("t", i): offset, ("t", 3): offset}, generation=c.generation,
                          member_id=c.member_id, instance=c.instance)

    @rule(group=st.sampled_from([*GROUPS, "simple"]))
    def delete_group(self, group: str) -> None:
        self.h.delete_groups(group)
        self._answers()

    @rule(group=st.sampled_from([*GROUPS, "simple"]), topic=st.sampled_from(sorted(TOPICS)))
    def delete_offsets(self, group: str, topic: str) -> None:
        self.h.delete_offsets(group, {topic: list(range(TOPICS[topic]))})

    @rule(group=st.sampled_from(GROUPS), partition=st.integers(0, 3), pause=st.booleans())
    def pause_or_resume(self, group: str, partition: int, pause: bool) -> None:
        cls = request_class(1000 if pause else 1001)
        name = cls.__name__.removesuffix("Request")
        topic = getattr(cls, f"{name}RequestTopic")
        part = getattr(cls, f"{name}RequestPartition")
        self.h.answer(1000 if pause else 1001, 0, cls(group_id=group, topics=[
            topic(name="t", partitions=[part(partition_index=partition)])]))
        self._answers()

    @rule(ms=st.sampled_from([10, 60, 3_000, 11_000]))
    def advance(self, ms: int) -> None:
        self.h.advance(ms)
        self._answers()

    # -- the invariant ------------------------------------------------------------------

    @invariant()
    def replayed_state_is_the_live_state(self) -> None:
        live = self.h
        live.tick()  # timers due now fire first (a read at this time would fire them)
        self._answers()
        fresh = Harness(live.config, topics=TOPICS, now=live.now)
        for record in live.records:
            fresh.gc.apply(Record(record.key, record.value))
        assert observable(fresh) == expected_after_restart(live)
        assert [event_fields(e) for e in fresh.gc.events] == \
            [event_fields(e) for e in live.gc.events]


def _call(h: Harness, api_key: int, version: int, request: Any) -> Any:
    token = Token(0, api_key, version)
    outcome = h.gc.handle(api_key, version, request, Caller(token, "check", "127.0.0.1"), h.now)
    assert not outcome.records, "a read wrote records"
    ((answered, response),) = outcome.responses
    assert answered is token
    return response


def observable(h: Harness) -> dict[str, Any]:
    """What clients see of the durable state, through read-only requests."""
    listed = _call(h, 16, 5, request_class(16)(states_filter=[], types_filter=[]))
    ids = sorted(g.group_id for g in listed.groups)
    classic = sorted(g.group_id for g in listed.groups if g.group_type == "classic")
    out: dict[str, Any] = {
        "listed": sorted((g.group_id, g.group_type) for g in listed.groups),
        "described": describe_classic(h, classic),
        "consumer": [
            (g.group_id, g.error_code, g.group_epoch, g.assignment_epoch, g.assignor_name,
             [(m.member_id, m.member_epoch, m.subscribed_topic_names, m.assignment,
               m.target_assignment) for m in g.members])
            for g in _call(h, 69, 1, ConsumerDescribeRequest(
                group_ids=ids, include_authorized_operations=False)).groups
            if g.error_code == E.NONE
        ],
        "offsets": [
            (g.group_id, sorted((t.name, p.partition_index, p.committed_offset)
                                for t in g.topics for p in t.partitions))
            for g in _call(h, 9, 8, OffsetFetchRequest(groups=[
                OffsetFetchRequest.OffsetFetchRequestGroup(group_id=i, topics=None)
                for i in ids])).groups
        ],
        "paused": {
            i: [(t.name, [p.partition_index for p in t.partitions])
                for t in _call(h, 1002, 0, ListPausedRequest(group_id=i)).topics]
            for i in ids
        },
    }
    return out


def describe_classic(h: Harness, groups: list[str]) -> list[Any]:
    described = _call(h, 15, 5, request_class(15)(groups=groups,
                                                   include_authorized_operations=False))
    return [(g.group_id, g.group_state, g.protocol_type, g.protocol_data,
             [(m.member_id, m.group_instance_id, m.client_id, m.client_host, m.member_metadata,
               m.member_assignment) for m in g.members])
            for g in described.groups]


def expected_after_restart(live: Harness) -> dict[str, Any]:
    """What the live coordinator shows, with each classic group as its stored view: Stable
    with its members or Empty, as a restart loads it (checked against the live answer
    whenever the live group is itself at rest at its stored generation)."""
    out = observable(live)
    described = []
    for entry in out["described"]:
        group_id, state = entry[0], entry[1]
        group = live.gc.group(group_id)
        stored = group.persisted if group is not None else None
        if stored is None:
            view = (group_id, "Empty", "", "", [])
        elif stored.members:
            view = (group_id, "Stable", stored.protocol_type, stored.protocol or "",
                    [(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                      m.protocols[0][1], m.assignment) for m in stored.members])
        else:
            view = (group_id, "Empty", stored.protocol_type, "", [])
        if state in ("Stable", "Empty") and group.generation == (stored.generation if stored else 0):
            assert entry == view, "a group at rest shows its stored view"
        described.append(view)
    out["described"] = described
    return out


LiveEqualsReplay.TestCase.settings = settings(
    max_examples=120,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestLiveEqualsReplay = LiveEqualsReplay.TestCase


# -- requests that raise somewhere inside change nothing ----------------------------------


def _fault_points() -> list[tuple[Any, str]]:
    from kcsim.coordinator.consumer.groups import ConsumerGroups
    from kcsim.coordinator.groups.classic import ClassicGroup
    from kcsim.coordinator.groups.rebalance import Rebalancer
    from kcsim.coordinator.shared.deadlines import Deadlines
    from kcsim.coordinator.shared.runtime import GroupRuntime

    return [(GroupRuntime, "write"), (GroupRuntime, "respond"), (GroupRuntime, "park"),
            (GroupRuntime, "drop"), (Deadlines, "schedule"), (Deadlines, "cancel"),
            (ClassicGroup, "add"), (ClassicGroup, "remove"), (ClassicGroup, "transition_to"),
            (ClassicGroup, "take_join_waiter"), (ClassicGroup, "set_assignment"),
            (ClassicGroup, "await_sync"), (ClassicGroup, "update_member"),
            (Rebalancer, "complete_join"), (ConsumerGroups, "next_epoch"),
            (ConsumerGroups, "write_current"), (ConsumerGroups, "schedule_session")]


class Injected(RuntimeError):
    pass


class RaisingRequestsChangeNothing(LiveEqualsReplay):
    """The same clients; now and then a request's handler raises at some point inside (the
    nth call of any of many functions it goes through): it is answered UNKNOWN_SERVER_ERROR
    and the coordinator, soft state included, is exactly as before."""

    def __init__(self) -> None:
        super().__init__()
        self.armed: int | None = None
        real_handle = self.h.gc.handle

        def handle(api_key: int, version: int, request: Any, ctx: Any, now: int) -> Any:
            if self.armed is None:
                return real_handle(api_key, version, request, ctx, now)
            nth, self.armed = self.armed, None
            self.h._collect(self.h.gc.tick(now))  # what is due fires first, unfaulted
            before = state_dump.dump(self.h.gc)
            with _faults(self.h.gc, nth):
                outcome = real_handle(api_key, version, request, ctx, now)
            raised = [f.what for f in outcome.failures if isinstance(f.error, Injected)]
            if raised:
                event(f"a request raised: {raised[0]}")
                assert not outcome.records
                assert [t for t, _ in outcome.responses] == [ctx.token]
                assert state_dump.dump(self.h.gc) == before
            return outcome

        self.h.gc.handle = handle  # type: ignore[method-assign]

    @rule(data=st.data(), nth=st.integers(1, 12))
    def a_request_raises(self, data: st.DataObject, nth: int) -> None:
        """One client step whose request raises half-way."""
        self.armed = nth
        i = data.draw(st.integers(0, 2))
        step = data.draw(st.sampled_from(["classic", "leave", "consumer", "commit", "delete",
                                          "pause"]))
        if step == "classic":
            self.classic_step(i)
        elif step == "leave":
            self.classic_leave(i)
        elif step == "consumer":
            self.consumer_beat(i, ["t", "u"] if i else ["t"])
        elif step == "commit":
            self.member_commit(i, 42)
        elif step == "delete":
            self.delete_group(GROUPS[i % 2])
        else:
            self.pause_or_resume(GROUPS[i % 2], i, bool(i % 2))
        self.armed = None


class _faults:
    """Within the block, the nth call (made while a handler runs) of any fault point raises."""

    def __init__(self, gc: Any, nth: int) -> None:
        self.rt, self.nth, self.calls = gc._rt, nth, 0
        self.saved: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> None:
        for owner, name in _fault_points():
            original = owner.__dict__[name]
            self.saved.append((owner, name, original))
            setattr(owner, name, self._faulty(name, original))

    def _faulty(self, name: str, original: Any) -> Any:
        def faulty(*args: Any, **kwargs: Any) -> Any:
            if self.rt.journal.open:
                self.calls += 1
                if self.calls == self.nth:
                    raise Injected(name)
            return original(*args, **kwargs)

        return faulty

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in self.saved:
            setattr(owner, name, original)


RaisingRequestsChangeNothing.TestCase.settings = settings(
    max_examples=80,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestRaisingRequestsChangeNothing = RaisingRequestsChangeNothing.TestCase
