"""A fold over the group-state records of a log: generations, members, pauses, activity.

Group state changes are few beside offset commits, so the report collects
them (in log order) and folds them here, as the coordinator folds them at
replay: a classic group's metadata record marks a completed rebalance (or the
group becoming Empty), a consumer group's epoch record a new target
assignment epoch, member records join and leave, a pause record replaces the
group's paused set, and a tombstone deletes. What the log does not hold cannot
be shown: the time a classic group spent preparing a rebalance is counted in
the state before it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from kcsim.protocol.consumer_protocol import decode_assignment
from kcsim.protocol.primitives import DecodeError

# The records view's record types this fold reads.
GROUP_RECORD_TYPES = (
    "topic", "group_metadata", "paused_topic_partitions", "consumer_group_metadata",
    "consumer_group_member", "consumer_group_target_assignment_member",
)


@dataclass
class Generation:
    """One row of a group's rebalance timeline."""

    group: str
    group_type: str  # "classic" or "consumer"
    generation: int
    state: str  # "Stable" (members), "Empty", or "Dead" (deleted)
    position: int
    start_ms: int
    end_ms: int | None = None
    protocol: str | None = None
    leader: str | None = None
    members: list[str] = field(default_factory=list)
    joined: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    assignment: list[dict[str, Any]] = field(default_factory=list)  # member, topic, partitions


@dataclass
class _Group:
    kind: str
    members: set[str] = field(default_factory=set)
    open: Generation | None = None
    members_at_last: set[str] = field(default_factory=set)
    target: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    active: bool = False


@dataclass
class GroupHistory:
    """What the fold found, as rows for the report's tables."""

    generations: list[Generation] = field(default_factory=list)
    pauses: list[dict[str, Any]] = field(default_factory=list)  # pause/resume events
    activity: list[dict[str, Any]] = field(default_factory=list)  # group, position, active
    paused: list[dict[str, Any]] = field(default_factory=list)  # group, topic, partition, position, paused

    def close(self, end_ms: int) -> None:
        """End the generations still open at ``end_ms`` (the end of the history)."""
        for generation in self.generations:
            if generation.end_ms is None and generation.state != "Dead":
                generation.end_ms = max(end_ms, generation.start_ms)


def fold(rows: list[dict[str, Any]], end_ms: int | None = None) -> GroupHistory:
    """Fold records-view rows (any order; sorted by position here) into a GroupHistory.

    ``end_ms`` closes the generations still open (the time of the last record).
    """
    history = GroupHistory()
    groups: dict[str, _Group] = {}
    topics: dict[bytes, str] = {}
    paused_sets: dict[str, set[tuple[str, int]]] = {}
    for row in sorted(rows, key=lambda r: r["position"]):
        kind = row["record_type"]
        if kind == "topic":
            if not row["tombstone"] and row["topic_id"] is not None:
                topics[bytes(row["topic_id"])] = row["name"]
            continue
        group_id = row["group"]
        if kind == "paused_topic_partitions":
            _pause(history, paused_sets, row)
            continue
        group = groups.get(group_id)
        if group is None:
            group = groups[group_id] = _Group(
                "classic" if kind == "group_metadata" else "consumer")
        if kind == "group_metadata":
            _classic(history, group, row)
        elif kind == "consumer_group_metadata":
            _epoch(history, group, row, topics)
        elif kind == "consumer_group_member":
            if row["tombstone"]:
                group.members.discard(row["member_id"])
                group.target.pop(row["member_id"], None)
            else:
                group.members.add(row["member_id"])
        elif kind == "consumer_group_target_assignment_member":
            group.target[row["member_id"]] = _named(row["topic_partitions"] or [], topics,
                                                    row["member_id"])
            if group.open is not None:
                group.open.assignment = _flatten(group.target)
        _activity(history, group_id, group, row)
    if end_ms is not None:
        history.close(end_ms)
    return history


