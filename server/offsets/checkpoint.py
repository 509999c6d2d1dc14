"""The checkpoint of `__consumer_offsets`, and what a start does to bring the topic up to
date with the replayed record log.

Consistency over restarts: every second or so while records arrive, and at a
clean stop, the topic leaves a checkpoint beside the record log: a point in
the record log (its active segment and record count there) and each
partition's end offset, taken when the topic held every record up to that
point. A start reads the records the log holds after the checkpoint, skips
those the topic already shows past the checkpoint's end offsets and appends
the rest, so a crash costs a read of the log's last moments, not of all of it.
The checkpoint exists from the topic's first read on (`activation`): a
start without one leaves the topic alone. Where the checkpoint no longer leads
anywhere (the topic's files lost; the segment it names was compacted since), the
start compares the topic's newest value of each key with the whole replayed
log and appends what differs, tombstones included. Either way readers see the
durable state again, and offsets only ever grow. The checkpoint is written
without fsync except at a clean stop: after a machine crash the topic may have
lost the records of its last moments that the checkpoint claims (records the
record log kept, as the fsync policy promises, stay readable through Kafka's
APIs; the topic is a view for monitors).
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

import msgspec
from msgspec import Struct

from .topic import state_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kcsim.storage import Record, RecordLog

    from .topic import OffsetsTopic

CHECKPOINT = "offsets-topic.checkpoint"
CHECKPOINT_EVERY_S = 1.0


class Checkpoint(Struct, array_like=True):
    """A point in the record log up to which the topic held every record, and each of its
    partitions' end offsets then. `end` is the record log's end position, which
    compaction keeps: a log still ending there has nothing the topic lacks."""

    base: int
    identity: int
    count: int
    end: int
    ends: list[int]


def read_checkpoint(data_dir: str) -> Checkpoint | None:
    try:
        with open(os.path.join(data_dir, CHECKPOINT), "rb") as f:
            return msgspec.json.decode(f.read(), type=Checkpoint)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


class Checkpointer:
    """Leaves the topic's checkpoint beside the record log, at most every
    :data:`CHECKPOINT_EVERY_S` while records arrive, and at a clean stop with fsync."""

    def __init__(self, data_dir: str, log: RecordLog, view: OffsetsTopic) -> None:
        self.path = os.path.join(data_dir, CHECKPOINT)
        self.log = log
        self.view = view
        self._next = 0.0

    def durable(self, records: Sequence[Record]) -> None:
        """The writer's `on_durable`: append to the topic, checkpoint now and then."""
        self.view.append(records)
        now = time.monotonic()
        if now >= self._next:
            self._next = now + CHECKPOINT_EVERY_S
            self.write(sync=False)

    def write(self, *, sync: bool) -> None:
        """Record that the topic now holds every record of the log (call it only then)."""
        base, identity, count = self.log.segment_mark()
        mark = Checkpoint(base, identity, count, self.log.end_position, self.view.ends())
        tmp = self.path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(msgspec.json.encode(mark))
            if sync:
                self.view.sync()
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, self.path)


def bring_up_to_date(view: OffsetsTopic, log: RecordLog, data_dir: str) -> tuple[str, int]:
    """Make the topic show every record of the replayed log: from its checkpoint when that
    still leads somewhere, else by comparing with the whole log. (how, records appended)."""
    mark = read_checkpoint(data_dir)
    if mark is not None:
        unchanged = mark.end == log.end_position
        if unchanged and mark.ends == view.ends():
            return "checkpoint", 0
        tail = [] if unchanged else log.records_after((mark.base, mark.identity, mark.count))
        if tail is not None:
            added = view.catch_up(tail, mark.ends)
            if added is not None:
                return "checkpoint", added
    return "resync", view.resync(logged_state(log, view.offset_value_version))


def logged_state(log: RecordLog, offset_value_version: int
                 ) -> dict[bytes, tuple[str, bytes | None, int | None]]:
    """Each coordinator key's newest value in the whole log, in Kafka's format, for
    :meth:`OffsetsTopic.resync`. It only reads, so a worker thread may run it while the
    trio thread appends."""
    return state_of(log.replay(), offset_value_version)
