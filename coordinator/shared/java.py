"""What Java computes where Kafka lets it show: a string's hashCode (which partition of
`__consumer_offsets` a group lands in) and the order a java.util.HashMap lists its keys
in (the order of topic names in some of Kafka's messages)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

_MIN_CAPACITY = 16  # a HashMap's default table size, doubled past 3/4 full


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode`: over UTF-16 code units, in 32-bit two's complement."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def hash_map_order(keys: Iterable[str]) -> list[str]:
    """The keys, put in this order, as a HashMap of them iterates: by table bucket (the
    hash spread over its upper half, masked to the table size), then in insertion order
    (buckets keep it, through resizes too)."""
    ordered = list(dict.fromkeys(keys))
    capacity = _MIN_CAPACITY
    while len(ordered) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(ordered, key=bucket)  # stable: insertion order within a bucket
