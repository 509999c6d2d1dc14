"""Durable state for kcsim: record logs, compaction, partition data, the data-dir lock.

The server writes every state change as a :class:`Record` through a
:class:`GroupCommitWriter` into a :class:`RecordLog`, and rebuilds its state at
start-up by replaying that log. This package knows records and files only: a
record is a typed key and value, and which types exist is declared by their
owners and handed to the log as :class:`RecordTypes`.

This module is the package's public face; other packages import from here,
not from the modules behind it (an import contract holds the pipeline to it).
Besides the log itself it offers the log format to readers and writers that
are not the server, so there is one reader and one writer of it:

- reading a segment alone, judged exactly as start-up judges it, without
  changing anything (:func:`judge_segment`, :class:`JudgedSegment`, its
  :class:`Frame` walk and decoded or raw records, :class:`SegmentVerdict`);
- writing segments (:class:`SegmentWriter`) and cutting a compaction's output
  into them (:class:`CompactedSegments`), as the log and the embedded compactor
  do, with the compaction manifest that swaps them in atomically;
- cleaning a topic partition's closed segments as Kafka's log cleaner does
  (:func:`clean_segments`, :func:`clean_partition`), the same algorithm as the
  record log's compaction, over a batch format the caller explains
  (:class:`BatchRecords`).
"""

from .compaction import (
    DEFAULT_TOMBSTONE_RETENTION_MS,
    BatchRecords,
    CleanedBatch,
    CleanedSegments,
    CompactionStats,
    clean_partition,
    clean_segments,
    compact,
)
from .errors import (
    CorruptLogError,
    DataDirLockedError,
    OffsetOutOfRangeError,
    StorageClosedError,
    StorageError,
    StorageFailedError,
    UnsupportedRecordError,
)
from .fsutil import fsync_dir
from .lock import DataDirLock
from .log import RecordLog
from .manifest import (
    CompactionManifest,
    commit_manifest,
    finish_interrupted_compaction,
    roll_forward,
    temporary_name,
)
from .partition_log import (
    PartitionLog,
    SegmentBatches,
    read_log_start_offset,
    read_segment_batches,
    recover_rewrite,
)
from .records import Record, RecordType, RecordTypes
from .segment import (
    DEFAULT_SEGMENT_BYTES,
    SEGMENT_HEADER_SIZE,
    SEGMENT_SUFFIX,
    Segment,
    plain_frame_bytes,
)
from .segment_check import SegmentDamage, SegmentPlace, SegmentVerdict
from .segment_reader import Frame, JudgedSegment, PlacedRecord, RawRecord, judge_segment
from .segment_writer import CompactedSegment, CompactedSegments, SegmentWriter
from .writer import FSYNC_POLICIES, FsyncPolicy, GroupCommitWriter, WriterStats

__all__ = [
    "DEFAULT_SEGMENT_BYTES",
    "DEFAULT_TOMBSTONE_RETENTION_MS",
    "FSYNC_POLICIES",
    "SEGMENT_HEADER_SIZE",
    "SEGMENT_SUFFIX",
    "BatchRecords",
    "CleanedBatch",
    "CleanedSegments",
    "CompactedSegment",
    "CompactedSegments",
    "CompactionManifest",
    "CompactionStats",
    "CorruptLogError",
    "DataDirLock",
    "DataDirLockedError",
    "Frame",
    "FsyncPolicy",
    "GroupCommitWriter",
    "JudgedSegment",
    "OffsetOutOfRangeError",
    "PartitionLog",
    "PlacedRecord",
    "RawRecord",
    "Record",
    "RecordLog",
    "RecordType",
    "RecordTypes",
    "Segment",
    "SegmentBatches",
    "SegmentDamage",
    "SegmentPlace",
    "SegmentVerdict",
    "SegmentWriter",
    "StorageClosedError",
    "StorageError",
    "StorageFailedError",
    "UnsupportedRecordError",
    "WriterStats",
    "clean_partition",
    "clean_segments",
    "commit_manifest",
    "compact",
    "finish_interrupted_compaction",
    "fsync_dir",
    "judge_segment",
    "plain_frame_bytes",
    "read_log_start_offset",
    "read_segment_batches",
    "recover_rewrite",
    "roll_forward",
    "temporary_name",
]
