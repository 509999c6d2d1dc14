"""The state one coordinator's parts share, the fold's dispatch, and the effects of a call.

Durable state (committed offsets, each group's last written metadata, consumer
groups, paused sets) changes only through `apply`, at replay and live alike:
handlers `write` records, which applies them and queues them for the shell to
persist. Each kind of group registers the fold of its record kinds. Soft state
(who is parked in a rebalance, session deadlines) lives on the groups and in
the deadline structure. Responses produced during a call, for the request
being handled or for requests parked earlier, are collected until the call
returns.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, NamedTuple

from .deadlines import Deadlines
from .interface import GroupConfig, Outcome, TopicLookup
from .offset_store import OffsetStore
from .paused import PausedRegistry
from .states import DEAD
from .timers import heartbeat_key, join_key, sync_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim.storage.records import Record

    # Types only: the groups of either kind live here, their behaviour above.
    from ..consumer.model import ConsumerGroup
    from ..groups.classic import ClassicGroup

class Waiter(NamedTuple):
    """A request parked until the group can answer it, and the version to answer in."""

    token: object
    version: int


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
        # The fold of each record kind, by key type, registered by the part that owns it.
        self.folds: dict[type, Callable[[Record], None]] = {}
        self.offsets = OffsetStore()
        self.deadlines = Deadlines()
        self.now = 0
        self.started = False
        # Groups read back from the log whose timers start at the first time the
        # coordinator sees (in load order; a dict as an ordered set).
        self.loaded: dict[str, None] = {}
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

    # -- the fold ---------------------------------------------------------

    def apply(self, record: Record) -> None:
        fold = self.folds.get(type(record.key))
        if fold is not None:
            fold(record)

    def mark_loaded(self, group_id: str) -> None:
        """A record built or changed this group before the coordinator started: its timers
        start with the first call."""
        if not self.started:
            self.loaded[group_id] = None

    def forget_group(self, group: ClassicGroup) -> None:
        """Remove a classic group and its timers; parked requests of its members are never answered."""
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
