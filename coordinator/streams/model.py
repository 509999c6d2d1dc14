"""A streams group and its members, as Kafka's StreamsGroup keeps them.

Durable state rebuilt by the record fold (`fold.py`), plus the one index the fold
keeps so that no heartbeat scans the group: who owns each active task (assigned or
pending revocation). A task is (subtopology id, partition); a member's tasks are
`Tasks`, `{subtopology id: frozenset(partitions)}`, never mutated in place, and its
three kinds of task (active, standby, warm-up) travel together as a `TaskTuple`.
"""

from __future__ import annotations

from enum import Enum, IntEnum
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kcsim.coordinator.records import StreamsGroupTopologyValue

Tasks = dict[str, frozenset[int]]
Task = tuple[str, int]

NO_TASKS: Tasks = {}
LEAVE_GROUP_EPOCH = -1
LEAVE_GROUP_STATIC_EPOCH = -2


class TaskTuple(NamedTuple):
    active: Tasks
    standby: Tasks
    warmup: Tasks

    def is_empty(self) -> bool:
        return not (self.active or self.standby or self.warmup)


EMPTY_TASKS = TaskTuple(NO_TASKS, NO_TASKS, NO_TASKS)


def in_task_order(tasks: Tasks) -> list[tuple[str, list[int]]]:
    """Subtopologies by id, each with its partitions sorted: how records and answers list them."""
    return [(s, sorted(ps)) for s, ps in sorted(tasks.items()) if ps]


def task_list(tasks: Tasks) -> list[Task]:
    return [(s, p) for s, ps in in_task_order(tasks) for p in ps]


class MemberState(IntEnum):
    """Where a member is in reconciling towards its target (Kafka's streams MemberState)."""

    STABLE = 0
    UNREVOKED_TASKS = 1
    UNRELEASED_TASKS = 2
    UNKNOWN = 127  # any state a newer coordinator wrote: MemberState(9) is UNKNOWN

    @classmethod
    def _missing_(cls, value: object) -> MemberState:
        return cls.UNKNOWN


