"""What the server shell and the coordinators (group and transaction) exchange.

A coordinator is a pure state machine: the shell hands it decoded requests,
the current time and records read back at start-up; it hands back Outcomes
(responses ready to send and the records that must be durable first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Protocol, TypeVar, cast

from msgspec import Struct

from kcsim.storage.records import Record

if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable

_Message = TypeVar("_Message", bound=Struct)
_Params = ParamSpec("_Params")
_Result = TypeVar("_Result")


def by_api_key(
    fn: Callable[Concatenate[int, _Message, _Params], _Result],
) -> Callable[Concatenate[int, Struct, _Params], _Result]:
    """`fn(version, request, ...)` as a table keyed by API key holds it: taking any message.

    The one promise mypy cannot check: the shell hands the entry of an API key only
    requests its codec decoded, which are of the generated class `fn` takes."""
    return cast("Callable[Concatenate[int, Struct, _Params], _Result]", fn)


class RequestContext(Protocol):
    """Who sent a request; `token` identifies it until its response is delivered."""

    @property
    def token(self) -> object: ...

    @property
    def client_id(self) -> str: ...

    @property
    def client_host(self) -> str: ...


@dataclass(slots=True)
class Caller:
    """A plain RequestContext, for callers without a server (tests, tools)."""

    token: object
    client_id: str
    client_host: str


def kafka_client_host(host: str) -> str:
    """A client's host as Kafka reports it (InetAddress.toString()): "/10.0.0.1"."""
    return host if "/" in host else "/" + host


@dataclass(slots=True, frozen=True)
class Failure:
    """A bug the coordinator contained, for the shell to log once.

    A handler or timer that raised (`group_id` None for a request: it was answered
    UNKNOWN_SERVER_ERROR and changed nothing), or a record whose fold raised: that
    group is failed from then on and answers COORDINATOR_NOT_AVAILABLE.
    """

    what: str
    error: BaseException
    group_id: str | None = None


@dataclass(slots=True)
class Ending:
    """A transaction the call ended. Its end is four steps, in Kafka's order:

    1. prepare: its PrepareCommit / PrepareAbort record, the last of the records
       before it (the Outcome's `records`, or the previous ending's `then`);
    2. offsets: the groups turn the producer's pending offsets into committed ones
       (commit) or drop them (abort) (`GroupCoordinator.complete_transaction`);
    3. complete: `then`, its CompleteCommit / CompleteAbort record and whatever the
       call wrote after it (a re-initialised producer's new epoch);
    4. markers: once all of that is durable, a marker (commit or abort, with
       `producer_epoch`) into each of `partitions`.

    `recovering`: finished again after a restart, its markers go only where the
    transaction is still open (some may have been written before the crash).
    """

    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    partitions: list[tuple[str, int]]
    groups: list[str]
    then: list[Record] = field(default_factory=list)
    recovering: bool = False


@dataclass(slots=True, frozen=True)
class NewTopic:
    """A topic the coordinator asks the broker to create (a streams group's internal topic)."""

    name: str
    partitions: int
    configs: dict[str, str]


@dataclass(slots=True)
class Outcome:
    """Responses to send (possibly for earlier pending requests) and the records to persist first.

    The records are already applied to the coordinator's state; the shell only
    makes them durable and then releases the responses. `failures` are bugs the
    coordinator contained during the call (and fold failures met at replay).
    `endings` (transaction coordinator only) are the transactions the call ended:
    the shell runs each one's steps after `records` (see `Ending`). `new_topics` (group
    coordinator only) are topics the broker should create, as Kafka's coordinator asks
    its broker for a streams group's missing internal topics; the pure core never
    creates one itself.
    """

    # (token, response); the shell adds entries of its own with no response (work to do
    # once the records are durable).
    responses: list[tuple[object, Struct | None]] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    endings: Sequence[Ending] = ()
    new_topics: Sequence[NewTopic] = ()


