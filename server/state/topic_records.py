"""The broker's topic records: which topics exist, with their ids, sizes and configs.

Topics are broker state, not group state, so the broker declares their record
itself. It shares the server's record log with the coordinator's records and
replays through the same apply path (``BrokerState.apply``).
"""

from __future__ import annotations

from msgspec import Struct

from kcsim.storage.records import RecordType


class TopicKey(Struct, frozen=True, array_like=True, gc=False):
    name: str


class TopicValue(Struct, array_like=True, gc=False):
    topic_id: bytes  # 16 bytes
    partitions: int
    configs: dict[str, str] = {}


# Id 3, as written since the first kcsim: never reuse it.
TOPIC_RECORD_TYPES: tuple[RecordType, ...] = (
    RecordType(3, "topic", TopicKey, TopicValue),
)
