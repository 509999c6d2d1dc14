"""The state one coordinator's parts share, the fold's dispatch, and the effects of a call.

Durable state (committed offsets, each group's last written metadata, consumer
groups, paused sets) changes only through `apply`, at replay and live alike:
handlers `write` records, which only queues them; once the handler has
returned, the facade folds them in with the same `apply` replay uses, and
hands them to the shell to persist. Each kind of group registers the fold of
its record kinds. Soft state (who is parked in a rebalance, session deadlines)
lives on the groups and in the deadline structure, and what a call changes of
it is journaled, so a call that raises is undone. Responses produced during a
call, for the request being handled or for requests parked earlier, are
collected until the call returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, TypeVar

from kcsim.coordinator.records import OffsetCommitKey

from .deadlines import Deadlines
from .events import EventHistory
from .group_configs import GroupConfigs
from .ids import random_uuid
from .interface import Failure, GroupConfig, NewTopic, Outcome, TopicLookup
from .journal import Journal, set_add, set_discard
from .offset_store import OffsetStore
from .paused import PausedRegistry
from .pending_offsets import PendingOffsets
from .states import DEAD
from .timers import heartbeat_key, join_key, sync_key

if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable, Sequence

    from msgspec import Struct

    from kcsim.storage.records import Record

    # Types only: the groups of either kind live here, their behaviour above.
    from ..consumer.model import ConsumerGroup
    from ..groups.classic import ClassicGroup
    from ..share.model import ShareGroup
    from ..streams.model import StreamsGroup


_Group = TypeVar("_Group")


class Waiter(NamedTuple):
    """A request parked until the group can answer it, and the version to answer in."""

    token: object
    version: int


class GroupRuntime:
    def __init__(
        self,
        config: GroupConfig,
        topics: TopicLookup,
        new_uuid: Callable[[], uuid.UUID] = random_uuid,
    ) -> None:
        self.config = config
        self.topics = topics
        self.new_uuid = new_uuid
        self.journal = Journal()
        self.groups: dict[str, ClassicGroup] = {}
        # KIP-848 groups share the group-id namespace: an id is in one dict at most.
        self.consumer_groups: dict[str, ConsumerGroup] = {}
        # KIP-1071 groups: the same namespace. Code on the other groups' paths tests the
        # dict's truth before looking an id up in it, so they pay nothing while none exists.
        self.streams_groups: dict[str, StreamsGroup] = {}
        # KIP-932 share groups: the same namespace, the same rule.
        self.share_groups: dict[str, ShareGroup] = {}
        self.paused = PausedRegistry()
        self.group_configs = GroupConfigs(config)  # each group's own configs, if any
        # The group event log; handlers write events only when `config.events` is on.
        self.events = EventHistory()
        # The fold of each record kind, by key type, registered by the part that owns it,
        # and the fold of a run of offsets committed to one topic of one group (what the
        # offset records' fold does one record at a time).
        self.folds: dict[type, Callable[[Record], None]] = {}
        self.fold_commits: Callable[[Sequence[Record], int, int], int] = _no_fold
        self.offsets = OffsetStore()
        self.pending = PendingOffsets()  # offsets of open transactions
        self.deadlines = Deadlines(self.journal)
        self.now = 0
        self.started = False
        # Groups read back from the log whose timers start at the first time the
        # coordinator sees (in load order; a dict as an ordered set).
        self.loaded: dict[str, None] = {}
        # Groups whose fold raised: their state cannot be trusted until a restart.
        self.failed: set[str] = set()
        self.failures: list[Failure] = []
        self.parked: set[object] = set()
        self.cancelled: set[object] = set()
        self.responses: list[tuple[object, Struct | None]] = []  # handed on in an Outcome
        self.records: list[Record] = []
        self.new_topics: dict[str, NewTopic] = {}  # asked for during the call, by name
        # Runs of `records` written by `write_commits`, by where each starts: (its first
        # record, where it ends). The fold of a run it finds here takes its records as
        # they are instead of checking each one's group and topic.
        self.commit_runs: dict[int, tuple[Record, int]] = {}

    # -- the call in progress ---------------------------------------------

    def finish(self) -> Outcome:
        outcome = Outcome(self.responses, self.records, self.failures)
        self.responses = []
        self.records = []
        self.failures = []
        if self.new_topics:
            outcome.new_topics = list(self.new_topics.values())
            self.new_topics = {}
        if self.commit_runs:
            self.commit_runs.clear()
        return outcome

    def respond(self, token: object, response: Struct) -> None:
        if token in self.parked:
            self._unpark(token)
            if token in self.cancelled:
                self._uncancel(token)
                return
        self.responses.append((token, response))

    def park(self, token: object, version: int) -> Waiter:
        self.parked.add(token)
        journal = self.journal
        if journal.open:
            journal.steps.append((set_discard, self.parked, token))
        return Waiter(token, version)

    def drop(self, waiter: Waiter | None) -> None:
        """Forget a parked request Kafka never answers (its member left or was replaced)."""
        if waiter is not None:
            if waiter.token in self.parked:
                self._unpark(waiter.token)
            if waiter.token in self.cancelled:
                self._uncancel(waiter.token)

    def _unpark(self, token: object) -> None:
        self.parked.discard(token)
        journal = self.journal
        if journal.open:
            journal.steps.append((set_add, self.parked, token))

    def _uncancel(self, token: object) -> None:
        self.cancelled.discard(token)
        self.journal.on_undo(self.cancelled.add, token)

    def cancel(self, token: object) -> None:
        if token in self.parked:
            self.cancelled.add(token)

    def write(self, record: Record) -> None:
        """Queue a record: it changes the state once the handler has returned it."""
        self.records.append(record)

    def write_commits(self, records: list[Record]) -> None:
        """Queue offsets committed to one topic of one group, as one run the fold takes whole."""
        start = len(self.records)
        self.records += records
        self.commit_runs[start] = (records[0], len(self.records))

    def add_group(self, group: ClassicGroup) -> None:
        """A request creates a classic group (before any record of it is written)."""
        self.groups[group.group_id] = group

        def undo() -> None:
            del self.groups[group.group_id]

        self.journal.on_undo(undo)

    # -- the fold ---------------------------------------------------------

    def apply(self, record: Record) -> None:
        fold = self.folds.get(type(record.key))
        if fold is not None:
            fold(record)

    def apply_all(
        self,
        records: Sequence[Record],
        start: int,
        failed: Callable[[Record, BaseException], None],
    ) -> None:
        """Fold records[start:], in order: `apply` for each, except that a run of offsets
        committed to one topic of one group goes to their fold in one call. A record whose
        fold raises goes to `failed`; a failed group's records are skipped."""
        end = len(records)
        i = start
        while i < end:
            record = records[i]
            key = record.key
            if self.failed and getattr(key, "group", None) in self.failed:
                i += 1
                continue
            try:
                if type(key) is OffsetCommitKey and record.value is not None:
                    i = self.fold_commits(records, i, end)
                    continue
                self.apply(record)
            except Exception as exc:
                failed(record, exc)
            i += 1

    def mark_loaded(self, group_id: str) -> None:
        """A record built or changed this group before the coordinator started: its timers
        start with the first call."""
        if not self.started:
            self.loaded[group_id] = None

    def folded_group(self, groups: dict[str, _Group], group_id: str, create: bool,
                     new: Callable[[str], _Group]) -> _Group | None:
        """A KIP-848 or KIP-1071 group as its record's fold finds it: created by a record
        that is not a tombstone (an Empty classic group on the id gives way, as Kafka
        replaces simple groups), and marked loaded until the coordinator starts."""
        group = groups.get(group_id)
        if group is None and create:
            classic = self.groups.get(group_id)
            if classic is not None:
                self.forget_group(classic)
            group = groups[group_id] = new(group_id)
        if group is not None:
            self.mark_loaded(group_id)
        return group

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
        """Whether the id names a live group of any kind (offsets alone make a simple group)."""
        classic = self.groups.get(group_id)
        return (group_id in self.consumer_groups or group_id in self.streams_groups
                or group_id in self.share_groups
                or (classic is not None and classic.state is not DEAD))

    # -- ids ----------------------------------------------------------------

    def new_member_id(self, prefix: str) -> str:
        return f"{prefix}-{self.new_uuid()}"


def _no_fold(records: Sequence[Record], start: int, end: int) -> int:
    raise RuntimeError("no fold of committed offsets is registered")
