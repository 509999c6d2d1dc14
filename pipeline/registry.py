"""The record types the pipeline decodes: the server's own registry, not a copy.

A data directory's record log holds exactly what the server declares in
``kcsim.server.state.record_types.RECORD_TYPES`` (the coordinator's records and the
broker's topic records), the registry ``server.durability`` opens the log
with; reading through it means the pipeline decodes with the codecs start-up
replay uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.server.state.record_types import RECORD_TYPES
from kcsim.server.state.topic_records import TopicKey, TopicValue

if TYPE_CHECKING:
    from kcsim.storage import Record, RecordTypes

__all__ = ["TopicKey", "TopicValue", "record_types", "topic_of"]


def record_types() -> RecordTypes:
    """Every record type a data directory's log may hold."""
    return RECORD_TYPES


def topic_of(record: Record) -> tuple[str, bytes | None] | None:
    """(topic name, topic id or None when deleted) of a topic record, None for other records."""
    if type(record.key) is not TopicKey:
        return None
    value = record.value
    return record.key.name, (value.topic_id if isinstance(value, TopicValue) else None)
