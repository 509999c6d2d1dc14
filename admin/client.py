"""AdminClient: the blocking admin client (see aio.TrioAdminClient for trio).

    with AdminClient("127.0.0.1:9092") as admin:
        for listing in admin.list_groups(states=["Stable"]):
            print(listing.group_id)
        offsets = admin.list_group_offsets(["g1", "g2"])   # one OffsetFetch (KIP-709)
        offsets["g1"]                                       # {TopicPartition: OffsetAndMetadata}
        offsets.failed                                      # {group: AdminError}

Every call takes `timeout` (seconds; the client's default otherwise). Group calls find
each group's coordinator and retry NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS and
COORDINATOR_NOT_AVAILABLE with exponential back-off until then. Calls about many
groups or partitions answer `Outcomes`: each key's value or its own AdminError.
Calls about one group raise that group's AdminError.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from . import requests
from .calls import Call, ClientState, PauseApiKeys
from .driver import run_sync
from .network import SyncNetwork

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from .results import (
        ClusterInfo,
        GroupDescription,
        GroupListing,
        ListOffsetsResultInfo,
        OffsetAndMetadata,
        Outcomes,
        ShareGroupDescription,
        SharePartitionOffset,
        StreamsGroupDescription,
        TopicDescription,
        TopicPartition,
    )

DEFAULT_CLIENT_ID = "kcsim-admin"


class AdminClient:
    """A blocking Kafka admin client for consumer groups, speaking the wire protocol directly."""

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        *,
        client_id: str = DEFAULT_CLIENT_ID,
        timeout: float = 30.0,
        retry_backoff: float = 0.1,
        retry_backoff_max: float = 1.0,
        pause_api_keys: PauseApiKeys | None = None,
    ) -> None:
        self._state = ClientState(timeout, retry_backoff, retry_backoff_max,
                                  pause_api_keys or PauseApiKeys())
        self._network = SyncNetwork(bootstrap_servers, client_id)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._network.close()

    def _run(self, plan: Any, timeout: float | None, *args: Any) -> Any:
        return run_sync(plan(Call(self._state, timeout), *args), self._network.perform)

    def request_counts(self) -> dict[str, int]:
        """How many requests of each API (by Kafka's name) this client has sent."""
        return dict(self._network.request_counts)

    # -- cluster and topics -------------------------------------------------

    def api_versions(self, timeout: float | None = None) -> dict[int, tuple[int, int]]:
        """The bootstrap broker's ApiVersions table: {api_key: (min_version, max_version)}."""
        return self._run(requests.served_versions, timeout)

    def describe_cluster(self, timeout: float | None = None) -> ClusterInfo:
        return self._run(requests.describe_cluster, timeout)

    def describe_topics(
        self, names: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, TopicDescription]:
        """Partitions and leaders of each topic (UNKNOWN_TOPIC_OR_PARTITION for missing ones)."""
        return self._run(requests.describe_topics, timeout, names)

    def list_offsets(
        self, specs: Mapping[TopicPartition, int], *, isolation_level: int = 0,
        timeout: float | None = None,
    ) -> Outcomes[TopicPartition, ListOffsetsResultInfo]:
        """Earliest, latest (OffsetSpec) or by-timestamp offsets, asked of each partition's leader."""
        return self._run(requests.list_offsets, timeout, specs, isolation_level)

    # -- groups -------------------------------------------------------------

    def list_groups(
        self, *, states: Iterable[str] = (), types: Iterable[str] = (),
        protocol_types: Iterable[str] = (), timeout: float | None = None,
    ) -> list[GroupListing]:
        """Groups of every broker, sorted by id; filtered by state ("Stable", ...), type
        ("classic", "consumer") and protocol type ("consumer" and "" for consumer groups)."""
        return self._run(requests.list_groups, timeout, states, types, protocol_types)

    def describe_groups(
        self, group_ids: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, GroupDescription]:
        """State, members and assignments; a group that does not exist is GROUP_ID_NOT_FOUND."""
        return self._run(requests.describe_groups, timeout, group_ids)

    def delete_groups(
        self, group_ids: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, None]:
        """Delete empty groups with their offsets (NON_EMPTY_GROUP while members remain)."""
        return self._run(requests.delete_groups, timeout, group_ids)

    def describe_streams_groups(
        self, group_ids: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, StreamsGroupDescription]:
        """Streams groups (KIP-1071): state, topology, members and their active, standby and
        warm-up tasks; GROUP_ID_NOT_FOUND for a missing group or one of another kind. The
        other calls serve streams groups as they are: list_groups(types=["streams"]),
        delete_groups, the offset calls and the KIP-1249 pause calls."""
        return self._run(requests.describe_streams_groups, timeout, group_ids)

    def describe_share_groups(
        self, group_ids: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, ShareGroupDescription]:
        """Share groups (KIP-932): state, epochs, members and the partitions each is
        assigned (members may share one); GROUP_ID_NOT_FOUND for a missing group or one
        of another kind. list_groups(types=["share"]) lists them, delete_groups deletes."""
        return self._run(requests.describe_share_groups, timeout, group_ids)

    def list_share_group_offsets(
        self, groups: requests.GroupsWanted, timeout: float | None = None
    ) -> Outcomes[str, dict[TopicPartition, SharePartitionOffset]]:
        """Share groups' start offsets and lag: one group, many, or {group: partitions
        or None}; a partition no member fetched yet has start offset -1."""
        return self._run(requests.list_share_group_offsets, timeout, groups)

    def alter_share_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int], timeout: float | None = None,
    ) -> Outcomes[TopicPartition, None]:
        """Move an empty share group's start offsets (NON_EMPTY_GROUP while members remain):
        every record from the new start offset on is delivered afresh."""
        return self._run(requests.alter_share_group_offsets, timeout, group_id, offsets)

    def delete_share_group_offsets(
        self, group_id: str, topics: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, None]:
        """Forget an empty share group's state of these topics."""
        return self._run(requests.delete_share_group_offsets, timeout, group_id, topics)

    # -- offsets ------------------------------------------------------------

    def list_group_offsets(
        self, groups: requests.GroupsWanted, *, require_stable: bool = False,
        timeout: float | None = None,
    ) -> Outcomes[str, dict[TopicPartition, OffsetAndMetadata]]:
        """Committed offsets of one group, many groups, or {group: partitions or None}.

        Groups sharing a coordinator go in one OffsetFetch when it serves v8+ (KIP-709);
        otherwise each group gets its own request. Partitions without an offset are absent.
        """
        return self._run(requests.list_group_offsets, timeout, groups, require_stable)

    def pending_transactional_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition], timeout: float | None = None
    ) -> set[TopicPartition]:
        """Which of `partitions` have an offset the group holds pending in an open transaction
        (sent with TxnOffsetCommit, not yet committed or aborted)."""
        return self._run(requests.pending_transactional_offsets, timeout, group_id, partitions)

    def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
        timeout: float | None = None,
    ) -> Outcomes[TopicPartition, None]:
        """Commit offsets as an admin. Kafka accepts this for an empty group only; kcsim also
        for partitions the group has paused (KIP-1249)."""
        return self._run(requests.alter_group_offsets, timeout, group_id, offsets)

    def delete_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition], timeout: float | None = None
    ) -> Outcomes[TopicPartition, None]:
        """Remove committed offsets (GROUP_SUBSCRIBED_TO_TOPIC while members consume the topic)."""
        return self._run(requests.delete_group_offsets, timeout, group_id, partitions)

    # -- KIP-1249 -----------------------------------------------------------

    def supports_pause(self, timeout: float | None = None) -> bool:
        """Whether the broker serves PausePartitions, ResumePartitions and ListPausedPartitions."""
        return self._run(requests.supports_pause, timeout)

    def pause_partitions(
        self, group_id: str, partitions: Iterable[TopicPartition], timeout: float | None = None
    ) -> Outcomes[TopicPartition, None]:
        """Take partitions away from a running group so their offsets can be reset."""
        return self._run(requests.pause_partitions, timeout, group_id, partitions)

    def resume_partitions(
        self, group_id: str, partitions: Iterable[TopicPartition], timeout: float | None = None
    ) -> Outcomes[TopicPartition, None]:
        """Give paused partitions back to the group's assignment."""
        return self._run(requests.resume_partitions, timeout, group_id, partitions)

    def list_paused_partitions(
        self, group_id: str, timeout: float | None = None
    ) -> dict[TopicPartition, int | None]:
        """The group's paused partitions, with the offset the broker reports (None: unknown)."""
        return self._run(requests.list_paused_partitions, timeout, group_id)
