"""Read all of `__consumer_offsets` over the wire and fold it, for the tests."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kcsim.coordinator.kafka_format import OFFSETS_TOPIC
from kcsim.protocol.codecs import request_class
from kcsim.protocol.record_batch import KafkaRecord, batch_records

if TYPE_CHECKING:
    from collections.abc import Callable

FETCH, FETCH_V, METADATA, METADATA_V = 1, 12, 3, 12
OFFSET_OUT_OF_RANGE = 1


def _records(data: bytes) -> list[KafkaRecord]:
    out: list[KafkaRecord] = []
    pos = 0
    while pos + 12 <= len(data):
        size = int.from_bytes(data[pos + 8:pos + 12], "big") + 12
        chunk = data[pos:pos + size]
        if len(chunk) < size:
            break
        out += batch_records(chunk, int.from_bytes(chunk[:8], "big"), lambda c, d: d)
        pos += size
    return out


def read_all(call: Callable[[int, int, Any], Any]) -> dict[int, list[KafkaRecord]]:
    """Every record of every partition, from its log start offset to its end (asked from
    0: a compacted partition answers OFFSET_OUT_OF_RANGE with its start)."""
    metadata = request_class(METADATA)
    described = call(METADATA, METADATA_V, metadata(
        topics=[metadata.MetadataRequestTopic(name=OFFSETS_TOPIC)],
        allow_auto_topic_creation=False))
    partitions = len(described.topics[0].partitions)
    fetch = request_class(FETCH)
    out: dict[int, list[KafkaRecord]] = {p: [] for p in range(partitions)}
    positions = dict.fromkeys(range(partitions), 0)
    while positions:
        response = call(FETCH, FETCH_V, fetch(
            replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 24, isolation_level=0,
            session_id=0, session_epoch=-1, forgotten_topics_data=[], rack_id="",
            topics=[fetch.FetchTopic(topic=OFFSETS_TOPIC, topic_id=uuid.UUID(int=0), partitions=[
                fetch.FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=1 << 20)
                for p, o in positions.items()])]))
        for part in response.responses[0].partitions:
            if part.error_code == OFFSET_OUT_OF_RANGE:  # compacted: start where the log does
                positions[part.partition_index] = part.log_start_offset
                continue
            assert part.error_code == 0, part
            records = [r for r in _records(part.records or b"")
                       if r.offset >= positions[part.partition_index]]
            out[part.partition_index] += records
            if records:
                positions[part.partition_index] = records[-1].offset + 1
            if positions[part.partition_index] >= part.high_watermark:
                del positions[part.partition_index]
    return out


def fold(partitions: dict[int, list[KafkaRecord]]) -> dict[bytes, bytes]:
    """Each key's newest value, tombstoned keys left out: what the topic says is current."""
    state: dict[bytes, bytes] = {}
    for records in partitions.values():
        for r in records:
            assert r.key is not None
            if r.value is None:
                state.pop(r.key, None)
            else:
                state[r.key] = r.value
    return state
