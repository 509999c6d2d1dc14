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
        OffsetAndMetadata,
        TopicPartition,
    )

    from .options import Options

CONSUMER_PROTOCOL_TYPES = ("consumer", "")  # "" is a group that only ever committed offsets
BATCH = 20  # groups per request round: big enough to batch, small enough to show progress


def target_groups(admin: AdminClient, opts: Options) -> list[str]:
    """--group values in order, or every consumer group for --all-groups."""
    if opts.all_groups:
        listings = admin.list_groups(protocol_types=CONSUMER_PROTOCOL_TYPES,
                                     timeout=opts.timeout_s)
        return [g.group_id for g in listings]
    return list(dict.fromkeys(opts.groups))


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
