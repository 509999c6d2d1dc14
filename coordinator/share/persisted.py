"""A share partition's state as Kafka's share coordinator writes it, and its fold.

Kafka's share coordinator keeps each (group, topic, partition) as a ShareSnapshot (the
whole state: start offset and state batches) followed by ShareUpdates (the batches one
change touched, and the new start offset), and writes a fresh snapshot once enough
updates have piled up. :class:`ShareStateFold` is the fold of those records, the same
live and at replay; :func:`record_for` turns a partition's :class:`Update` into the
record to write (an update, or every `SNAPSHOT_EVERY` changes a snapshot), and
:meth:`PersistedShare.partition` rebuilds the live partition at start-up. What was
acquired and not yet acknowledged at a crash was never written: it comes back
AVAILABLE with the delivery count of its last written change, as in Kafka.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from kcsim.coordinator.records import (
    ShareSnapshotKey,
    ShareSnapshotValue,
    ShareStateBatch,
    ShareUpdateKey,
    ShareUpdateValue,
)
from kcsim.storage.records import Record

from .partition import SharePartition
from .rules import RecordState, is_final

if TYPE_CHECKING:
    from .partition import Update

__all__ = [
    "SNAPSHOT_EVERY",
    "PersistedShare",
    "ShareKey",
    "ShareStateFold",
    "initial_snapshot",
    "record_for",
    "tombstones",
]

# Updates between two snapshots (Kafka: share.coordinator.snapshot.update.records.per.snapshot,
# 500); smaller here, since each update of a run is kept under a key of its own.
SNAPSHOT_EVERY = 32


class ShareKey(NamedTuple):
    group: str
    topic_id: bytes
    partition: int


class PersistedShare:
    """The written state of one share partition."""

    __slots__ = (
        "create_timestamp",
        "leader_epoch",
        "snapshot_epoch",
        "start_offset",
        "state_epoch",
        "states",
        "updates",
        "write_timestamp",
    )

    def __init__(self, value: ShareSnapshotValue) -> None:
        self.states: dict[int, tuple[RecordState, int]] = {}
        self.apply_snapshot(value)

    def apply_snapshot(self, value: ShareSnapshotValue) -> None:
        self.snapshot_epoch = value.snapshot_epoch
        self.state_epoch = value.state_epoch
        self.leader_epoch = value.leader_epoch
        self.start_offset = value.start_offset
        self.create_timestamp = value.create_timestamp
        self.write_timestamp = value.write_timestamp
        self.updates = 0
        self.states = {}
        self._merge(value.state_batches)

    def apply_update(self, value: ShareUpdateValue) -> None:
        if value.snapshot_epoch != self.snapshot_epoch:
            return  # left behind by a later snapshot
        self.updates += 1
        self.leader_epoch = value.leader_epoch
        if value.start_offset >= 0 and value.start_offset != self.start_offset:
            self.start_offset = value.start_offset
            self.states = {o: s for o, s in self.states.items() if o >= value.start_offset}
        self._merge(value.state_batches)

    def _merge(self, batches: list[ShareStateBatch]) -> None:
        start, states = self.start_offset, self.states
        for b in batches:
            state = RecordState(b.delivery_state)
            for offset in range(max(b.first_offset, start), b.last_offset + 1):
                states[offset] = (state, b.delivery_count)

    def state_batches(self) -> list[ShareStateBatch]:
        """The states as batches: consecutive offsets of one state and count together."""
        batches: list[ShareStateBatch] = []
        for offset in sorted(self.states):
            state, count = self.states[offset]
            if batches:
                b = batches[-1]
                if (
                    b.last_offset == offset - 1
                    and b.delivery_state == state
                    and b.delivery_count == count
                ):
                    b.last_offset = offset
                    continue
            batches.append(ShareStateBatch(offset, offset, int(state), count))
        return batches

    def delivery_complete_count(self) -> int:
        """Offsets from the start offset on whose delivery is complete (KIP-1226)."""
        return sum(1 for state, _ in self.states.values() if is_final(state))

    def view(self) -> dict[int, tuple[RecordState, int]]:
        """The written records a restart brings back, as :meth:`SharePartition.durable_view`."""
        return {
            o: s
            for o, s in self.states.items()
            if o >= self.start_offset and (s[0] is not RecordState.AVAILABLE or s[1])
        }

    def partition(self, **config: int) -> SharePartition:
        """The live partition this written state starts again as."""
        return SharePartition.restore(self.start_offset, self.states, **config)


class ShareStateFold:
    """Every share partition's written state, by (group, topic id, partition)."""

    def __init__(self) -> None:
        self.partitions: dict[ShareKey, PersistedShare] = {}

    def get(self, key: ShareKey) -> PersistedShare | None:
        return self.partitions.get(key)

    def apply(self, record: Record) -> None:
        k = record.key
        if isinstance(k, ShareSnapshotKey):
            key = ShareKey(k.group, k.topic_id, k.partition)
            value = record.value
            if value is None:
                self.partitions.pop(key, None)
            elif isinstance(value, ShareSnapshotValue):
                current = self.partitions.get(key)
                if current is None:
                    self.partitions[key] = PersistedShare(value)
                else:
                    current.apply_snapshot(value)
        elif isinstance(k, ShareUpdateKey):
            persisted = self.partitions.get(ShareKey(k.group, k.topic_id, k.partition))
            if persisted is not None and isinstance(record.value, ShareUpdateValue):
                persisted.apply_update(record.value)


