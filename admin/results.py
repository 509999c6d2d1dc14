"""The values the admin client returns: plain, immutable, printable."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar
from uuid import UUID

from .errors import AdminError

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True, order=True)
class TopicPartition:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class Node:
    """A broker: where the client sends a request."""

    node_id: int
    host: str
    port: int

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    protocol_type: str
    state: str | None = None  # None when the broker is too old to say (ListGroups < v4)
    type: str | None = None  # "classic" or "consumer"; None before ListGroups v5


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    client_id: str
    host: str
    group_instance_id: str | None = None
    assignment: tuple[TopicPartition, ...] = ()
    target_assignment: tuple[TopicPartition, ...] | None = None  # consumer groups only
    member_epoch: int | None = None  # consumer groups only


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    state: str
    type: str  # "classic" or "consumer"
    protocol_type: str
    assignment_strategy: str  # the classic protocol name, or the server assignor
    coordinator: Node
    members: tuple[MemberDescription, ...] = ()
    group_epoch: int | None = None
    target_assignment_epoch: int | None = None

    @property
    def assigned_partitions(self) -> dict[TopicPartition, MemberDescription]:
        return {tp: m for m in self.members for tp in m.assignment}


@dataclass(frozen=True)
class ShareMemberDescription:
    member_id: str
    member_epoch: int
    client_id: str
    host: str
    rack_id: str | None = None
    subscribed_topics: tuple[str, ...] = ()
    assignment: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True)
class ShareGroupDescription:
    """A share group (KIP-932): members may share partitions."""

    group_id: str
    state: str  # Empty, Stable or Dead
    group_epoch: int
    target_assignment_epoch: int
    coordinator: Node
    assignor: str = "simple"
    members: tuple[ShareMemberDescription, ...] = ()


@dataclass(frozen=True)
class SharePartitionOffset:
    """A share partition's start offset (-1: no member fetched it yet) and lag (-1: the
    broker does not say: DescribeShareGroupOffsets v0, or no start offset)."""

    start_offset: int
    leader_epoch: int | None = None
    lag: int = -1


@dataclass(frozen=True)
class TaskIds:
    """Tasks of one subtopology: its id and the partitions (task numbers) held."""

    subtopology_id: str
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class TaskAssignment:
    """A streams member's tasks, by kind (KIP-1071)."""

    active: tuple[TaskIds, ...] = ()
    standby: tuple[TaskIds, ...] = ()
    warmup: tuple[TaskIds, ...] = ()


@dataclass(frozen=True)
class StreamsMemberDescription:
    member_id: str
    member_epoch: int
    client_id: str
    host: str
    process_id: str
    topology_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    assignment: TaskAssignment = TaskAssignment()
    target_assignment: TaskAssignment = TaskAssignment()
    is_classic: bool = False


@dataclass(frozen=True)
class Subtopology:
    """One subtopology of a streams group's topology: the topics its tasks read and write."""

    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: dict[str, int] = field(default_factory=dict)  # name: partitions
    state_changelog_topics: dict[str, int] = field(default_factory=dict)

    @property
    def input_topics(self) -> tuple[str, ...]:
        """The topics a task of this subtopology reads: its sources, then its repartitions."""
        return self.source_topics + tuple(self.repartition_source_topics)


@dataclass(frozen=True)
class StreamsGroupDescription:
    group_id: str
    state: str  # Empty, NotReady, Assigning, Reconciling, Stable or Dead
    group_epoch: int
    target_assignment_epoch: int
    coordinator: Node
    topology_epoch: int = 0
    subtopologies: tuple[Subtopology, ...] = ()
    members: tuple[StreamsMemberDescription, ...] = ()
    assignor: str | None = None  # the server assignor (StreamsGroupDescribe v1)

    @property
    def source_topics(self) -> set[str]:
        """Every topic the topology reads from outside the group (not a repartition topic)."""
        return {t for s in self.subtopologies for t in s.source_topics}

    def partitions_of(self, tasks: tuple[TaskIds, ...]) -> set[TopicPartition]:
        """The partitions these tasks read: for each task, its subtopology's input topics at
        the task's partition."""
        inputs = {s.subtopology_id: s.input_topics for s in self.subtopologies}
        return {TopicPartition(topic, p) for t in tasks for topic in inputs.get(t.subtopology_id, ())
                for p in t.partitions}


@dataclass(frozen=True)
class OffsetAndMetadata:
    offset: int
    metadata: str = ""
    leader_epoch: int | None = None


class OffsetSpec:
    """What `list_offsets` looks up: earliest, latest, or the first offset at a timestamp (ms)."""

    EARLIEST = -2
    LATEST = -1
    MAX_TIMESTAMP = -3

    @staticmethod
    def earliest() -> int:
        return OffsetSpec.EARLIEST

    @staticmethod
    def latest() -> int:
        return OffsetSpec.LATEST

    @staticmethod
    def for_timestamp(timestamp_ms: int) -> int:
        if timestamp_ms < 0:
            raise ValueError("a timestamp must be >= 0 (ms since the epoch)")
        return timestamp_ms


@dataclass(frozen=True)
class ListOffsetsResultInfo:
    offset: int  # -1 when no record is at or after the timestamp asked for
    timestamp: int
    leader_epoch: int | None = None


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    leader: int | None  # node id; None while the partition has no leader


@dataclass(frozen=True)
class TopicDescription:
    name: str
    topic_id: UUID
    partitions: tuple[PartitionInfo, ...] = ()
    internal: bool = False

    @property
    def topic_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(self.name, p.partition) for p in self.partitions]


@dataclass(frozen=True)
class ClusterInfo:
    brokers: tuple[Node, ...]
    cluster_id: str | None = None
    controller_id: int | None = None
    topics: dict[str, TopicDescription | AdminError] = field(default_factory=dict)


class Outcomes(Generic[K, V]):
    """Per-key results of a call that succeeds or fails key by key.

    Like the futures of Kafka's Admin (KIP-709's per-group offset listing): `result[key]`
    returns that key's value or raises that key's AdminError, `all()` raises the first
    error, and `succeeded` / `failed` split them for reporting.
    """

    def __init__(self, outcomes: Mapping[K, V | AdminError]) -> None:
        self._outcomes: dict[K, V | AdminError] = dict(outcomes)

    def __getitem__(self, key: K) -> V:
        outcome = self._outcomes[key]
        if isinstance(outcome, AdminError):
            raise outcome
        return outcome

    def error(self, key: K) -> AdminError | None:
        outcome = self._outcomes[key]
        return outcome if isinstance(outcome, AdminError) else None

    def __contains__(self, key: object) -> bool:
        return key in self._outcomes

    def __iter__(self) -> Iterator[K]:
        return iter(self._outcomes)

    def __len__(self) -> int:
        return len(self._outcomes)

    def keys(self) -> list[K]:
        return list(self._outcomes)

    def items(self) -> list[tuple[K, V | AdminError]]:
        return list(self._outcomes.items())

    @property
    def succeeded(self) -> dict[K, V]:
        return {k: v for k, v in self._outcomes.items() if not isinstance(v, AdminError)}

    @property
    def failed(self) -> dict[K, AdminError]:
        return {k: v for k, v in self._outcomes.items() if isinstance(v, AdminError)}

    def all(self) -> dict[K, V]:
        """Every value, or the first error."""
        for outcome in self._outcomes.values():
            if isinstance(outcome, AdminError):
                raise outcome
        return self.succeeded

    def __repr__(self) -> str:
        return f"Outcomes({self._outcomes!r})"
