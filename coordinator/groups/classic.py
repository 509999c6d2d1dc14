"""The classic group and its members, as Kafka's ClassicGroup keeps them.

A group holds its members, its static-member index, the members a rebalance
still waits for, and the protocol votes. Pending requests (a parked JoinGroup
or SyncGroup) are held as `Waiter`s on the member they belong to. Nothing here
knows about time or I/O: callers pass `now_ms` where a timestamp is recorded.

Every change goes through a method here, which first lets the journal keep a
before-image of what it changes (the group, or one member): a handler that
raises half-way leaves the group as it found it.
"""

from __future__ import annotations

from operator import attrgetter, itemgetter
from sys import intern
from typing import TYPE_CHECKING, TypeVar

from ..shared.journal import set_add, set_discard, set_update
from .state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    GroupState,
    can_rebalance,
    check_transition,
)
from .subscription import union_of_subscriptions

if TYPE_CHECKING:
    from kcsim.coordinator.records import GroupMetadataValue

    from ..shared.journal import Journal
    from ..shared.runtime import Waiter
    from ..shared.timers import TimerKey

CONSUMER_PROTOCOL_TYPE = "consumer"

Protocols = list[tuple[str, bytes]]  # (protocol name, metadata) in the member's preference order


class Member:
    # Slots are laid out in this order: what DescribeGroups reads comes first, so
    # describing a member touches one cache line of it.
    __slots__ = (  # noqa: RUF023
        "member_id",
        "group_instance_id",
        "client_id",
        "client_host",
        "_selected_name",
        "_selected_metadata",
        "assignment",
        "_protocols",
        "protocol_names",
        "protocol_type",
        "is_new",
        "join_waiter",
        "sync_waiter",
        "rebalance_timeout_ms",
        "session_timeout_ms",
        "timer_key",
        "journaled",
    )

    def __init__(
        self,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Protocols,
        assignment: bytes = b"",
    ) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        # Strings many members share are kept once: fewer objects for a sweep over
        # thousands of groups (ListGroups, DescribeGroups) to touch.
        self.client_id = intern(client_id)
        self.client_host = intern(client_host)
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = intern(protocol_type)
        self.protocols = protocols
        self.assignment = assignment
        self.join_waiter: Waiter | None = None
        self.sync_waiter: Waiter | None = None
        self.is_new = False
        self.journaled = 0  # the journal's call that last saved this member
        self.timer_key: TimerKey | None = None  # its session timer's key, once made

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def awaiting_join(self) -> bool:
        return self.join_waiter is not None

    @property
    def protocols(self) -> Protocols:
        return self._protocols

    @protocols.setter
    def protocols(self, protocols: Protocols) -> None:
        self._protocols = protocols
        # Each name once, however often the join lists it (what the group counts). A tuple
        # of strings: the collector stops tracking it, where a set would stay tracked in
        # every member of every group.
        self.protocol_names = tuple(dict.fromkeys(map(_first, protocols)))
        self._selected_name: str | None = None
        self._selected_metadata = b""

    def metadata(self, protocol_name: str | None) -> bytes:
        # The last answer is kept on the member: describing thousands of groups then
        # reads no protocol list.
        if protocol_name is self._selected_name and protocol_name is not None:
            return self._selected_metadata
        for name, metadata in self._protocols:
            if name == protocol_name:
                self._selected_name = protocol_name
                self._selected_metadata = metadata
                return metadata
        raise ValueError(f"member {self.member_id} does not support protocol {protocol_name!r}")

    def matches(self, protocols: Protocols) -> bool:
        return protocols == self.protocols

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def has_satisfied_heartbeat(self) -> bool:
        """Members parked in a rebalance count as alive, except new ones (stale joins)."""
        if self.is_new:
            return False
        return self.join_waiter is not None or self.sync_waiter is not None

    # -- undo: the journal puts back its before-image (`_MEMBER_CHANGES`) --------------

    def restore(self, image: object) -> None:
        assert isinstance(image, tuple)
        for name, value in zip(_MEMBER_CHANGES, image):
            setattr(self, name, value)


_MEMBER_CHANGES = (
    "_protocols",
    "protocol_names",
    "_selected_metadata",
    "_selected_name",
    "assignment",
    "is_new",
    "join_waiter",
    "rebalance_timeout_ms",
    "session_timeout_ms",
    "sync_waiter",
)
_member_fields = attrgetter(*_MEMBER_CHANGES)
_first = itemgetter(0)

# What a call may change of a group's own fields: its before-image. The collections note
# each change instead (`_put`, `_pop`, `_include`, `_exclude`), so a call costs the same
# in a group of 1 or 1,000 members.
_GROUP_CHANGES = (
    "state", "previous_state", "state_timestamp", "protocol_type", "protocol_name",
    "generation", "leader_id", "awaiting_join_count", "subscribed_topics",
    "new_member_added", "from_log",
)
_group_fields = attrgetter(*_GROUP_CHANGES)

