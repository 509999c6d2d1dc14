"""TrioAdminClient: the admin client for trio programs, with AdminClient's calls and results.

    async with TrioAdminClient("127.0.0.1:9092") as admin:
        groups = await admin.list_groups()
        offsets = await admin.list_group_offsets([g.group_id for g in groups])

Requests of concurrent tasks (and the per-coordinator requests of one call) share
one pipelined connection per broker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from . import requests
from .calls import Call, ClientState, PauseApiKeys
from .client import DEFAULT_CLIENT_ID
from .driver import run_trio
from .network import TrioNetwork

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


class TrioAdminClient:
    """The trio twin of AdminClient; `async with TrioAdminClient(...) as admin` closes it."""

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
        self._network = TrioNetwork(bootstrap_servers, client_id)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._network.aclose()

    async def _run(self, plan: Any, timeout: float | None, *args: Any) -> Any:
        return await run_trio(plan(Call(self._state, timeout), *args), self._network.perform)

    def request_counts(self) -> dict[str, int]:
        return dict(self._network.request_counts)

    async def api_versions(self, timeout: float | None = None) -> dict[int, tuple[int, int]]:
        return await self._run(requests.served_versions, timeout)

    async def describe_cluster(self, timeout: float | None = None) -> ClusterInfo:
        return await self._run(requests.describe_cluster, timeout)

    async def describe_topics(
        self, names: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, TopicDescription]:
        return await self._run(requests.describe_topics, timeout, names)

    async def list_offsets(
        self, specs: Mapping[TopicPartition, int], *, isolation_level: int = 0,
        timeout: float | None = None,
    ) -> Outcomes[TopicPartition, ListOffsetsResultInfo]:
        return await self._run(requests.list_offsets, timeout, specs, isolation_level)

    async def list_groups(
        self, *, states: Iterable[str] = (), types: Iterable[str] = (),
        protocol_types: Iterable[str] = (), timeout: float | None = None,
    ) -> list[GroupListing]:
        return await self._run(requests.list_groups, timeout, states, types, protocol_types)

    async def describe_groups(
        self, group_ids: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, GroupDescription]:
        return await self._run(requests.describe_groups, timeout, group_ids)

    async def delete_groups(
        self, group_ids: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, None]:
        return await self._run(requests.delete_groups, timeout, group_ids)

    async def describe_streams_groups(
        self, group_ids: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, StreamsGroupDescription]:
        return await self._run(requests.describe_streams_groups, timeout, group_ids)

    async def describe_share_groups(
        self, group_ids: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, ShareGroupDescription]:
        return await self._run(requests.describe_share_groups, timeout, group_ids)

    async def list_share_group_offsets(
        self, groups: requests.GroupsWanted, timeout: float | None = None
    ) -> Outcomes[str, dict[TopicPartition, SharePartitionOffset]]:
        return await self._run(requests.list_share_group_offsets, timeout, groups)

    async def alter_share_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int], timeout: float | None = None,
    ) -> Outcomes[TopicPartition, None]:
        return await self._run(requests.alter_share_group_offsets, timeout, group_id, offsets)

    async def delete_share_group_offsets(
        self, group_id: str, topics: str | Iterable[str], timeout: float | None = None
    ) -> Outcomes[str, None]:
        return await self._run(requests.delete_share_group_offsets, timeout, group_id, topics)

    async def list_group_offsets(
        self, groups: requests.GroupsWanted, *, require_stable: bool = False,
        timeout: float | None = None,
    ) -> Outcomes[str, dict[TopicPartition, OffsetAndMetadata]]:
        return await self._run(requests.list_group_offsets, timeout, groups, require_stable)

    async def pending_transactional_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition], timeout: float | None = None
    ) -> set[TopicPartition]:
        return await self._run(requests.pending_transactional_offsets, timeout, group_id,
                               partitions)

    async def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
        timeout: float | None = None,
    ) -> Outcomes[TopicPartition, None]:
        return await self._run(requests.alter_group_offsets, timeout, group_id, offsets)

    async def delete_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition], timeout: float | None = None
    ) -> Outcomes[TopicPartition, None]:
        return await self._run(requests.delete_group_offsets, timeout, group_id, partitions)

    async def supports_pause(self, timeout: float | None = None) -> bool:
        return await self._run(requests.supports_pause, timeout)

    async def pause_partitions(
        self, group_id: str, partitions: Iterable[TopicPartition], timeout: float | None = None
    ) -> Outcomes[TopicPartition, None]:
        return await self._run(requests.pause_partitions, timeout, group_id, partitions)

    async def resume_partitions(
        self, group_id: str, partitions: Iterable[TopicPartition], timeout: float | None = None
    ) -> Outcomes[TopicPartition, None]:
        return await self._run(requests.resume_partitions, timeout, group_id, partitions)

    async def list_paused_partitions(
        self, group_id: str, timeout: float | None = None
    ) -> dict[TopicPartition, int | None]:
        return await self._run(requests.list_paused_partitions, timeout, group_id)
