"""A KIP-848 consumer group and its members, as Kafka's ConsumerGroup keeps them.

Everything here is durable state rebuilt by the record fold, plus indexes the
fold maintains so that no request scans the whole group: who owns each
partition (assigned or pending revocation), which topics are subscribed by
name or by regular expression, and which server assignors members prefer.
Assignments are `{topic id: frozenset(partitions)}` and never mutated in place.
"""

from __future__ import annotations

import uuid
from enum import Enum, IntEnum

Assignment = dict[uuid.UUID, frozenset[int]]
# What a member record holds: instance, rack, client id and host, topic names, regex,
# assignor, rebalance time-out.
Subscription = tuple[
    str | None, str | None, str, str, frozenset[str], str | None, str | None, int
]
# What a current-assignment record holds: epoch, previous epoch, state, assigned, revoking.
Current = tuple[int, int, "MemberState", Assignment, Assignment]

EMPTY: Assignment = {}
LEAVE_GROUP_EPOCH = -1
LEAVE_GROUP_STATIC_EPOCH = -2


def in_topic_order(assignment: Assignment) -> list[tuple[uuid.UUID, list[int]]]:
    """The assignment's topics in the order Kafka lists them (by topic id), each with its
    partitions sorted: how its records and every response showing it list it."""
    return [(t, sorted(ps)) for t, ps in sorted(assignment.items(), key=lambda kv: kv[0].bytes)]


