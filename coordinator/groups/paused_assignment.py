"""Paused partitions left out of a classic group's assignment (a kcsim extension beyond KIP-1249).

Classic consumers assign partitions among themselves, so the coordinator
cannot change a target; instead, for groups of protocol type `consumer`, it
reads the consumer-protocol assignment the leader sends in SyncGroup and hands
each member its assignment without the paused partitions. Pausing and
resuming trigger a rebalance so the change reaches every member.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from kcsim.protocol.consumer_protocol import decode_assignment, encode_assignment
from kcsim.protocol.messages.consumer_protocol import ConsumerProtocolAssignment
from kcsim.protocol.primitives import DecodeError

from ..shared.paused import paused_by_name

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..shared.runtime import GroupRuntime
    from .classic import ClassicGroup

_VERSION = struct.Struct(">h")


def without_paused(
    rt: GroupRuntime, group: ClassicGroup, assignments: Mapping[str, bytes]
) -> Mapping[str, bytes]:
    """The leader's assignments with the group's paused partitions taken out."""
    if not group.uses_consumer_protocol():
        return assignments
    paused = paused_by_name(rt.paused, rt.topics, group.group_id)
    if not paused:
        return assignments
    return {member_id: filter_assignment(raw, paused) for member_id, raw in assignments.items()}


def filter_assignment(raw: bytes, paused: Mapping[str, frozenset[int]]) -> bytes:
    """One member's assignment without paused partitions; bytes we cannot parse pass as they are."""
    if not raw:
        return raw
    try:
        (version,) = _VERSION.unpack_from(raw, 0)
        assignment = decode_assignment(raw)
    except (DecodeError, struct.error):
        return raw
    make = ConsumerProtocolAssignment.TopicPartition
    kept = []
    removed = False
    for tp in assignment.assigned_partitions:
        stop = paused.get(tp.topic)
        if stop and not stop.isdisjoint(tp.partitions):
            removed = True
            rest = [p for p in tp.partitions if p not in stop]
            if rest:
                kept.append(make(topic=tp.topic, partitions=rest))
        else:
            kept.append(tp)
    if not removed:
        return raw
    assignment.assigned_partitions = kept
    return encode_assignment(assignment, version)


def assigned_partitions(raw: bytes) -> dict[str, list[int]]:
    """A consumer-protocol assignment's partitions by topic (none for bytes we cannot parse)."""
    if not raw:
        return {}
    try:
        assignment = decode_assignment(raw)
    except (DecodeError, struct.error):
        return {}
    return {tp.topic: list(tp.partitions) for tp in assignment.assigned_partitions}
