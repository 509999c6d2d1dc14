"""Durable state for kcsim: record logs, compaction, partition data, the data-dir lock.

The server writes every state change as a :class:`Record` through a
:class:`GroupCommitWriter` into a :class:`RecordLog`, and rebuilds its state at
start-up by replaying that log. This package knows records and files only: a
record is a typed key and value, and which types exist is declared by their
owners and handed to the log as :class:`RecordTypes`.
"""

from .compaction import CompactionStats, compact
from .errors import (
    CorruptLogError,
    DataDirLockedError,
    OffsetOutOfRangeError,
    StorageClosedError,
    StorageError,
    StorageFailedError,
    UnsupportedRecordError,
)
from .lock import DataDirLock
from .log import DEFAULT_SEGMENT_BYTES, RecordLog
from .partition_log import PartitionLog, recover_rewrite
from .records import Record, RecordType, RecordTypes
from .writer import FSYNC_POLICIES, FsyncPolicy, GroupCommitWriter, WriterStats

__all__ = [
    "DEFAULT_SEGMENT_BYTES",
    "FSYNC_POLICIES",
    "CompactionStats",
    "CorruptLogError",
    "DataDirLock",
    "DataDirLockedError",
    "FsyncPolicy",
    "GroupCommitWriter",
    "OffsetOutOfRangeError",
    "PartitionLog",
    "Record",
    "RecordLog",
    "RecordType",
    "RecordTypes",
    "StorageClosedError",
    "StorageError",
    "StorageFailedError",
    "UnsupportedRecordError",
    "WriterStats",
    "compact",
    "recover_rewrite",
]