class MemberState(IntEnum):
    """Where a member is in reconciling towards its target (Kafka's MemberState)."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127

    @classmethod
    def of(cls, value: int) -> MemberState:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


class GroupState(Enum):
    __hash__ = object.__hash__  # identity, in C: see shared.states.GroupState

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class ConsumerMember:
    """One member: its subscription (member record) and its current assignment."""

    __slots__ = (
        "assigned",
        "client_host",
        "client_id",
        "instance_id",
        "member_epoch",
        "member_id",
        "pending_revocation",
        "previous_member_epoch",
        "rack_id",
        "rebalance_timeout_ms",
        "server_assignor",
        "state",
        "subscribed_topic_names",
        "subscribed_topic_regex",
    )

    def __init__(self, member_id: str) -> None:
        self.member_id = member_id
        self.instance_id: str | None = None
        self.rack_id: str | None = None
        self.client_id = ""
        self.client_host = ""
        self.subscribed_topic_names: frozenset[str] = frozenset()
        self.subscribed_topic_regex: str | None = None
        self.server_assignor: str | None = None
        self.rebalance_timeout_ms = -1
        self.member_epoch = 0
        self.previous_member_epoch = 0
        self.state = MemberState.STABLE
        self.assigned: Assignment = EMPTY
        self.pending_revocation: Assignment = EMPTY

    def copy(self, member_id: str | None = None) -> ConsumerMember:
        other = ConsumerMember(self.member_id if member_id is None else member_id)
        for name in self.__slots__:
            if name != "member_id":
                setattr(other, name, getattr(self, name))
        return other

    def subscription(self) -> Subscription:
        """What the member record holds; equal tuples mean no record needs writing."""
        return (
            self.instance_id,
            self.rack_id,
            self.client_id,
            self.client_host,
            self.subscribed_topic_names,
            self.subscribed_topic_regex,
            self.server_assignor,
            self.rebalance_timeout_ms,
        )

    def current(self) -> Current:
        """What the current-assignment record holds."""
        return (
            self.member_epoch,
            self.previous_member_epoch,
            self.state,
            self.assigned,
            self.pending_revocation,
        )

    def is_reconciled_to(self, target_epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == target_epoch


class ConsumerGroup:
    __slots__ = (
        "assignment_epoch",
        "assignment_timestamp",
        "assignor_counts",
        "group_epoch",
        "group_id",
        "members",
        "metadata_hash",
        "owners",
        "regex_counts",
        "regex_refreshed_at",
        "resolved_regex",
        "static_members",
        "subscribed_names",
        "target",
    )

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        # When the target was last computed (0: never, or since the group emptied): the
        # next is due an assignment interval later (Kafka 4.3+).
        self.assignment_timestamp = 0
        self.metadata_hash = 0
        self.members: dict[str, ConsumerMember] = {}
        self.static_members: dict[str, str] = {}
        self.target: dict[str, Assignment] = {}
        # topic id -> partition -> the member holding it (assigned or pending revocation)
        self.owners: dict[uuid.UUID, dict[int, str]] = {}
        self.subscribed_names: dict[str, int] = {}
        self.regex_counts: dict[str, int] = {}
        self.assignor_counts: dict[str, int] = {}
        # Soft state: each regex's matching topics, re-resolved on a schedule.
        self.resolved_regex: dict[str, frozenset[str]] = {}
        self.regex_refreshed_at: int | None = None

    # -- state --------------------------------------------------------------

    @property
    def state(self) -> GroupState:
        if not self.members:
            return GroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return GroupState.ASSIGNING
        epoch = self.assignment_epoch
        for member in self.members.values():
            if not member.is_reconciled_to(epoch):
                return GroupState.RECONCILING
        return GroupState.STABLE

    def owner(self, topic_id: uuid.UUID, partition: int) -> str | None:
        partitions = self.owners.get(topic_id)
        return None if partitions is None else partitions.get(partition)

    def preferred_assignor(self, enabled: tuple[str, ...]) -> str | None:
        """The server assignor most members ask for (ties go to the configured order)."""
        best, best_count = None, 0
        for name in enabled:
            count = self.assignor_counts.get(name, 0)
            if count > best_count:
                best, best_count = name, count
        return best

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def subscribed_topics(self) -> set[str]:
        """Topic names subscribed by name or through a resolved regular expression."""
        topics = set(self.subscribed_names)
        for regex in self.regex_counts:
            topics.update(self.resolved_regex.get(regex, ()))
        return topics

    def member_topics(self, member: ConsumerMember) -> set[str]:
        topics = set(member.subscribed_topic_names)
        if member.subscribed_topic_regex is not None:
            topics.update(self.resolved_regex.get(member.subscribed_topic_regex, ()))
        return topics

    def with_member(self, old: ConsumerMember | None, new: ConsumerMember | None) -> ConsumerGroup:
        """A copy of the group with one member added, changed or removed, indexes and all:
        the group as records a call has written will make it, before they are folded in.

        Members, targets and owners are shared with this group, so the copy is for reading
        (and for further `with_member` steps), never for the fold."""
        view = ConsumerGroup(self.group_id)
        view.group_epoch = self.group_epoch
        view.assignment_epoch = self.assignment_epoch
        view.assignment_timestamp = self.assignment_timestamp
        view.metadata_hash = self.metadata_hash
        view.members = dict(self.members)
        view.static_members = dict(self.static_members)
        view.target = dict(self.target)
        view.owners = self.owners
        view.subscribed_names = dict(self.subscribed_names)
        view.regex_counts = dict(self.regex_counts)
        view.assignor_counts = dict(self.assignor_counts)
        view.resolved_regex = dict(self.resolved_regex)
        view.regex_refreshed_at = self.regex_refreshed_at
        if old is not None:
            view.set_subscription(old, None)
            del view.members[old.member_id]
            if new is None or new.member_id != old.member_id:
                view.target.pop(old.member_id, None)
        if new is not None:
            view.set_subscription(ConsumerMember(new.member_id), new)
            view.members[new.member_id] = new
        return view

    # -- the fold's mutations --------------------------------------------------

    def set_subscription(self, member: ConsumerMember, new: ConsumerMember | None) -> None:
        """Move the subscription indexes from `member`'s old values to `new`'s (None: gone)."""
        _count(self.subscribed_names, member.subscribed_topic_names, -1)
        _count(self.regex_counts, _opt(member.subscribed_topic_regex), -1)
        _count(self.assignor_counts, _opt(member.server_assignor), -1)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member.member_id:
            del self.static_members[member.instance_id]
        if new is not None:
            _count(self.subscribed_names, new.subscribed_topic_names, 1)
            _count(self.regex_counts, _opt(new.subscribed_topic_regex), 1)
            _count(self.assignor_counts, _opt(new.server_assignor), 1)
            if new.instance_id is not None:
                self.static_members[new.instance_id] = new.member_id
        for regex in list(self.resolved_regex):
            if regex not in self.regex_counts:
                del self.resolved_regex[regex]

    def release(self, member: ConsumerMember) -> None:
        """Forget who owned the member's partitions (assigned and pending revocation)."""
        for assignment in (member.assigned, member.pending_revocation):
            for topic_id, partitions in assignment.items():
                owned = self.owners.get(topic_id)
                if owned is None:
                    continue
                for p in partitions:
                    if owned.get(p) == member.member_id:
                        del owned[p]
                if not owned:
                    del self.owners[topic_id]

    def claim(self, member: ConsumerMember) -> None:
        """Record the member as owner of its partitions; a second owner is a coordinator bug."""
        for assignment in (member.assigned, member.pending_revocation):
            for topic_id, partitions in assignment.items():
                owned = self.owners.setdefault(topic_id, {})
                for p in partitions:
                    holder = owned.get(p)
                    if holder is not None and holder != member.member_id:
                        raise RuntimeError(
                            f"group {self.group_id}: partition {topic_id}-{p} is owned by "
                            f"{holder}, cannot give it to {member.member_id}"
                        )
                    owned[p] = member.member_id


def _opt(value: str | None) -> tuple[str, ...]:
    return () if value is None else (value,)


def _count(counts: dict[str, int], keys: tuple[str, ...] | frozenset[str], delta: int) -> None:
    for key in keys:
        n = counts.get(key, 0) + delta
        if n > 0:
            counts[key] = n
        else:
            counts.pop(key, None)