class GroupState(Enum):
    __hash__ = object.__hash__  # identity, in C: see shared.states.GroupState

    EMPTY = "Empty"
    NOT_READY = "NotReady"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class StreamsMember:
    """One member: its metadata (member record) and its current assignment."""

    __slots__ = (
        "assigned",
        "client_host",
        "client_id",
        "client_tags",
        "instance_id",
        "member_epoch",
        "member_id",
        "pending_revocation",
        "previous_member_epoch",
        "process_id",
        "rack_id",
        "rebalance_timeout_ms",
        "state",
        "topology_epoch",
        "user_endpoint",
    )

    def __init__(self, member_id: str) -> None:
        self.member_id = member_id
        self.instance_id: str | None = None
        self.rack_id: str | None = None
        self.client_id = ""
        self.client_host = ""
        self.rebalance_timeout_ms = -1
        self.topology_epoch = -1
        self.process_id = ""
        self.user_endpoint: tuple[str, int] | None = None
        self.client_tags: tuple[tuple[str, str], ...] = ()
        self.member_epoch = 0
        self.previous_member_epoch = 0
        self.state = MemberState.STABLE
        self.assigned = EMPTY_TASKS
        self.pending_revocation = EMPTY_TASKS

    def copy(self, member_id: str | None = None) -> StreamsMember:
        other = StreamsMember(self.member_id if member_id is None else member_id)
        for name in self.__slots__:
            if name != "member_id":
                setattr(other, name, getattr(self, name))
        return other

    def metadata(self) -> tuple[object, ...]:
        """What the member record holds; equal tuples mean no record needs writing."""
        return (self.instance_id, self.rack_id, self.client_id, self.client_host,
                self.rebalance_timeout_ms, self.topology_epoch, self.process_id,
                self.user_endpoint, self.client_tags)

    def current(self) -> tuple[object, ...]:
        """What the current-assignment record holds."""
        return (self.member_epoch, self.previous_member_epoch, self.state, self.assigned,
                self.pending_revocation)

    def is_reconciled_to(self, target_epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == target_epoch


class StreamsGroup:
    __slots__ = (
        "assignment_epoch",
        "assignment_timestamp",
        "group_epoch",
        "group_id",
        "last_assignment_configs",
        "members",
        "metadata_hash",
        "owners",
        "shutdown_requested_by",
        "static_members",
        "target",
        "topology",
        "validated_topology_epoch",
    )

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.metadata_hash = 0
        # The topology epoch whose topics were last found complete (-1: none yet).
        self.validated_topology_epoch = -1
        # The assignment configs of the last epoch a heartbeat bumped (None: none recorded).
        self.last_assignment_configs: tuple[tuple[str, str], ...] | None = None
        self.topology: StreamsGroupTopologyValue | None = None
        self.assignment_epoch = 0
        self.assignment_timestamp = 0
        self.members: dict[str, StreamsMember] = {}
        self.static_members: dict[str, str] = {}  # instance id -> member id
        self.target: dict[str, TaskTuple] = {}
        self.owners: dict[Task, str] = {}  # active task -> member (assigned or revoking)
        # Soft state, as in Kafka: the member that asked the application to shut down.
        self.shutdown_requested_by: str | None = None

    @property
    def state(self) -> GroupState:
        if not self.members:
            return GroupState.EMPTY
        topology = self.topology
        if topology is None or self.validated_topology_epoch != topology.epoch:
            return GroupState.NOT_READY
        if self.group_epoch > self.assignment_epoch:
            return GroupState.ASSIGNING
        epoch = self.assignment_epoch
        reconciled = all(m.is_reconciled_to(epoch) for m in self.members.values())
        return GroupState.STABLE if reconciled else GroupState.RECONCILING

    def static_member(self, instance_id: str) -> StreamsMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def owner(self, subtopology: str, partition: int) -> str | None:
        return self.owners.get((subtopology, partition))

    def source_topics(self) -> set[str]:
        """The topics whose offsets the group commits: its subtopologies' sources (none while
        it is empty, so that its offsets can expire, as in Kafka)."""
        topics: set[str] = set()
        if not self.members:
            return topics
        for sub in self.topology.subtopologies if self.topology is not None else ():
            topics.update(sub.source_topics)
            topics.update(t.name for t in sub.repartition_source_topics)
        return topics

    # -- the fold's mutations --------------------------------------------------

    def index_member(self, old: StreamsMember | None, new: StreamsMember | None) -> None:
        """Move the static-member index from `old`'s instance id to `new`'s."""
        if (old is not None and old.instance_id is not None
                and self.static_members.get(old.instance_id) == old.member_id):
            del self.static_members[old.instance_id]
        if new is not None and new.instance_id is not None:
            self.static_members[new.instance_id] = new.member_id

    def release(self, member: StreamsMember) -> None:
        """Forget the member as owner of its active tasks (assigned and pending revocation)."""
        owners = self.owners
        for tasks in (member.assigned.active, member.pending_revocation.active):
            for sub, partitions in tasks.items():
                for p in partitions:
                    if owners.get((sub, p)) == member.member_id:
                        del owners[(sub, p)]

    def claim(self, member: StreamsMember) -> None:
        """Record the member as owner of its active tasks; a second owner is a coordinator bug."""
        owners = self.owners
        for tasks in (member.assigned.active, member.pending_revocation.active):
            for sub, partitions in tasks.items():
                for p in partitions:
                    holder = owners.get((sub, p))
                    if holder is not None and holder != member.member_id:
                        raise RuntimeError(
                            f"streams group {self.group_id}: task {sub}_{p} is owned by "
                            f"{holder}, cannot give it to {member.member_id}")
                    owners[(sub, p)] = member.member_id
