"""The state one coordinator's handlers share, the fold over records, and the effects of a call.

Durable state (committed offsets, each group's last written metadata) changes
only through `apply`, at replay and live alike: handlers `write` records, which
applies them and queues them for the shell to persist. Soft state (who is
parked in a rebalance, session deadlines) lives on the groups and in the
deadline structure. Responses produced during a call, for the request being
handled or for requests parked earlier, are collected until the call returns.
"""

from __future__ import annotations

import uuid
from sys import intern
from typing import TYPE_CHECKING, Any

from kcsim.coordinator.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
)
from kcsim.storage.records import Record

from ..pause.registry import PausedRegistry
from .classic import ClassicGroup, Member, Waiter
from .deadlines import Deadlines
from .interface import GroupConfig, Outcome, TopicLookup
from .offset_store import OffsetStore
from .records import group_record
from .state import DEAD, EMPTY, STABLE

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..consumer.model import ConsumerGroup

HEARTBEAT = "heartbeat"
JOIN = "join"
SYNC = "sync"
RETENTION = "retention"


def heartbeat_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    return (HEARTBEAT, group_id, member_id)


def join_key(group_id: str) -> tuple[str, str]:
    return (JOIN, group_id)


def sync_key(group_id: str) -> tuple[str, str]:
    return (SYNC, group_id)


RETENTION_KEY = (RETENTION,)


class GroupRuntime:
    def __init__(
        self,
        config: GroupConfig,
        topics: TopicLookup,
        new_uuid: Callable[[], uuid.UUID] = uuid.uuid4,
    ) -> None:
        self.config = config
        self.topics = topics
        self.new_uuid = new_uuid
        self.groups: dict[str, ClassicGroup] = {}
        # KIP-848 groups share the group-id namespace: an id is in one dict at most.
        self.consumer_groups: dict[str, ConsumerGroup] = {}
        self.paused = PausedRegistry()
        # Folds of record kinds other coordinators' parts own, by key type.
        self.folds: dict[type, Callable[[Record], None]] = {}
        self.loaded_consumer: set[str] = set()
        self.offsets = OffsetStore()
        self.deadlines = Deadlines()
        self.now = 0
        self.started = False
        self.loaded: list[ClassicGroup] = []
        self.parked: set[object] = set()
        self.cancelled: set[object] = set()
        self.responses: list[tuple[object, Any]] = []
        self.records: list[Record] = []

    # -- the call in progress ---------------------------------------------

    def finish(self) -> Outcome:
        outcome = Outcome(self.responses, self.records)
        self.responses = []
        self.records = []
        return outcome

    def respond(self, token: object, response: Any) -> None:
        if token in self.parked:
            self.parked.discard(token)
            if token in self.cancelled:
                self.cancelled.discard(token)
                return
        self.responses.append((token, response))

    def park(self, token: object, version: int) -> Waiter:
        self.parked.add(token)
        return Waiter(token, version)

    def drop(self, waiter: Waiter | None) -> None:
        """Forget a parked request Kafka never answers (its member left or was replaced)."""
        if waiter is not None:
            self.parked.discard(waiter.token)
            self.cancelled.discard(waiter.token)

    def cancel(self, token: object) -> None:
        if token in self.parked:
            self.cancelled.add(token)

    def write(self, record: Record) -> None:
        self.apply(record)
        self.records.append(record)

    def write_offset(self, key: OffsetCommitKey, value: OffsetCommitValue | None) -> None:
        """write() for an offset record: the same fold, without dispatching on the key type."""
        self._apply_offset(key, value)
        self.records.append(Record(key, value))

    def stored_offsets(self, group_id: str, topic: str) -> dict[int, OffsetCommitValue]:
        """The partition -> offset map a commit writes into; the group exists once it has one."""
        if group_id not in self.groups and group_id not in self.consumer_groups:
            self.groups[group_id] = ClassicGroup(group_id, self.now)
        return self.offsets.partitions_of(group_id, topic)

    def persist_group(self, group: ClassicGroup, value: GroupMetadataValue) -> None:
        group.persisted = value
        self.write(group_record(group.group_id, value))

    # -- the fold ---------------------------------------------------------

    def apply(self, record: Record) -> None:
        key = record.key
        kind = type(key)
        if kind is OffsetCommitKey:
            self._apply_offset(key, record.value)
        elif kind is GroupMetadataKey:
            self._apply_group(key.group, record.value)
        else:
            fold = self.folds.get(kind)
            if fold is not None:
                fold(record)

    def _apply_offset(self, key: OffsetCommitKey, value: OffsetCommitValue | None) -> None:
        if value is None:
            self.offsets.remove(key.group, key.topic, key.partition)
            return
        if key.group not in self.groups and key.group not in self.consumer_groups:
            # Offsets without a group: Kafka's "simple" group, Empty with no protocol type.
            self.groups[key.group] = ClassicGroup(key.group, self.now)
        self.offsets.put(key.group, key.topic, key.partition, value)

    def _apply_group(self, group_id: str, value: GroupMetadataValue | None) -> None:
        existing = self.groups.get(group_id)
        if value is None:
            if existing is not None:
                existing.transition_to(DEAD, self.now)
                self.forget_group(existing)
            return
        if existing is not None and (existing.persisted is value or existing.persisted == value):
            existing.persisted = value
            return
        if existing is not None:
            self.forget_group(existing)
        group = group_from_metadata(group_id, value, self.now)
        self.groups[group_id] = group
        if group.members:
            group.needs_session_start = True
            self.loaded.append(group)

    def forget_group(self, group: ClassicGroup) -> None:
        """Remove a group and its timers; parked requests of its members are never answered."""
        if self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]
        gid = group.group_id
        self.deadlines.cancel(join_key(gid))
        self.deadlines.cancel(sync_key(gid))
        for member_id in list(group.members) + list(group.pending_join):
            self.deadlines.cancel(heartbeat_key(gid, member_id))
        for member in group.members.values():
            self.drop(member.join_waiter)
            self.drop(member.sync_waiter)

    def group_exists(self, group_id: str) -> bool:
        """Whether the id names a live group of either kind (offsets alone make a simple group)."""
        classic = self.groups.get(group_id)
        return group_id in self.consumer_groups or (classic is not None and classic.state is not DEAD)

    # -- ids ----------------------------------------------------------------

    def new_member_id(self, prefix: str) -> str:
        return f"{prefix}-{self.new_uuid()}"


def group_from_metadata(group_id: str, value: GroupMetadataValue, now_ms: int) -> ClassicGroup:
    """A group as Kafka loads it: Empty without members, else Stable with the stored assignment."""
    group = ClassicGroup(
        group_id,
        now_ms,
        state=STABLE if value.members else EMPTY,
        generation=value.generation,
        protocol_type=value.protocol_type or None,
        protocol_name=value.protocol,
        leader_id=value.leader,
        state_timestamp=None if value.state_timestamp == -1 else value.state_timestamp,
    )
    for stored in value.members:
        rebalance_timeout = stored.rebalance_timeout_ms
        if rebalance_timeout == -1:
            rebalance_timeout = stored.session_timeout_ms
        group.add(
            Member(
                stored.member_id,
                stored.group_instance_id,
                stored.client_id,
                stored.client_host,
                rebalance_timeout,
                stored.session_timeout_ms,
                value.protocol_type,
                [(intern(name), bytes(metadata)) for name, metadata in stored.protocols],
                bytes(stored.assignment),
            )
        )
    group.subscribed_topics = group.compute_subscribed_topics()
    group.persisted = value
    return group
