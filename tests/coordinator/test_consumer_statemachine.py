"""Rule-based test of a consumer group under pauses, churn and a fake clock.

Members join (dynamic or static), heartbeat acknowledging or ignoring revocations,
change subscriptions, leave, leave temporarily; partitions are paused and resumed;
time passes (sessions and rebalance time-outs expire); the coordinator restarts
from its log. Throughout: no partition is owned by two members, a paused partition
is in nobody's target and never gains an owner, a Stable group owns exactly the
assignable partitions, and replaying the log reproduces the durable state.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from .consumer_harness import Client, Harness, config
from .test_consumer_replay import durable

GROUP = "g"
TOPICS = {"t": 6, "u": 3}
SUBSCRIPTIONS = [["t"], ["u"], ["t", "u"]]
PARTITIONS = [(t, p) for t, n in TOPICS.items() for p in range(n)]


class ConsumerGroupMachine(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.h = Harness(config(consumer_group_session_timeout_ms=10_000), topics=TOPICS)
        self.clients: list[Client] = []
        self.instances = 0
        # paused partition -> the member holding it when it was paused (None: nobody)
        self.paused_owner: dict[tuple[str, int], str | None] = {}

    # -- helpers ----------------------------------------------------------------

    def group(self):  # type: ignore[no-untyped-def]
        return self.h.gc.consumer_group(GROUP)

    def owners(self) -> dict[tuple[str, int], str]:
        g = self.group()
        out: dict[tuple[str, int], str] = {}
        if g is None:
            return out
        for m in g.members.values():
            for assignment in (m.assigned, m.pending_revocation):
                for t, ps in assignment.items():
                    for p in ps:
                        key = (self.h.topics.topic_name(t), p)
                        assert key not in out, f"{key} owned by {out[key]} and {m.member_id}"
                        out[key] = m.member_id
        return out

    def forget_dead(self, client: Client) -> None:
        if client.last is not None and client.last.error_code != 0:
            self.clients.remove(client)

    # -- rules ------------------------------------------------------------------------

    @precondition(lambda self: len(self.clients) < 5)
    @rule(subscription=st.sampled_from(SUBSCRIPTIONS), static=st.booleans(),
          assignor=st.sampled_from([None, "uniform", "range"]))
    def join(self, subscription: list[str], static: bool, assignor: str | None) -> None:
        instance = None
        if static:
            self.instances += 1
            instance = f"i-{self.instances}"
        client = Client(self.h, GROUP, subscription, instance=instance, assignor=assignor)
        assert client.join().error_code == 0
        self.clients.append(client)

    @precondition(lambda self: self.clients)
    @rule(data=st.data(), ack=st.booleans())
    def heartbeat(self, data: st.DataObject, ack: bool) -> None:
        client = data.draw(st.sampled_from(self.clients))
        client.beat(ack=ack)
        self.forget_dead(client)

    @precondition(lambda self: self.clients)
    @rule(data=st.data(), subscription=st.sampled_from(SUBSCRIPTIONS))
    def resubscribe(self, data: st.DataObject, subscription: list[str]) -> None:
        client = data.draw(st.sampled_from(self.clients))
        client.subscribe(subscription)
        self.forget_dead(client)

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        client = data.draw(st.sampled_from(self.clients))
        client.leave()
        self.clients.remove(client)

    @precondition(lambda self: any(c.instance for c in self.clients))
    @rule(data=st.data())
    def leave_for_a_while(self, data: st.DataObject) -> None:
        client = data.draw(st.sampled_from([c for c in self.clients if c.instance]))
        client.leave(-2)  # refused when its session already expired
        self.clients.remove(client)

    @rule(partitions=st.sets(st.sampled_from(PARTITIONS), min_size=1, max_size=3))
    def pause(self, partitions: set[tuple[str, int]]) -> None:
        if not self.h.gc.groups():
            self.h.commit(GROUP, {("t", 0): 0})  # the group must exist to be paused
        owners = self.owners()
        by_topic: dict[str, list[int]] = {}
        for t, p in partitions:
            by_topic.setdefault(t, []).append(p)
            if (t, p) not in self.paused_owner:
                self.paused_owner[(t, p)] = owners.get((t, p))
        assert self.h.pause(GROUP, by_topic).error_code == 0

    @precondition(lambda self: self.paused_owner)
    @rule(data=st.data())
    def resume(self, data: st.DataObject) -> None:
        chosen = data.draw(st.sets(st.sampled_from(sorted(self.paused_owner)), min_size=1))
        by_topic: dict[str, list[int]] = {}
        for t, p in chosen:
            by_topic.setdefault(t, []).append(p)
            del self.paused_owner[(t, p)]
        assert self.h.resume(GROUP, by_topic).error_code == 0

    @rule(ms=st.sampled_from([200, 4_000, 11_000, 31_000]))
    def time_passes(self, ms: int) -> None:
        self.h.advance(ms)

    @rule()
    def restart(self) -> None:
        before = durable(self.h.gc)
        self.h.restart()
        assert durable(self.h.gc) == before

    # -- invariants ---------------------------------------------------------------------

    @invariant()
    def one_owner_per_partition_and_the_index_agrees(self) -> None:
        owners = self.owners()
        g = self.group()
        if g is None:
            return
        indexed = {(self.h.topics.topic_name(t), p): m
                   for t, ps in g.owners.items() for p, m in ps.items()}
        assert indexed == owners

    @invariant()
    def paused_partitions_are_in_no_target_and_gain_no_owner(self) -> None:
        g = self.group()
        if g is None:
            return
        paused = {(t, p) for t, ps in self.h.gc.paused_partitions(GROUP).items() for p in ps}
        assert paused == set(self.paused_owner)
        for member_id, target in g.target.items():
            if g.members.get(member_id) is None:
                continue
            for t, ps in target.items():
                for p in ps:
                    assert (self.h.topics.topic_name(t), p) not in paused
        owners = self.owners()
        for key in paused:
            holder = owners.get(key)
            assert holder is None or holder == self.paused_owner[key], \
                f"paused {key} went from {self.paused_owner[key]} to {holder}"
            if holder is None:
                self.paused_owner[key] = None

    @invariant()
    def a_stable_group_owns_exactly_the_assignable_partitions(self) -> None:
        g = self.group()
        if g is None or self.h.gc.group_state(GROUP) != "Stable":
            return
        subscribed = {t for m in g.members.values() for t in m.subscribed_topic_names}
        assignable = {(t, p) for t in subscribed for p in range(TOPICS[t])} - set(self.paused_owner)
        owners = self.owners()
        assert set(owners) == assignable
        assert all(not m.pending_revocation for m in g.members.values())

    @invariant()
    def replay_reproduces_the_durable_state(self) -> None:
        assert durable(self.h.replayed()) == durable(self.h.gc)


ConsumerGroupMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestConsumerGroupMachine = ConsumerGroupMachine.TestCase
