"""Every share partition of every share group, live, and their written state.

Theory of operation. A :class:`~.partition.SharePartition` is made the first time a
member fetches it: from its written state when there is one (a restart), else fresh at
the offset the caller names (share.auto.offset.reset), with a first snapshot written
(Kafka's InitializeShareGroupState). Each change a partition returns as an ``Update``
becomes a record (:func:`~.persisted.record_for`) that is folded into
:class:`~.persisted.ShareStateFold` *as it is made*, so the next record of the same
partition numbers its slot after it; the written state is the fold of those records,
the same live and at replay.

Records reach the log two ways: a ShareFetch or ShareAcknowledge answers with them (the
server waits until they are durable), or the group coordinator writes them in one of its
calls (a lock running out, a member leaving). The coordinator's records fold in through
its own fold after the call, so the ones made here are remembered (`_folded`) and not
folded twice; every other record of these kinds (replay) is folded by :meth:`apply`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.coordinator.records import ShareSnapshotKey

from .persisted import ShareKey, ShareStateFold, initial_snapshot, record_for, tombstones

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim.storage.records import Record

    from .partition import SharePartition, Update

__all__ = ["SharePartitions"]


class SharePartitions:
    """The live share partitions, by (group, topic id, partition), and their written state."""

    def __init__(self) -> None:
        self.fold = ShareStateFold()
        self.live: dict[ShareKey, SharePartition] = {}
        self._folded: set[int] = set()  # ids of records made here that the coordinator folds
        self.released = False  # records were given back: parked share fetches may find some
        self.unwritten: list[Record] = []  # see `write_later`

    # -- the fold -------------------------------------------------------------------

    def apply(self, record: Record) -> None:
        """The coordinator's fold of ShareSnapshot / ShareUpdate records."""
        if id(record) in self._folded:
            self._folded.discard(id(record))
            return
        self.fold.apply(record)
        k = record.key
        if record.value is None and isinstance(k, ShareSnapshotKey):
            self.live.pop(ShareKey(k.group, k.topic_id, k.partition), None)

    def _made(self, record: Record, for_coordinator: bool) -> Record:
        self.fold.apply(record)
        if for_coordinator:
            self._folded.add(id(record))
        return record

    # -- the partitions ---------------------------------------------------------------

    def partition(
        self,
        key: ShareKey,
        start_offset: Callable[[], int],
        now_ms: int,
        lock_duration_ms: int,
        delivery_count_limit: int,
        records: list[Record],
    ) -> SharePartition:
        """The live partition of `key`, made now if it is not yet (its first snapshot
        appended to `records`); it takes the group's lock duration and limit."""
        partition = self.live.get(key)
        if partition is None:
            persisted = self.fold.get(key)
            if persisted is None:
                records.append(self._made(initial_snapshot(key, start_offset(), now_ms), False))
                persisted = self.fold.get(key)
                assert persisted is not None
            partition = self.live[key] = persisted.partition(
                lock_duration_ms=lock_duration_ms, delivery_count_limit=delivery_count_limit)
        partition.lock_duration_ms = lock_duration_ms
        return partition

    def write(self, key: ShareKey, update: Update | None, now_ms: int,
              for_coordinator: bool = False) -> Record | None:
        """The record of a partition's change (None: nothing to write), folded now."""
        if update is None:
            return None
        persisted = self.fold.get(key)
        assert persisted is not None  # a live partition always has its snapshot
        return self._made(record_for(key, persisted, update, now_ms), for_coordinator)

    def of_group(self, group: str) -> list[ShareKey]:
        return [k for k in self.live if k.group == group]

    def release_member(self, group: str, member: str, now_ms: int,
                       for_coordinator: bool = True) -> list[Record]:
        """Give back what `member` holds in its group's partitions (it left, its session
        ran out, it closed its share session)."""
        out = []
        for key in self.of_group(group):
            update = self.live[key].release_member(member)
            record = self.write(key, update, now_ms, for_coordinator)
            if record is not None:
                out.append(record)
                self.released = True
        return out

    def write_later(self, records: list[Record]) -> None:
        """Records made (and folded) where no answer could wait for them (a parked fetch):
        the coordinator writes them at its next call."""
        self._folded.update(map(id, records))
        self.unwritten += records

    def take_unwritten(self) -> list[Record]:
        out, self.unwritten = self.unwritten, []
        return out

    def next_deadline(self) -> int | None:
        """When the earliest lock of any partition runs out (None: no lock); 0 while
        records wait to be written."""
        if self.unwritten:
            return 0
        if not self.live:  # no share group: the timer's hot path
            return None
        deadlines = [d for p in self.live.values() if (d := p.next_deadline()) is not None]
        return min(deadlines) if deadlines else None

    def expire(self, now_ms: int) -> list[Record]:
        """Give back every record whose lock ran out by `now_ms`: records for the
        coordinator to write."""
        out = []
        for key, partition in self.live.items():
            deadline = partition.next_deadline()
            if deadline is None or deadline > now_ms:
                continue
            record = self.write(key, partition.expire(now_ms), now_ms, True)
            if record is not None:
                out.append(record)
                self.released = True
        return out

    def reset(self, key: ShareKey, start_offset: int, now_ms: int) -> Record:
        """The snapshot that starts a partition's state afresh at `start_offset`
        (AlterShareGroupOffsets), one state epoch up; the live partition is dropped, so
        the next fetch rebuilds it from that snapshot."""
        self.live.pop(key, None)
        persisted = self.fold.get(key)
        state_epoch = 0 if persisted is None else persisted.state_epoch + 1
        snapshot_epoch = 0 if persisted is None else persisted.snapshot_epoch + 1
        return initial_snapshot(key, start_offset, now_ms, state_epoch, snapshot_epoch)

    def delete_topic(self, group: str, topic_id: bytes) -> list[Record]:
        """The tombstones of a group's share state of one topic (DeleteShareGroupOffsets)."""
        out: list[Record] = []
        for key, persisted in list(self.fold.partitions.items()):
            if key.group == group and key.topic_id == topic_id:
                out += tombstones(key, persisted)
        return out

    def delete_group(self, group: str) -> list[Record]:
        """The tombstones of every share partition's state of a group (DeleteGroups)."""
        out: list[Record] = []
        for key, persisted in list(self.fold.partitions.items()):
            if key.group == group:
                out += tombstones(key, persisted)
        return out
