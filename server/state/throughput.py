"""Bytes and messages in and out per topic: counted by the produce and fetch handlers
where they already hold the numbers, read by the metrics (server/metrics) when scraped.
Plain ints in dicts: nothing else per request. (Offsets committed are the group
coordinator's count: `GroupCoordinator.offsets_committed`.)
"""

from __future__ import annotations


class Throughput:
    """Counts since the broker started (Kafka's BrokerTopicMetrics counts, per topic)."""

    __slots__ = ("bytes_in", "bytes_out", "messages_in")

    def __init__(self) -> None:
        self.bytes_in: dict[str, int] = {}  # topic -> bytes of batches appended by Produce
        self.messages_in: dict[str, int] = {}  # topic -> records appended by Produce
        self.bytes_out: dict[str, int] = {}  # topic -> record bytes answered by Fetch

    def produced(self, topic: str, size: int, records: int) -> None:
        self.bytes_in[topic] = self.bytes_in.get(topic, 0) + size
        self.messages_in[topic] = self.messages_in.get(topic, 0) + records

    def fetched(self, sent: dict[str, int]) -> None:
        out = self.bytes_out
        for topic, size in sent.items():
            out[topic] = out.get(topic, 0) + size
