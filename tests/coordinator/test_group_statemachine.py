"""Random client behaviour against the coordinator: the group invariants always hold.

Clients (dynamic and static) join, sync (the leader assigns a 6-partition
topic round-robin), heartbeat, leave, commit, restart, and the clock jumps.
After every step: no partition is handed to two owners in one generation,
generations only grow, Empty groups have no members, and replaying every
record written so far into a fresh coordinator gives the same durable view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kcsim.coordinator import GroupConfig, GroupCoordinator
from kcsim.protocol.errors import ErrorCode as E
from kcsim.storage.records import Record

from .group_harness import Harness, Token, assignment, decode_assignment, subscription

GROUP = "g"
TOPIC = "t"
PARTITIONS = 6
RESET_ERRORS = {E.UNKNOWN_MEMBER_ID, E.FENCED_INSTANCE_ID}


@dataclass
class Client:
    name: str
    instance: str | None
    join_version: int = 9
    topics: tuple[str, ...] = (TOPIC,)
    member_id: str = ""
    generation: int = -1
    leader: bool = False
    members: list[str] = field(default_factory=list)
    join_token: Token | None = None
    sync_token: Token | None = None
    needs_join: bool = True
    synced: int = -1

    @property
    def busy(self) -> bool:
        return self.join_token is not None or self.sync_token is not None

    def owner(self) -> str:
        return self.instance or self.member_id

    def reset(self) -> None:
        self.member_id = ""
        self.generation = -1
        self.leader = False
        self.members = []
        self.needs_join = True


class GroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(
            GroupConfig(
                initial_rebalance_delay_ms=100,
                offsets_retention_ms=3_600_000,
                offsets_retention_check_interval_ms=60_000,
            ),
            topics={TOPIC: PARTITIONS},
        )
        self.clients = [
            Client("d0", None),
            Client("d1", None, join_version=3),
            Client("s0", "inst-0"),
            Client("s1", "inst-1", join_version=5),
        ]
        self.seen = 0
        # (group incarnation, generation) -> partition -> owner; a deleted and recreated
        # group starts counting generations again.
        self.owners: dict[tuple[Any, int], dict[int, str]] = {}
        self.last_generation: tuple[int, int] | None = None  # (id of the group object, generation)

    # -- responses ------------------------------------------------------------

    def _drain(self) -> None:
        order = self.h.order
        while self.seen < len(order):
            token = order[self.seen]
            self.seen += 1
            for client in self.clients:
                if client.join_token is token:
                    client.join_token = None
                    self._on_join(client, self.h.responses[token])
                elif client.sync_token is token:
                    client.sync_token = None
                    self._on_sync(client, self.h.responses[token])

    def _on_join(self, client: Client, r: Any) -> None:
        if r.error_code == E.NONE:
            client.member_id = r.member_id
            client.generation = r.generation_id
            client.leader = r.leader == r.member_id
            client.members = [m.member_id for m in r.members]
            client.needs_join = False
        elif r.error_code == E.MEMBER_ID_REQUIRED:
            client.member_id = r.member_id
        elif r.error_code in RESET_ERRORS:
            client.reset()

    def _on_sync(self, client: Client, r: Any) -> None:
        if r.error_code == E.NONE:
            incarnation = self.h.gc.group(GROUP)
            owners = self.owners.setdefault((incarnation, client.generation), {})
            for partition in decode_assignment(r.assignment).get(TOPIC, []) if r.assignment else []:
                holder = owners.setdefault(partition, client.owner())
                assert holder == client.owner(), (
                    f"partition {partition} of generation {client.generation} given to "
                    f"{holder} and {client.owner()}"
                )
            client.synced = client.generation
        elif r.error_code in RESET_ERRORS:
            client.reset()
        else:
            client.needs_join = True

    def _send_join(self, client: Client) -> None:
        client.join_token = self.h.join(
            GROUP,
            client.member_id,
            instance=client.instance,
            client_id=client.name,
            version=client.join_version,
            protocols=[("range", subscription(*client.topics))],
        )
        self._drain()

    def _sync(self, client: Client) -> None:
        plan = {}
        if client.leader and client.members:
            n = len(client.members)
            plan = {
                m: assignment({TOPIC: [p for p in range(PARTITIONS) if p % n == k]})
                for k, m in enumerate(client.members)
            }
        client.sync_token = self.h.sync(
            GROUP, client.member_id, client.generation, assignments=plan, instance=client.instance
        )
        self._drain()

    def _heartbeat(self, client: Client) -> None:
        r = self.h.heartbeat(GROUP, client.member_id, client.generation, instance=client.instance)
        if r.error_code in RESET_ERRORS:
            client.reset()
        elif r.error_code != E.NONE:
            client.needs_join = True
        self._drain()

    def _natural_step(self, client: Client) -> None:
        """What a well-behaved consumer does next: (re)join, sync, or heartbeat."""
        if client.busy:
            return
        if client.needs_join or not client.member_id:
            self._send_join(client)
        elif client.synced != client.generation:
            self._sync(client)
        else:
            self._heartbeat(client)

    # -- rules ---------------------------------------------------------------

    @rule(i=st.integers(0, 3))
    def step(self, i: int) -> None:
        self._natural_step(self.clients[i])

    @rule(ms=st.integers(0, 3_000))
    def everybody_steps(self, ms: int) -> None:
        for client in self.clients:
            self._natural_step(client)
        self.h.advance(ms)
        self._drain()

    @rule(i=st.integers(0, 3))
    def join(self, i: int) -> None:
        client = self.clients[i]
        if not client.busy:
            self._send_join(client)

    @rule(i=st.integers(0, 3))
    def change_subscription(self, i: int) -> None:
        """New metadata: the member rejoins and the group rebalances."""
        client = self.clients[i]
        client.topics = (TOPIC, "other") if client.topics == (TOPIC,) else (TOPIC,)
        if not client.busy and client.member_id:
            self._send_join(client)

    @rule(i=st.integers(0, 3))
    def sync(self, i: int) -> None:
        client = self.clients[i]
        if not client.busy and client.generation >= 0:
            self._sync(client)

    @rule(i=st.integers(0, 3))
    def heartbeat(self, i: int) -> None:
        client = self.clients[i]
        if not client.busy and client.member_id:
            self._heartbeat(client)

    @rule(i=st.integers(0, 3))
    def leave(self, i: int) -> None:
        client = self.clients[i]
        if client.busy or not client.member_id:
            return
        self.h.leave(GROUP, (client.member_id, client.instance))
        client.reset()
        self._drain()

    @rule(
        i=st.integers(0, 3), partition=st.integers(0, PARTITIONS - 1), offset=st.integers(0, 1000)
    )
    def commit(self, i: int, partition: int, offset: int) -> None:
        client = self.clients[i]
        if client.busy:
            return
        if client.member_id and client.generation >= 0:
            self.h.commit(
                GROUP,
                {(TOPIC, partition): offset},
                generation=client.generation,
                member_id=client.member_id,
                instance=client.instance,
            )
        else:
            self.h.commit(GROUP, {(TOPIC, partition): offset})
        self._drain()

    @rule(partition=st.integers(0, PARTITIONS - 1), offset=st.integers(0, 1000))
    def simple_commit_elsewhere(self, partition: int, offset: int) -> None:
        self.h.commit("simple", {(TOPIC, partition): offset})

    @precondition(lambda self: any(c.instance for c in self.clients))
    @rule(i=st.sampled_from([2, 3]))
    def static_restart(self, i: int) -> None:
        """A static member's process restarts: its connection (and parked requests) are gone."""
        client = self.clients[i]
        for token in (client.join_token, client.sync_token):
            if token is not None:
                self.h.gc.cancel(token)
        client.join_token = client.sync_token = None
        client.reset()
        self._send_join(client)

    @rule(ms=st.one_of(st.integers(0, 500), st.integers(0, 15_000)))
    def advance(self, ms: int) -> None:
        self.h.advance(ms)
        self._drain()

    @rule()
    def delete_offsets_and_groups(self) -> None:
        self.h.delete_offsets(GROUP, {TOPIC: [0]})
        self.h.delete_groups(GROUP, "simple")
        self._drain()

    # -- invariants ------------------------------------------------------------

    @invariant()
    def empty_groups_have_no_members(self) -> None:
        for name in self.h.gc.groups():
            group = self.h.gc.group(name)
            if group.state.value == "Empty":
                assert not group.members
            if group.members:
                assert group.leader_id in group.members
            else:
                assert group.leader_id is None
            assert group.awaiting_join_count == sum(
                m.join_waiter is not None for m in group.members.values()
            )

    @invariant()
    def generations_only_grow(self) -> None:
        group = self.h.gc.group(GROUP)
        if group is None:
            self.last_generation = None
            return
        if self.last_generation is not None and self.last_generation[0] == id(group):
            assert group.generation >= self.last_generation[1]
        self.last_generation = (id(group), group.generation)

    @invariant()
    def stable_assignments_are_disjoint(self) -> None:
        group = self.h.gc.group(GROUP)
        if group is None or group.state.value != "Stable":
            return
        taken: set[int] = set()
        for member in group.members.values():
            if member.assignment:
                mine = set(decode_assignment(member.assignment).get(TOPIC, []))
                assert not (mine & taken)
                taken |= mine

    @invariant()
    def stored_view_matches_the_live_group(self) -> None:
        for name in self.h.gc.groups():
            group = self.h.gc.group(name)
            stored = group.persisted
            if group.state.value == "Stable":
                assert stored is not None and stored.generation == group.generation
                assert [m.member_id for m in stored.members] == list(group.members)
            elif group.state.value == "Empty" and stored is not None:
                assert stored.members == []

    @invariant()
    def replay_gives_the_same_durable_view(self) -> None:
        fresh = GroupCoordinator(self.h.config, self.h.topics)
        for record in self.h.records:
            fresh.apply(Record(record.key, record.value))
        live = self.h.gc
        assert sorted(fresh.groups()) == sorted(live.groups())
        for name in live.groups():
            assert fresh.committed_offsets(name) == live.committed_offsets(name)
            stored = live.group(name).persisted
            replayed = fresh.group(name)
            if stored is None:
                assert replayed.state.value == "Empty" and not replayed.protocol_type
                continue
            assert (replayed.protocol_type or "") == stored.protocol_type
            assert replayed.generation == stored.generation
            assert replayed.protocol_name == stored.protocol
            assert replayed.leader_id == stored.leader
            assert list(replayed.members) == [m.member_id for m in stored.members]
            assert replayed.state.value == ("Stable" if stored.members else "Empty")


GroupMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestGroupMachine = GroupMachine.TestCase
