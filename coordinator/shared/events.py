"""The group event log: every change of a group's life, with the coordinator's time and its cause.

An event is a record (`group_event`), written by the handler or timer that made the
change, in the same call and the same Outcome as the records of the change itself, and
folded in by the same `apply` (here, :meth:`EventHistory.apply`), live and at replay:
a data dir's history is what its log holds. Its key is a slot, the event's running
number modulo :data:`EVENT_SLOTS`, so compaction keeps the newest events and the log
does not grow without end; the history in memory keeps as many.

The words: :data:`KINDS` are what happened, :data:`CAUSES` why. A kind's `detail`
carries what it was about (a generation or epoch, the partitions that moved, counts).
Offset commits are summarised: one `offsets-committed` event per group per
:data:`COMMIT_SUMMARY_MS` of the coordinator's time at most, counting the commits
since the last one.

Writers ask :meth:`EventHistory.event` for the record (it numbers it); with events off
(`GroupConfig.events` False) writers skip the call, so a broker without events pays one
attribute test where an event would be written. Readers (the test controls, the HTTP
control API, the metrics, an event-log file) query the history or listen: a listener
is called with each event as it folds in, and must not raise or block.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from kcsim.coordinator.records import GroupEventKey, GroupEventValue
from kcsim.storage.records import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

EVENT_SLOTS = 65_536
"""How many events the log and the history keep (the newest)."""

COMMIT_SUMMARY_MS = 1_000
"""At most one `offsets-committed` event per group in this much coordinator time."""

GROUP_TYPES = ("classic", "consumer", "streams", "share", "transaction")

KINDS = (
    # a group's life
    "group-created",
    "member-joined",
    "member-left",  # cause: one of MEMBER_LEFT_CAUSES
    "rebalance-started",  # classic groups; cause: why
    "generation-bumped",  # classic groups; detail: generation
    "epoch-bumped",  # consumer, streams and share groups; detail: epoch; cause: why
    "assignment-changed",  # detail: member's added and removed partitions (or tasks)
    "stable",
    "empty",
    "dead",
    "deleted",
    # its partitions and offsets
    "partitions-paused",  # detail: topic, partitions
    "partitions-resumed",
    "offsets-reset",  # detail: topic, partitions, offsets
    "offsets-committed",  # detail: commits, partitions (since the last such event)
    "offsets-expired",  # detail: partitions
    "offsets-deleted",
    # transactions (group: the transactional id)
    "transaction-begun",
    "transaction-committed",
    "transaction-aborted",
    "transaction-timed-out",
)

MEMBER_LEFT_CAUSES = (
    "leave-request",
    "session-timeout",
    "rebalance-timeout",
    "fenced",
    "replaced",  # a static member's instance id taken by a new member
    "removed",  # by an admin (RemoveMembersFromConsumerGroup)
)

CAUSES = (
    *MEMBER_LEFT_CAUSES,
    "member-joined",
    "member-left",
    "subscription-changed",
    "metadata-changed",  # partitions added to a subscribed topic
    "topology-changed",
    "partitions-paused",
    "partitions-resumed",
    "config-changed",
    "assignment-interval",
    "request",  # an admin or client request asked for it
    "retention",
    "timeout",
)


def event_fields(event: GroupEventValue) -> dict[str, object]:
    """An event as the outside sees it (HTTP, the event-log file, `kcsim events`):
    its fields by name, in declaration order."""
    return {
        "seq": event.seq, "time_ms": event.time_ms, "group": event.group,
        "group_type": event.group_type, "kind": event.kind, "cause": event.cause,
        "member": event.member, "detail": event.detail,
    }


class EventHistory:
    """The newest events of the broker, in order, folded from `group_event` records."""

    __slots__ = ("_events", "_listeners", "issued")

    def __init__(self, capacity: int = EVENT_SLOTS) -> None:
        self._events: deque[GroupEventValue] = deque(maxlen=capacity)
        self._listeners: list[Callable[[GroupEventValue], None]] = []
        self.issued = 0  # the next event's number

    def event(
        self,
        now_ms: int,
        group: str,
        group_type: str,
        kind: str,
        cause: str = "",
        member: str = "",
        detail: dict[str, str | int | list[str]] | None = None,
    ) -> Record:
        """The record of a new event, numbered; it takes effect when folded in."""
        seq = self.issued
        self.issued = seq + 1
        value = GroupEventValue(seq, now_ms, group, group_type, kind, cause, member, detail or {})
        return Record(GroupEventKey(seq % EVENT_SLOTS), value)

    def apply(self, record: Record) -> None:
        value: GroupEventValue | None = record.value
        if value is None:
            return
        if value.seq >= self.issued:
            self.issued = value.seq + 1
        self._events.append(value)
        for listener in self._listeners:
            listener(value)

    def listen(self, listener: Callable[[GroupEventValue], None]) -> Callable[[], None]:
        """Call `listener` with every event from now on; returns what stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[GroupEventValue]:
        return iter(self._events)

    def query(
        self,
        *,
        group: str | None = None,
        kind: str | None = None,
        group_type: str | None = None,
        since: int = 0,
        limit: int | None = None,
    ) -> list[GroupEventValue]:
        """Events numbered `since` or later that match every filter given, oldest first
        (the last `limit` of them when a limit is given)."""
        found = [
            e for e in self._events
            if e.seq >= since
            and (group is None or e.group == group)
            and (kind is None or e.kind == kind)
            and (group_type is None or e.group_type == group_type)
        ]
        return found[-limit:] if limit is not None else found