K = TypeVar("K")
V = TypeVar("V")
_ABSENT = object()  # a key that was not in its table


# Noted straight into the journal's steps, which calls it unchecked: any table will do.
def _put_back(table: dict[object, object], key: object, old: object) -> None:
    """Undo of `_put`: the key's old value, or no key (a key added last is popped from the
    end, so the table's order is as it was)."""
    if old is _ABSENT:
        table.pop(key, None)
    else:
        table[key] = old


def _refill(table: dict[K, V], before: dict[K, V]) -> None:
    """Undo of `_pop`: the table as it was, in its order."""
    table.clear()
    table.update(before)


class ClassicGroup:
    # Slots are laid out in this order: what ListGroups and DescribeGroups read
    # comes first, so a sweep over thousands of groups touches one line of each.
    # The spare slots size a group (232 bytes on CPython 3.11) out of the allocator's
    # 208-byte class, where the shell's coroutines come and go with every request:
    # sharing it, groups created while requests park land scattered among freed
    # coroutines, and a sweep reads them out of address order (ListGroups of 10,000
    # groups took half as long again).
    __slots__ = (  # noqa: RUF023
        "state",
        "protocol_type",
        "protocol_name",
        "_member_list",
        "members",
        "group_id",
        "generation",
        "leader_id",
        "awaiting_join_count",
        "new_member_added",
        "pending_join",
        "pending_sync",
        "persisted",
        "from_log",
        "previous_state",
        "protocol_support",
        "state_timestamp",
        "static_members",
        "subscribed_topics",
        "journaled",
        "_journal",
        "_spare1",
        "_spare2",
        "_spare3",
        "_spare4",
    )

    def __init__(
        self,
        group_id: str,
        now_ms: int,
        state: GroupState = EMPTY,
        generation: int = 0,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        leader_id: str | None = None,
        state_timestamp: int | None = None,
        journal: Journal | None = None,
        from_log: bool = False,
    ) -> None:
        self._journal = journal
        self.journaled = 0  # the journal's call that last saved this group
        # Built by the fold from records and not changed by a request since: a later
        # record for the group rebuilds it rather than moving its durable view.
        self.from_log = from_log
        self.group_id = group_id
        self.state = state
        self.previous_state = DEAD
        self.state_timestamp: int | None = now_ms if state_timestamp is None else state_timestamp
        self.protocol_type = protocol_type
        self.protocol_name = protocol_name
        self.generation = generation
        self.leader_id = leader_id
        self.members: dict[str, Member] = {}
        self._member_list: tuple[Member, ...] | None = ()  # members in join order, kept at hand
        self.static_members: dict[str, str] = {}
        self.pending_join: set[str] = set()
        self.pending_sync: set[str] = set()
        self.awaiting_join_count = 0
        self.protocol_support: dict[str, int] = {}
        # None: unknown (not a consumer group, or its subscriptions could not be parsed)
        self.subscribed_topics: frozenset[str] | None = None
        self.new_member_added = False
        # The last GroupMetadataValue written for this group (None: never written).
        self.persisted: GroupMetadataValue | None = None

    # -- changes and the journal ----------------------------------------------

    def _changing(self, member: Member | None = None) -> None:
        """Before any change: the journal keeps what it may overwrite, once per call."""
        journal = self._journal
        if journal is not None and journal.open:
            call = journal.call
            if self.journaled != call:  # `Journal.save`, inline: every request comes here
                self.journaled = call
                journal.steps.append((_restore_group, self, _group_fields(self)))
            if member is not None and member.journaled != call:
                member.journaled = call
                journal.steps.append((_restore_member, member, _member_fields(member)))
        self.from_log = False

    def _changing_sets(self) -> None:
        """Before a change only to the group's sets (each noting its own undo step): no
        field of the group moves, so no before-image is needed, unless the fold built
        the group and this is the first change a request makes to it."""
        if self.from_log:
            self._changing()

    def _set_member(self, member: Member, field: str, value: object) -> None:
        """Change one field of `member`, noting only that field's old value (unless the
        member's whole before-image is kept in this call already), and not the group's
        (unless the fold built the group, as in `_changing_sets`)."""
        journal = self._journal
        if journal is not None and journal.open and member.journaled != journal.call:
            journal.steps.append((setattr, member, field, getattr(member, field)))
        setattr(member, field, value)
        if self.from_log:
            self._changing()

    def restore(self, image: object) -> None:
        assert isinstance(image, tuple)
        for name, value in zip(_GROUP_CHANGES, image):
            setattr(self, name, value)
        # Derived from the members, which their own undo steps (noted after this image,
        # so undone before it) have put back already.
        self._member_list = None  # rebuilt when next asked
        support: dict[str, int] = {}
        for member in self.members.values():
            for name in member.protocol_names:
                support[name] = support.get(name, 0) + 1
        self.protocol_support = support

    def _put(self, table: dict[K, V], key: K, value: V) -> None:
        journal = self._journal
        if journal is not None and journal.open:
            journal.steps.append((_put_back, table, key, table.get(key, _ABSENT)))
        table[key] = value

    def _pop(self, table: dict[K, V], key: K) -> V | None:
        journal = self._journal
        if journal is not None and journal.open and key in table:
            # The table as it was, in its order: copied once in a call, however many
            # members it removes (a LeaveGroup of them all).
            journal.keep_once(table, _refill, table, dict(table))
        return table.pop(key, None)

    def _include(self, members: set[str], member_id: str) -> None:
        journal = self._journal
        if journal is not None and journal.open and member_id not in members:
            journal.steps.append((set_discard, members, member_id))
        members.add(member_id)

    def _exclude(self, members: set[str], member_id: str) -> None:
        journal = self._journal
        if journal is not None and journal.open and member_id in members:
            journal.steps.append((set_add, members, member_id))
        members.discard(member_id)

    # -- state ------------------------------------------------------------

    def transition_to(self, target: GroupState, now_ms: int) -> None:
        check_transition(self.group_id, self.state, target)
        self._changing()
        self.previous_state = self.state
        self.state = target
        self.state_timestamp = now_ms

    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    # -- membership -------------------------------------------------------

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id is not None and self.leader_id == member_id

    def add(self, member: Member, join_waiter: Waiter | None = None) -> None:
        self._changing()
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise RuntimeError(
                    f"static member {member.group_instance_id} is already in group {self.group_id}"
                )
            self._put(self.static_members, member.group_instance_id, member.member_id)
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type:
            raise RuntimeError("the group and member protocol types must be the same")
        if self.leader_id is None:
            self.leader_id = member.member_id
        self._put(self.members, member.member_id, member)
        self._member_list = None
        self._count_protocols(member, 1)
        member.join_waiter = join_waiter
        if join_waiter is not None:
            self.awaiting_join_count += 1
        if member.member_id in self.pending_join:
            self._exclude(self.pending_join, member.member_id)

    def remove(self, member_id: str) -> Member | None:
        self._changing()
        removed = self._pop(self.members, member_id)
        if removed is not None:
            self._member_list = None
            self._count_protocols(removed, -1)
            if removed.join_waiter is not None:
                self.awaiting_join_count -= 1
            if removed.group_instance_id is not None:
                self._pop(self.static_members, removed.group_instance_id)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        if member_id in self.pending_join:
            self._exclude(self.pending_join, member_id)
        if member_id in self.pending_sync:
            self._exclude(self.pending_sync, member_id)
        return removed

    def update_member(
        self,
        member: Member,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        join_waiter: Waiter | None,
    ) -> None:
        self._changing(member)
        self._count_protocols(member, -1)
        member.protocols = protocols
        self._count_protocols(member, 1)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if join_waiter is not None and member.join_waiter is None:
            self.awaiting_join_count += 1
        elif join_waiter is None and member.join_waiter is not None:
            self.awaiting_join_count -= 1
        member.join_waiter = join_waiter

    def take_join_waiter(self, member: Member) -> Waiter | None:
        """Detach a member's parked JoinGroup so it can be answered."""
        waiter = member.join_waiter
        if waiter is not None:
            self._changing(member)
            member.join_waiter = None
            self.awaiting_join_count -= 1
        return waiter

    def take_sync_waiter(self, member: Member) -> Waiter | None:
        waiter = member.sync_waiter
        if waiter is not None:
            self._set_member(member, "sync_waiter", None)
        return waiter

    def park_sync(self, member: Member, waiter: Waiter) -> None:
        """The member's SyncGroup waits for the leader's assignment."""
        self._set_member(member, "sync_waiter", waiter)

    def set_assignment(self, member: Member, assignment: bytes) -> None:
        self._set_member(member, "assignment", assignment)

    def mark_joined(self, member: Member) -> None:
        """The member got its first JoinGroup answer: from now on its heartbeats count."""
        if member.is_new:
            self._set_member(member, "is_new", False)

    def note_new_member(self, added: bool) -> None:
        """Whether a member arrived during the initial rebalance delay (which then extends)."""
        if self.new_member_added != added:
            self._changing()
            self.new_member_added = added

    def await_sync(self, member_id: str) -> None:
        self._changing_sets()
        self._include(self.pending_sync, member_id)

    def synced(self, member_id: str) -> None:
        if member_id in self.pending_sync:
            self._changing_sets()
            self._exclude(self.pending_sync, member_id)

    def clear_pending_sync(self) -> None:
        if self.pending_sync:
            self._changing_sets()
            journal = self._journal
            if journal is not None and journal.open:
                journal.steps.append((set_update, self.pending_sync, set(self.pending_sync)))
            self.pending_sync.clear()

    def replace_static_member(
        self, group_instance_id: str, old_member_id: str, new_member_id: str
    ) -> tuple[Member, Member]:
        """Give a static member a new member id, keeping all else (Kafka's replaceStaticMember).

        Returns (old, new); the caller fences the old member's parked requests.
        """
        self._changing()
        old = self._pop(self.members, old_member_id)
        assert old is not None, old_member_id
        new = Member(
            new_member_id,
            old.group_instance_id,
            old.client_id,
            old.client_host,
            old.rebalance_timeout_ms,
            old.session_timeout_ms,
            old.protocol_type,
            old.protocols,
            old.assignment,
        )
        self._put(self.members, new_member_id, new)
        self._member_list = None
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self._put(self.static_members, group_instance_id, new_member_id)
        return old, new

    def member_list(self) -> tuple[Member, ...]:
        """The members in join order as one tuple (describing thousands of groups reads
        one object per group instead of a dict and its table)."""
        members = self._member_list
        if members is None:
            members = self._member_list = tuple(self.members.values())
        return members

    def add_pending_member(self, member_id: str) -> None:
        if member_id in self.members:
            raise RuntimeError(f"{member_id} is already a member of group {self.group_id}")
        self._changing_sets()
        self._include(self.pending_join, member_id)

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_join

    def static_member_id(self, group_instance_id: str) -> str | None:
        return self.static_members.get(group_instance_id)

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.awaiting_join_count and not self.pending_join

    def not_yet_rejoined(self) -> list[Member]:
        return [m for m in self.members.values() if m.join_waiter is None]

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else pick a member that did; False if nobody did."""
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.join_waiter is not None:
            return True
        for member in self.members.values():
            if member.join_waiter is not None:
                self._changing()
                self.leader_id = member.member_id
                return True
        return False

    # -- protocols --------------------------------------------------------

    def _count_protocols(self, member: Member, delta: int) -> None:
        """Each member counts once per protocol name, however often its join lists it: a
        name repeated would otherwise count past the group's size and match no member."""
        support = self.protocol_support
        for name in member.protocol_names:
            count = support.get(name, 0) + delta
            if count:
                support[name] = count
            else:  # no member supports it: gone, as `restore` rebuilds the counts
                del support[name]
        # No undo step: every caller changed the group first (`_changing`), and putting
        # its before-image back counts the members' protocols again (`restore`).

    def supports_protocols(self, protocol_type: str, protocol_names: set[str]) -> bool:
        if self.state is EMPTY:
            return bool(protocol_type) and bool(protocol_names)
        if self.protocol_type != protocol_type:
            return False
        size = len(self.members)
        support = self.protocol_support
        return any(support.get(name, 0) == size for name in protocol_names)

    def select_protocol(self) -> str:
        """The protocol every member supports with the most first-choice votes."""
        if not self.members:
            raise RuntimeError(f"cannot select a protocol for empty group {self.group_id}")
        size = len(self.members)
        candidates = {name for name, count in self.protocol_support.items() if count == size}
        votes: dict[str, int] = {}
        for member in self.members.values():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        best, best_votes = None, -1
        for name, count in votes.items():
            if count > best_votes:
                best, best_votes = name, count
        assert best is not None
        return best

    def init_next_generation(self, now_ms: int) -> None:
        self._changing()
        self.generation += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(EMPTY, now_ms)
        self.clear_pending_sync()

    def compute_subscribed_topics(self) -> frozenset[str] | None:
        """Kafka's computeSubscribedTopics: None unless a consumer group with parsable metadata."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return frozenset()
        name = self.protocol_name
        if name is None:
            return None
        try:
            metadatas = [m.metadata(name) for m in self.members.values()]
        except ValueError:
            return None
        return union_of_subscriptions(metadatas)

    def is_subscribed_to_topic(self, topic: str) -> bool:
        if self.subscribed_topics is not None:
            return topic in self.subscribed_topics
        return self.uses_consumer_protocol()

    def can_rebalance(self) -> bool:
        return can_rebalance(self.state)

    def in_initial_rebalance(self) -> bool:
        """The group's first join phase (from Empty), which group.initial.rebalance.delay.ms
        holds open while members keep arriving."""
        return self.state is PREPARING_REBALANCE and self.previous_state is EMPTY


# Undo functions of before-images, unbound: a step names the object as its first argument.
_restore_group = ClassicGroup.restore
_restore_member = Member.restore
