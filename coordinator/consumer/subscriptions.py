"""What a group subscribes to, resolved against the broker's topics.

Topic names come from members' subscribed names and from their regular
expressions (KIP-848 v1), which are matched against all topic names when a
member brings a new one and again at most every REGEX_REFRESH_MS, as Kafka
refreshes them in batches. The group's subscription metadata (id and
partition count of each subscribed topic that exists) is hashed like Kafka 4.x's
metadata hash: a change of the hash bumps the group epoch, so topics created,
deleted or grown are picked up at the next heartbeat.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..shared.interface import TopicLookup
    from .model import ConsumerGroup

REGEX_REFRESH_MS = 10_000

Metadata = dict[str, tuple[uuid.UUID, int]]  # topic name -> (topic id, partition count)


def regex_problem(pattern: str) -> str | None:
    """Why a subscribed regex cannot be used (Kafka's INVALID_REGULAR_EXPRESSION message)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"SubscribedTopicRegex `{pattern}` is not a valid regular expression: {exc}."
    return None


def all_topic_names(topics: TopicLookup) -> Iterable[str]:
    """Every topic name the broker has; empty when the lookup cannot list them."""
    names = getattr(topics, "topic_names", None)
    return names() if names is not None else ()


def refresh_regexes(
    group: ConsumerGroup, topics: TopicLookup, now_ms: int, force: bool = False
) -> None:
    if not group.regex_counts:
        if group.resolved_regex:
            group.resolved_regex = {}
        return
    due = (
        force
        or group.regex_refreshed_at is None
        or now_ms - group.regex_refreshed_at >= REGEX_REFRESH_MS
        or any(r not in group.resolved_regex for r in group.regex_counts)
    )
    if not due:
        return
    names = list(all_topic_names(topics))
    resolved: dict[str, frozenset[str]] = {}
    for pattern in group.regex_counts:
        try:
            compiled = re.compile(pattern)
        except re.error:
            resolved[pattern] = frozenset()
            continue
        resolved[pattern] = frozenset(n for n in names if compiled.fullmatch(n))
    group.resolved_regex = resolved
    group.regex_refreshed_at = now_ms


def subscription_metadata(group: ConsumerGroup, topics: TopicLookup) -> Metadata:
    meta: Metadata = {}
    for name in group.subscribed_topics():
        count = topics.partition_count(name)
        topic_id = topics.topic_id(name) if count is not None else None
        if count is not None and topic_id is not None:
            meta[name] = (topic_id, count)
    return meta


def metadata_hash(meta: Metadata) -> int:
    """A stable 63-bit hash of the subscribed topics (0 when none exists)."""
    if not meta:
        return 0
    h = hashlib.blake2b(digest_size=8)
    for name in sorted(meta):
        topic_id, count = meta[name]
        h.update(name.encode())
        h.update(topic_id.bytes)
        h.update(count.to_bytes(4, "big"))
    return int.from_bytes(h.digest(), "big") >> 1 or 1
