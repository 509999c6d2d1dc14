"""Which groups a command acts on, and fetching their descriptions and offsets in batches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .progress import chunks, tracked

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kcsim.admin import (
        AdminClient,
        AdminError,
        GroupDescription,
        GroupListing,
        OffsetAndMetadata,
        TopicPartition,
    )

    from .options import Options

CONSUMER_PROTOCOL_TYPES = ("consumer", "")  # "" is a group that only ever committed offsets
STREAMS = "streams"
SHARE = "share"
BATCH = 20  # groups per request round: big enough to batch, small enough to show progress


def target_groups(admin: AdminClient, opts: Options) -> list[str]:
    """--group values in order, or every group of the tool's kind for --all-groups."""
    if opts.all_groups:
        return [g.group_id for g in groups_of_kind(admin, opts.kind, opts.timeout_s)]
    return list(dict.fromkeys(opts.groups))


def groups_of_kind(admin: AdminClient, kind: str, timeout: float) -> list[GroupListing]:
    """Consumer groups (by protocol type, so classic ones too), or streams or share groups."""
    if kind in (STREAMS, SHARE):
        return admin.list_groups(types=[kind], timeout=timeout)
    return admin.list_groups(protocol_types=CONSUMER_PROTOCOL_TYPES, timeout=timeout)


def describe_all(
    admin: AdminClient, groups: Sequence[str], timeout: float
) -> dict[str, GroupDescription | AdminError]:
    out: dict[str, Any] = {}
    batches = list(chunks(list(groups), BATCH))
    for batch in tracked(batches, "describing groups", work=len(groups)):
        out.update(admin.describe_groups(batch, timeout=timeout).items())
    return out


def offsets_of_all(
    admin: AdminClient, groups: Sequence[str], timeout: float
) -> dict[str, dict[TopicPartition, OffsetAndMetadata] | AdminError]:
    out: dict[str, Any] = {}
    batches = list(chunks(list(groups), BATCH))
    for batch in tracked(batches, "fetching offsets", work=len(groups)):
        out.update(admin.list_group_offsets(batch, timeout=timeout).items())
    return out
