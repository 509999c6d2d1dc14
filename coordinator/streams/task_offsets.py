"""The changelog offsets and end offsets each member last reported for its tasks.

As in Kafka (MemberTaskOffsets), they are transient: never written as records, held by
the coordinator, re-reported by the member every task offset interval, and shown by
StreamsGroupDescribe (what a lag report reads). A heartbeat reports either list or both
(null: unchanged); a task named twice in one list is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode

from ..shared.refusal import Refused

if TYPE_CHECKING:
    from kcsim.protocol.messages.streams_group import StreamsGroupHeartbeatRequest

    from ..shared.journal import Journal
    from .model import Task

    Reported = list[StreamsGroupHeartbeatRequest.TaskOffset]

Offsets = dict["Task", int]


def parse(reported: Reported | None) -> Offsets | None:
    """The reported offsets by task (None: unchanged); a duplicate is INVALID_REQUEST."""
    if reported is None:
        return None
    out: Offsets = {}
    for t in reported:
        task = (t.subtopology_id, t.partition)
        if task in out:
            raise Refused(ErrorCode.INVALID_REQUEST, "Task offsets contain a duplicate entry for "
                          f"subtopology {t.subtopology_id} and partition {t.partition}.")
        out[task] = t.offset
    return out


class TaskOffsets:
    """Each group's members' last reported (offsets, end offsets); journaled soft state."""

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self._by_group: dict[str, dict[str, tuple[Offsets, Offsets]]] = {}

    def of(self, group_id: str, member_id: str) -> tuple[Offsets, Offsets]:
        return self._by_group.get(group_id, {}).get(member_id, ({}, {}))

    def report(self, group_id: str, member_id: str, offsets: Offsets | None,
               end_offsets: Offsets | None) -> None:
        if offsets is None and end_offsets is None:
            return
        old_offsets, old_ends = self.of(group_id, member_id)
        self._put(group_id, member_id, (old_offsets if offsets is None else offsets,
                                        old_ends if end_offsets is None else end_offsets))

    def forget(self, group_id: str, member_id: str) -> None:
        if member_id in self._by_group.get(group_id, {}):
            self._put(group_id, member_id, None)

    def _put(self, group_id: str, member_id: str,
             value: tuple[Offsets, Offsets] | None) -> None:
        members = self._by_group.setdefault(group_id, {})
        before = members.get(member_id)

        def undo() -> None:
            if before is None:
                members.pop(member_id, None)
            else:
                members[member_id] = before

        self._journal.on_undo(undo)
        if value is None:
            del members[member_id]
        else:
            members[member_id] = value
