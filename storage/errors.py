"""Exceptions raised by the storage package.

They all derive from StorageError so the server can treat "the disk let us
down" as one category and exit, while still telling the operator which file
and byte position to look at.
"""

from __future__ import annotations


class StorageError(Exception):
    """Base class for every storage failure."""


class CorruptLogError(StorageError):
    """A log file holds bytes that cannot be trusted, before its tail.

    Raised instead of silently dropping data: the operator can restart with
    ``repair=True`` to cut the log at ``position`` in ``path``.
    """

    def __init__(self, path: str, position: int, reason: str) -> None:
        self.path = path
        self.position = position
        self.reason = reason
        super().__init__(
            f"corrupt log file {path} at byte {position}: {reason} "
            "(restart with repair enabled to cut the log there, losing what follows)"
        )


class UnsupportedRecordError(StorageError):
    """A valid frame holds a record type or version this kcsim cannot read.

    The log was most likely written by a newer kcsim; it is never cut.
    """

    def __init__(self, path: str, position: int, reason: str) -> None:
        self.path = path
        self.position = position
        self.reason = reason
        super().__init__(f"unsupported record in {path} at byte {position}: {reason}")


class DataDirLockedError(StorageError):
    """Another live process already serves this data directory."""

    def __init__(self, directory: str, holder_pid: int | None) -> None:
        self.directory = directory
        self.holder_pid = holder_pid
        holder = f"pid {holder_pid}" if holder_pid is not None else "an unknown process"
        super().__init__(
            f"data directory {directory} is already in use by {holder}; "
            "only one kcsim server may use a data directory at a time"
        )


class StorageFailedError(StorageError):
    """A write or fsync failed earlier; nothing written afterwards is durable."""


class StorageClosedError(StorageError):
    """The writer was shut down before the records could be written."""


class OffsetOutOfRangeError(StorageError):
    """A partition read asked for an offset outside [log start, log end]."""

    def __init__(self, offset: int, log_start_offset: int, log_end_offset: int) -> None:
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset
        super().__init__(
            f"offset {offset} is outside the log range "
            f"[{log_start_offset}, {log_end_offset}]"
        )
