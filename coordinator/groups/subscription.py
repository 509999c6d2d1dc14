"""The topics a classic consumer group subscribes to, read from its members' JoinGroup metadata.

Like Kafka, the subscription is parsed with the version-0 layout (topics, user
data), the prefix every later version extends, so unknown newer versions still
parse. OffsetDelete and offset expiry use the result.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from kcsim.protocol.codecs import data_codec
from kcsim.protocol.primitives import DecodeError

if TYPE_CHECKING:
    from collections.abc import Iterable

_VERSION = struct.Struct(">h")


def subscription_topics(metadata: bytes) -> list[str]:
    """The topics of one ConsumerProtocolSubscription; DecodeError if it is malformed."""
    try:
        (version,) = _VERSION.unpack_from(metadata, 0)
    except struct.error:
        raise DecodeError("subscription without a version prefix") from None
    if version < 0:
        raise DecodeError(f"unsupported subscription version {version}")
    try:
        subscription, _ = data_codec("ConsumerProtocolSubscription").decoder(0)(metadata, 2)
    except (struct.error, IndexError, ValueError, UnicodeDecodeError) as exc:
        raise DecodeError(f"malformed subscription: {exc}") from None
    return list(subscription.topics)


def union_of_subscriptions(metadatas: Iterable[bytes]) -> frozenset[str] | None:
    topics: set[str] = set()
    try:
        for metadata in metadatas:
            topics.update(subscription_topics(metadata))
    except DecodeError:
        return None
    return frozenset(topics)
