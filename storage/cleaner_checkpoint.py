"""The cleaner checkpoint: how much of the record log a compaction left clean.

Kafka's log cleaner keeps, per log, the offset up to which it has cleaned
(``cleaner-offset-checkpoint``); this is the same for the record log, in
``<log dir>/cleaner.checkpoint``: the log position up to which the last
compaction rewrote the segments, and when it ran. Replay reads it back, so the
dirty share of a log (what was written since) is known after a restart, and a
broker killed again and again compacts as soon as its log is dirty enough.

It is written after a compaction's segment swap is complete (durably: a
temporary file, fsync, rename, fsync of the directory). A crash before that
leaves the previous checkpoint, which claims less than is clean: the log only
looks dirtier than it is, and the next compaction starts earlier than needed.
It never claims more, since compaction keeps positions and positions only grow;
a log cut below it by ``--repair`` has it lowered at open. An unreadable
checkpoint is taken as none (all of the log dirty), which is always safe.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass

from .fsutil import replace_durably, write_file_durably

log = logging.getLogger(__name__)

CHECKPOINT_NAME = "cleaner.checkpoint"
_TMP_SUFFIX = ".tmp"
_FORMAT = 1


@dataclass(frozen=True)
class CleanerCheckpoint:
    clean_end: int = 0  # the closed segments ending at or before this position are clean
    compacted_at_ms: int | None = None  # when that compaction ran (None: not known)

    def encode(self) -> bytes:
        return json.dumps({"format": _FORMAT, "clean_end": self.clean_end,
                           "compacted_at_ms": self.compacted_at_ms}).encode()

    @classmethod
    def decode(cls, data: bytes) -> CleanerCheckpoint:
        """ValueError for anything but a checkpoint this kcsim wrote."""
        try:
            doc = json.loads(data)
            if doc["format"] != _FORMAT:
                raise ValueError(f"unknown checkpoint format {doc['format']}")
            clean_end, at = doc["clean_end"], doc["compacted_at_ms"]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a checkpoint: {exc!r}") from None
        if not isinstance(clean_end, int) or clean_end < 0:
            raise ValueError(f"clean_end {clean_end!r}")
        if at is not None and not isinstance(at, int):
            raise ValueError(f"compacted_at_ms {at!r}")
        return cls(clean_end, at)


def read_checkpoint(directory: str) -> CleanerCheckpoint:
    """The log's checkpoint; a log never compacted (or from before checkpoints) has
    none: all of it is dirty."""
    path = os.path.join(directory, CHECKPOINT_NAME)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return CleanerCheckpoint()
    try:
        return CleanerCheckpoint.decode(data)
    except ValueError as exc:
        log.warning("ignoring unreadable %s (all of the log counts as dirty): %s", path, exc)
        return CleanerCheckpoint()


def write_checkpoint(directory: str, checkpoint: CleanerCheckpoint) -> None:
    """Durably replace the checkpoint (blocking: call it off the event loop)."""
    final = os.path.join(directory, CHECKPOINT_NAME)
    tmp = final + _TMP_SUFFIX
    write_file_durably(tmp, checkpoint.encode())
    replace_durably(tmp, final)
