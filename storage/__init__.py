"""Durable state for kcsim: record logs, compaction, partition data, the data-dir lock.

The coordinator writes every state change as a :class:`Record` through a
:class:`GroupCommitWriter` into a :class:`RecordLog`, and rebuilds its state at
start-up by replaying that log. This package knows records and files only.
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
from .partition_log import PartitionLog
from .records import RECORD_TYPES, Record, RecordType
from .writer import FSYNC_POLICIES, FsyncPolicy, GroupCommitWriter, WriterStats

__all__ = [
    "DEFAULT_SEGMENT_BYTES",
    "FSYNC_POLICIES",
    "RECORD_TYPES",
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
    "StorageClosedError",
    "StorageError",
    "StorageFailedError",
    "UnsupportedRecordError",
    "WriterStats",
    "compact",
]