def initial_snapshot(
    key: ShareKey, start_offset: int, now_ms: int, state_epoch: int = 0, snapshot_epoch: int = 0
) -> Record:
    """The first written state of a partition (Kafka's InitializeShareGroupState), or a
    new start of it (a higher snapshot epoch leaves the updates of the old run behind)."""
    return Record(
        ShareSnapshotKey(*key),
        ShareSnapshotValue(
            snapshot_epoch, state_epoch, -1, start_offset, now_ms, now_ms, [], 0
        ),
    )


def record_for(key: ShareKey, persisted: PersistedShare, update: Update, now_ms: int) -> Record:
    """What writing `update` takes: an update on the current snapshot, or, once a run
    of updates is long enough, a new snapshot of the state with the update in it."""
    batches = [
        ShareStateBatch(b.first_offset, b.last_offset, int(b.state), b.delivery_count)
        for b in update.batches
    ]
    value = ShareUpdateValue(
        persisted.snapshot_epoch, persisted.leader_epoch, update.start_offset, batches
    )
    if persisted.updates + 1 < SNAPSHOT_EVERY:
        return Record(ShareUpdateKey(*key, persisted.updates), value)
    merged = PersistedShare(_snapshot_of(persisted, now_ms))
    merged.apply_update(value)
    return Record(ShareSnapshotKey(*key), _snapshot_of(merged, now_ms, persisted.snapshot_epoch + 1))


def _snapshot_of(p: PersistedShare, now_ms: int, epoch: int | None = None) -> ShareSnapshotValue:
    return ShareSnapshotValue(
        p.snapshot_epoch if epoch is None else epoch,
        p.state_epoch,
        p.leader_epoch,
        p.start_offset,
        p.create_timestamp,
        now_ms,
        p.state_batches(),
        p.delivery_complete_count(),
    )


def tombstones(key: ShareKey, persisted: PersistedShare) -> list[Record]:
    """The records that delete a partition's share state: its snapshot and every
    update slot a run may have left behind."""
    slots = SNAPSHOT_EVERY - 1 if persisted.snapshot_epoch else persisted.updates
    return [Record(ShareSnapshotKey(*key), None)] + [
        Record(ShareUpdateKey(*key, slot), None) for slot in range(slots)
    ]
