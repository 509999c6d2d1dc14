"""What Java computes where Kafka lets it show: a string's hashCode (which partition of
`__consumer_offsets` a group lands in) and the order a java.util.HashMap lists its keys
in (the order of topic names in some of Kafka's messages, the order Kafka's assignors
walk members and partitions in)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable, Iterable, Iterator

K = TypeVar("K")
V = TypeVar("V")

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


_FIBONACCI = 0x9E3779B97F4A7C15  # 2^64 / the golden ratio: Kafka's BaseHashTable multiplier


def timeline_hash_map_order(keys: Iterable[str], peak: int = 0) -> list[str]:
    """The keys, put in this order, as Kafka's TimelineHashMap (its BaseHashTable) lists
    them: by slot -- the top bits of the string's hash times 2^64 / the golden ratio, as
    many bits as the table has slots -- and within a slot the last put first (its
    iterator takes a slot's chain from the end). The table starts with 2 slots, doubles
    when a key would take it past 4/3 full and never shrinks: `peak` is the most keys it
    ever held, if more than now."""
    ordered = list(dict.fromkeys(keys))
    slots = 2
    for size in range(1, max(peak, len(ordered)) + 1):
        if size * 0.75 > slots:
            slots *= 2
    shift = 64 - (slots.bit_length() - 1)
    rank = {key: i for i, key in enumerate(ordered)}

    def position(key: str) -> tuple[int, int]:
        product = (java_string_hash(key) * _FIBONACCI) & 0xFFFFFFFFFFFFFFFF
        return product >> shift, -rank[key]

    return sorted(ordered, key=position)


def java_uuid_hash(value: uuid.UUID) -> int:
    """Kafka's `Uuid.hashCode`: the two halves xor-ed, then the long's halves (unsigned)."""
    h = (value.int >> 64) ^ (value.int & 0xFFFFFFFFFFFFFFFF)
    return ((h >> 32) ^ h) & 0xFFFFFFFF


def java_record_hash(*component_hashes: int) -> int:
    """A Java record's hashCode: 31 * h + each component's hash, in declaration order."""
    h = 0
    for c in component_hashes:
        h = (31 * h + c) & 0xFFFFFFFF
    return h


def java_int_hash(value: int) -> int:
    return value & 0xFFFFFFFF


def _table_size_for(capacity: int) -> int:
    size = 1
    while size < capacity:
        size *= 2
    return size


class JavaHashMap(Generic[K, V]):
    """A java.util.HashMap as far as its iteration order goes: by bucket of the spread hash
    in the table as it is now, then along the bucket's chain, which resizes keep in order.
    `put` appends a new key to its chain, `computeIfAbsent` pushes it in front -- so each
    key gets a place, counting up for the one and down for the other. The table grows as
    Java's does: `put` after inserting past three quarters, `computeIfAbsent` before
    looking, when already past."""

    __slots__ = ("_capacity", "_entries", "_hash", "_inserted", "_place", "_threshold")

    def __init__(self, hash_of: Callable[[K], int], initial_capacity: int | None = None) -> None:
        self._hash = hash_of
        self._entries: dict[K, V] = {}
        self._place: dict[K, int] = {}
        self._inserted = 0
        self._capacity = 0  # no table until the first insertion
        self._threshold = 0 if initial_capacity is None else _table_size_for(initial_capacity)

    def _resize(self) -> None:
        if self._capacity:
            self._capacity *= 2
        else:
            self._capacity = self._threshold or 16
        self._threshold = self._capacity * 3 // 4

    def put(self, key: K, value: V) -> None:
        if not self._capacity:
            self._resize()
        if key in self._entries:
            self._entries[key] = value
            return
        self._entries[key] = value
        self._inserted += 1
        self._place[key] = self._inserted
        if len(self._entries) > self._threshold:
            self._resize()

    def compute_if_absent(self, key: K, make: Callable[[], V]) -> V:
        if not self._capacity or len(self._entries) > self._threshold:
            self._resize()
        if key not in self._entries:
            self._entries[key] = make()
            self._inserted += 1
            self._place[key] = -self._inserted
        return self._entries[key]

    def get(self, key: K) -> V | None:
        return self._entries.get(key)

    def remove(self, key: K) -> bool:
        self._place.pop(key, None)
        return self._entries.pop(key, _ABSENT) is not _ABSENT

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[K]:
        """The keys in iteration order (a snapshot: removing the current key while walking
        it is what Java's iterator allows, and leaves the rest's order alone)."""
        mask = self._capacity - 1

        def position(key: K) -> tuple[int, int]:
            h = self._hash(key) & 0xFFFFFFFF
            return (h ^ (h >> 16)) & mask, self._place[key]

        return sorted(self._entries, key=position)

    def items(self) -> list[tuple[K, V]]:
        return [(k, self._entries[k]) for k in self.keys()]

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())


class JavaHashSet(JavaHashMap[K, None]):
    """A java.util.HashSet: a HashMap of its elements; `HashSet(collection)` sizes the table
    for the collection, at least 16, before adding them in the collection's order."""

    __slots__ = ()

    @classmethod
    def of(cls, hash_of: Callable[[K], int], elements: Iterable[K]) -> JavaHashSet[K]:
        items = list(elements)
        copy = cls(hash_of, max(int(len(items) / 0.75) + 1, 16))
        for e in items:
            copy.add(e)
        return copy

    def add(self, element: K) -> None:
        self.put(element, None)


_ABSENT = object()