@dataclass(slots=True)
class GroupConfig:
    """Kafka's group coordinator settings (names follow group.* / offsets.* broker configs)."""

    initial_rebalance_delay_ms: int = 0
    # Whether handlers write group events (coordinator/shared/events.py).
    events: bool = False
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000
    group_max_size: int = 2**31 - 1
    offsets_retention_ms: int = 7 * 24 * 3600 * 1000
    offsets_retention_check_interval_ms: int = 600000
    offset_metadata_max_bytes: int = 4096
    # Kafka's fixed time-out for a new member's parked JoinGroup (5 minutes).
    new_member_join_timeout_ms: int = 5 * 60 * 1000
    # KIP-848 consumer groups (group.consumer.* broker configs).
    consumer_group_session_timeout_ms: int = 45000
    consumer_group_heartbeat_interval_ms: int = 5000
    # Kafka 4.3+: a group's target assignment is computed at most once per interval.
    consumer_group_assignment_interval_ms: int = 1000
    # The range a group's own consumer.session.timeout.ms / consumer.heartbeat.interval.ms /
    # consumer.assignment.interval.ms may take (group.consumer.min/max.* in Kafka, with its defaults).
    consumer_group_min_session_timeout_ms: int = 45000
    consumer_group_max_session_timeout_ms: int = 60000
    consumer_group_min_heartbeat_interval_ms: int = 5000
    consumer_group_max_heartbeat_interval_ms: int = 15000
    consumer_group_min_assignment_interval_ms: int = 0
    consumer_group_max_assignment_interval_ms: int = 15000
    consumer_group_assignors: tuple[str, ...] = ("uniform", "range")  # the first is the default
    consumer_group_max_size: int = 2**31 - 1
    # KIP-1071 streams groups (group.streams.* broker configs, Kafka's defaults).
    streams_group_session_timeout_ms: int = 45000
    streams_group_heartbeat_interval_ms: int = 5000
    streams_group_max_size: int = 2**31 - 1
    # A new streams group's first assignment waits this long for more members (Kafka 4.2+).
    streams_group_initial_rebalance_delay_ms: int = 3000
    # A streams group's target is computed at most once per interval (Kafka 4.3+, KIP-1263).
    streams_group_assignment_interval_ms: int = 1000
    streams_group_num_standby_replicas: int = 0
    # The range a streams group's own streams.* configs may take (group.streams.min/max.*).
    streams_group_min_session_timeout_ms: int = 45000
    streams_group_max_session_timeout_ms: int = 60000
    streams_group_min_heartbeat_interval_ms: int = 5000
    streams_group_max_heartbeat_interval_ms: int = 15000
    streams_group_min_assignment_interval_ms: int = 0
    streams_group_max_assignment_interval_ms: int = 15000
    streams_group_max_standby_replicas: int = 2
    # Kafka 4.4's warm-up settings: taken and kept, but its coordinator places no warm-up
    # task (coordinator/streams/assignor.py); the lag and interval are told to members.
    streams_group_num_warmup_replicas: int = 2
    streams_group_max_warmup_replicas: int = 20
    streams_group_acceptable_recovery_lag: int = 10000
    streams_group_task_offset_interval_ms: int = 60000
    streams_group_min_task_offset_interval_ms: int = 15000
    # KIP-932 share groups (group.share.* broker configs, Kafka's defaults).
    share_group_session_timeout_ms: int = 45000
    share_group_heartbeat_interval_ms: int = 5000
    share_group_max_size: int = 200
    share_group_record_lock_duration_ms: int = 30000
    share_group_delivery_count_limit: int = 5


class TopicLookup(Protocol):
    """The broker's topic metadata, as far as the coordinator needs it."""

    def partition_count(self, name: str) -> int | None: ...

    def topic_name(self, topic_id: uuid.UUID) -> str | None: ...

    def topic_id(self, name: str) -> uuid.UUID | None: ...

    def end_offset(self, name: str, partition: int) -> int | None:
        """The partition's high watermark (None: no such partition)."""
        ...
