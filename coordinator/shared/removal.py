"""Removing a whole group, written once: DeleteGroups and offset expiry both end here.

The order is Kafka's (every committed offset, then the group), with kcsim's
paused set between them, so replay removes exactly what the live coordinator
removed and never sees offsets or pauses outliving their group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import emit
from .paused import paused_record
from .record_helpers import (
    consumer_group_tombstones,
    group_record,
    offset_record,
    streams_group_tombstones,
)

if TYPE_CHECKING:
    from .runtime import GroupRuntime


def remove_group(rt: GroupRuntime, group_id: str, cause: str) -> None:
    """Write the tombstones that remove the group (of any kind), its offsets and its pauses;
    `cause` says why (an admin's request, or retention), for its events."""
    if rt.config.events:
        kind = emit.group_type(rt, group_id)
        if kind == "classic":
            emit.event(rt, group_id, kind, "dead", cause)
        emit.event(rt, group_id, kind, "deleted", cause)
    offsets = rt.offsets.group(group_id)
    if offsets:
        doomed = [(t, p) for t, parts in offsets.items() for p in parts]
        for topic, partition in doomed:
            rt.write(offset_record(group_id, topic, partition, None))
    clear_paused(rt, group_id)
    consumer_group = rt.consumer_groups.get(group_id)
    if consumer_group is not None:
        for record in consumer_group_tombstones(group_id, consumer_group.members):
            rt.write(record)
    elif group_id in rt.streams_groups:
        streams_group = rt.streams_groups[group_id]
        for record in streams_group_tombstones(group_id, streams_group.members):
            rt.write(record)
    elif group_id in rt.groups:
        rt.write(group_record(group_id, None))


def clear_paused(rt: GroupRuntime, group_id: str) -> None:
    """The group's paused set is gone (a tombstone), if it had one."""
    if rt.paused.get(group_id):
        rt.write(paused_record(group_id, {}))