def _activity(history: GroupHistory, group_id: str, group: _Group, row: dict[str, Any]) -> None:
    active = bool(group.members)
    if active != group.active:
        group.active = active
        history.activity.append({"group": group_id, "position": row["position"],
                                 "active": active})


def _open(history: GroupHistory, group: _Group, generation: Generation) -> None:
    if group.open is not None:
        group.open.end_ms = generation.start_ms
    members = set(generation.members)
    generation.joined = sorted(members - group.members_at_last)
    generation.left = sorted(group.members_at_last - members)
    group.members_at_last = members
    group.open = generation
    history.generations.append(generation)


def _classic(history: GroupHistory, group: _Group, row: dict[str, Any]) -> None:
    previous = group.open.generation if group.open is not None else 0
    if row["tombstone"]:
        group.members = set()
        _open(history, group, Generation(row["group"], "classic", previous, "Dead",
                                         row["position"], _ms(row["timestamp"])))
        return
    members = row["members"] or []
    group.members = {m["member_id"] for m in members}
    assignment = []
    for m in members:
        if row["protocol_type"] == "consumer":
            assignment += _decoded(m["member_id"], m["assignment"])
    _open(history, group, Generation(
        row["group"], "classic", row["generation"], "Stable" if members else "Empty",
        row["position"], _ms(row["timestamp"]), protocol=row["protocol"], leader=row["leader"],
        members=sorted(group.members), assignment=assignment))


def _epoch(history: GroupHistory, group: _Group, row: dict[str, Any],
           topics: dict[bytes, str]) -> None:
    previous = group.open.generation if group.open is not None else 0
    if row["tombstone"]:
        group.members = set()
        _open(history, group, Generation(row["group"], "consumer", previous, "Dead",
                                         row["position"], _ms(row["timestamp"])))
        return
    _open(history, group, Generation(
        row["group"], "consumer", row["epoch"], "Stable" if group.members else "Empty",
        row["position"], _ms(row["timestamp"]), members=sorted(group.members),
        assignment=_flatten(group.target)))


def _pause(history: GroupHistory, paused_sets: dict[str, set[tuple[str, int]]],
           row: dict[str, Any]) -> None:
    group_id = row["group"]
    now = set() if row["tombstone"] else {
        (t["topic_name"], p) for t in row["topics"] or [] for p in t["partitions"] or []}
    before = paused_sets.get(group_id, set())
    for event, changed in (("pause", now - before), ("resume", before - now)):
        for topic, partition in sorted(changed):
            common = {"group": group_id, "topic": topic, "partition": partition,
                      "position": row["position"]}
            history.pauses.append({**common, "time_ms": _ms(row["timestamp"]), "event": event})
            history.paused.append({**common, "paused": event == "pause"})
    paused_sets[group_id] = now


def _decoded(member_id: str, raw: bytes | None) -> list[dict[str, Any]]:
    """A classic consumer's assignment bytes as (member, topic, partitions) rows."""
    try:
        assignment = decode_assignment(bytes(raw or b""))
    except (DecodeError, ValueError):
        return []
    return [{"member": member_id, "topic": tp.topic, "partitions": sorted(tp.partitions)}
            for tp in assignment.assigned_partitions]


def _named(stored: list[dict[str, Any]], topics: dict[bytes, str],
           member_id: str) -> list[dict[str, Any]]:
    out = []
    for tp in stored:
        topic_id = bytes(tp["topic_id"])
        name = topics.get(topic_id) or str(uuid.UUID(bytes=topic_id))
        out.append({"member": member_id, "topic": name, "partitions": sorted(tp["partitions"])})
    return out


def _flatten(target: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [row for member in sorted(target) for row in target[member]]


def _ms(timestamp: Any) -> int:
    """Milliseconds since the epoch of a records-view timestamp (datetime or int ms)."""
    if isinstance(timestamp, int):
        return timestamp
    return round(timestamp.timestamp() * 1000)
