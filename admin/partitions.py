"""Grouping partitions by topic for requests, and reading per-partition results back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.errors import ErrorCode

from .errors import AdminError
from .results import Outcomes, TopicPartition

if TYPE_CHECKING:
    from collections.abc import Iterable


def by_topic(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for tp in partitions:
        out.setdefault(tp.topic, []).append(tp.partition)
    return out


def partition_outcomes(
    topics: Any, asked: Iterable[TopicPartition], group_level: frozenset[int] = frozenset()
) -> Outcomes[TopicPartition, None]:
    """Each asked partition's error (or None) from a response's topics/partitions.

    An error in `group_level` is about the whole group even when reported per
    partition (OffsetCommit does that); it is raised instead.
    """
    asked = list(asked)
    out: dict[TopicPartition, AdminError | None] = {}
    for t in topics:
        name = t.name if hasattr(t, "name") else t.topic_name
        for p in t.partitions:
            message = getattr(p, "error_message", None)
            if p.error_code in group_level:
                raise AdminError(p.error_code, message)
            out[TopicPartition(name, p.partition_index)] = (
                AdminError(p.error_code, message) if p.error_code else None)
    missing = AdminError(ErrorCode.UNKNOWN_SERVER_ERROR, "the broker did not answer for it")
    return Outcomes({tp: out.get(tp, missing) for tp in asked})
