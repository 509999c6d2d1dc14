"""Opening, replaying and closing the durable state under --data-dir.

Layout: `<data-dir>/.lock` (one server per directory), `<data-dir>/meta/` (the
record log: topics, groups, offsets, paused partitions) and
`<data-dir>/partitions/<topic id>/<partition>/` (produced batches).

The record log holds the coordinator's records and the broker's topic records;
:data:`RECORD_TYPES` (from ``record_types``) puts them together, the one place
that says what a data directory's log may contain.
"""

from __future__ import annotations

import itertools
import logging
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kcsim.storage import (
    DEFAULT_SEGMENT_BYTES,
    DataDirLock,
    GroupCommitWriter,
    PartitionLog,
    RecordLog,
    recover_rewrite,
)

from .offsets.checkpoint import Checkpointer
from .state.record_types import RECORD_TYPES

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim.storage import Record

    from .config import Config

log = logging.getLogger("kcsim.storage")

__all__ = ["RECORD_TYPES", "Durability", "open_durability", "remove_orphan_partitions", "replay"]


@dataclass
class Durability:
    """The open storage of one server."""

    lock: DataDirLock
    log: RecordLog
    writer: GroupCommitWriter
    partitions_dir: Path
    replayed: int = 0
    replay_seconds: float = 0.0
    checkpointer: Checkpointer | None = None  # __consumer_offsets's, set by app.build

    def open_partition(self, topic_id: uuid.UUID, index: int) -> PartitionLog | UnwrittenPartition:
        """The partition's log if it has one on disk, else a stand-in that creates it on
        the first append: a topic of thousands of partitions costs no file, directory or
        descriptor for those never written."""
        # Plain strings and one stat: a request may add thousands of partitions at once.
        directory = f"{self.partitions_dir}/{topic_id.hex}/{index}"
        if os.path.isdir(directory + ".replaced"):  # a rewrite a crash cut short
            recover_rewrite(directory)
        if os.path.isdir(directory):
            return PartitionLog.open(directory)
        return UnwrittenPartition(directory)

    def close(self) -> None:
        self.log.close()
        self.lock.release()


class UnwrittenPartition:
    """An empty partition whose log is created by its first append (PartitionLog's interface)."""

    __slots__ = ("_directory", "_log", "_segment_bytes")

    def __init__(self, directory: str) -> None:
        self._directory = directory
        self._log: PartitionLog | None = None
        self._segment_bytes = DEFAULT_SEGMENT_BYTES

    @property
    def segment_bytes(self) -> int:
        return self._segment_bytes if self._log is None else self._log.segment_bytes

    @segment_bytes.setter
    def segment_bytes(self, value: int) -> None:
        self._segment_bytes = value
        if self._log is not None:
            self._log.segment_bytes = value

    def segment_ranges(self) -> list[tuple[int, int, int]]:
        return [(0, 0, 0)] if self._log is None else self._log.segment_ranges()

    def roll(self) -> bool:
        return self._log is not None and self._log.roll()

    def read_segment(self, base: int) -> list[tuple[int, bytes]]:
        if self._log is None:
            raise ValueError(f"no closed segment starts at {base}")
        return self._log.read_segment(base)

    def replace_segment(self, base: int, batches: list[tuple[int, int, bytes, int]]) -> bool:
        return self._log is not None and self._log.replace_segment(base, batches)

    @property
    def log_start_offset(self) -> int:
        return 0 if self._log is None else self._log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return 0 if self._log is None else self._log.log_end_offset

    @property
    def size_bytes(self) -> int:
        return 0 if self._log is None else self._log.size_bytes

    def truncate_prefix(self, new_start: int) -> None:
        """Only offset 0 fits an empty partition: the caller checks against its end first."""
        if self._log is not None:
            self._log.truncate_prefix(new_start)
        elif new_start > 0:
            raise ValueError(f"log start {new_start} is past the end of an empty partition")

    def append(self, base_offset: int, last_offset_delta: int, batch: bytes,
               max_timestamp: int) -> None:
        if self._log is None:  # on the event loop: its directories are synced with its data
            self._log = PartitionLog.open(self._directory, sync_dirs=False,
                                          segment_bytes=self._segment_bytes)
        self._log.append(base_offset, last_offset_delta, batch, max_timestamp)

    def read(self, from_offset: int, max_bytes: int) -> list[tuple[int, bytes]]:
        return [] if self._log is None else self._log.read(from_offset, max_bytes)

    def rewrite(self, batches: list[tuple[int, int, bytes, int]],
                log_start: int) -> UnwrittenPartition:
        if self._log is not None:
            self._log = self._log.rewrite(batches, log_start)
        elif batches or log_start:
            raise ValueError("an empty partition has nothing to rewrite")
        return self

    def sync(self) -> None:
        if self._log is not None:
            self._log.sync()

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    def delete(self) -> None:
        """Without waiting for the disk: a removal lost in a crash leaves a directory of a
        deleted topic, which start-up removes (remove_orphan_partitions)."""
        if self._log is not None:
            self._log.delete(sync_dir=False)


def open_durability(config: Config, clock_ms: Any) -> Durability:
    """Lock the data directory and open its record log (replay is separate)."""
    root = Path(config.data_dir)
    root.mkdir(parents=True, exist_ok=True)
    lock = DataDirLock.acquire(root)
    try:
        record_log = RecordLog.open(root / "meta", types=RECORD_TYPES,
                                    segment_bytes=config.segment_bytes, repair=config.repair)
    except BaseException:
        lock.release()
        raise
    writer = GroupCommitWriter(
        record_log, config.fsync, interval_ms=config.fsync_interval_ms,
        compact_interval_ms=config.compaction_interval_ms or None,
        tombstone_retention_ms=config.tombstone_retention_ms,
        min_cleanable_dirty_ratio=config.min_cleanable_dirty_ratio,
        min_compaction_lag_ms=config.min_compaction_lag_ms, clock_ms=clock_ms)
    partitions = root / "partitions"
    partitions.mkdir(exist_ok=True)
    return Durability(lock, record_log, writer, partitions)


REPLAY_SLICE = 64  # records handed to the apply path at once


def replay(durability: Durability, apply_all: Callable[[list[Record]], None]) -> None:
    """Fold every record of the log into the state, through the live apply path, a slice
    at a time (a run of one group's commits folds in one call, as a live OffsetCommit does)."""
    started = time.perf_counter()
    count = 0
    records = durability.log.replay()
    while chunk := list(itertools.islice(records, REPLAY_SLICE)):
        apply_all(chunk)
        count += len(chunk)
    durability.replayed = count
    durability.replay_seconds = time.perf_counter() - started
    log.info("replayed %d records in %.3f s", count, durability.replay_seconds)


def remove_orphan_partitions(durability: Durability, live_ids: set[uuid.UUID]) -> None:
    """Drop partition directories of topics the log no longer has (deleted before a crash)."""
    for child in durability.partitions_dir.iterdir():
        try:
            topic_id = uuid.UUID(hex=child.name)
        except ValueError:
            continue
        if topic_id not in live_ids:
            shutil.rmtree(child, ignore_errors=True)
