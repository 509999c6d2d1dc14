"""Compaction of a data directory's record log on Spark, with the embedded compactor's meaning.

``storage.compact`` keeps, of the closed segments (all but the active one),
the newest record of each (type id, key), in log order, and drops a
tombstone whose frame was written more than the retention before ``now``.
Here the newest record per key is found by a Spark aggregation over the
``raw`` view (``max_by`` position), the surviving records are re-framed as the
embedded compactor frames them (``kcsim.storage.plain_frame_bytes``: a plain
frame is rebuilt byte for byte, a record of a batch becomes a plain frame with
the batch's timestamp) and written in position order to a staging directory;
the driver then cuts them into segments of at most ``segment_bytes`` and writes
them with the embedded compactor's own cutter and writer
(``kcsim.storage.CompactedSegments``), so both give the same files.

In place, the new segments replace the inputs through the compaction manifest
(``kcsim.storage.commit_manifest``: written under temporary names, fsynced, the manifest
committed, then rolled forward), the swap a crash at any point resolves at the
next start. With ``out`` the source is left as it is and a complete new data
directory appears at ``out`` (built beside it, renamed into place). Either way
the source's data-directory lock is held throughout, so a live server's
directory is refused.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kcsim.storage import (
    DEFAULT_SEGMENT_BYTES,
    CompactedSegments,
    CompactionManifest,
    CompactionStats,
    DataDirLock,
    StorageError,
    commit_manifest,
    finish_interrupted_compaction,
    fsync_dir,
    roll_forward,
    temporary_name,
)

from .meta_log import meta_dir, plan_segments

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from kcsim.storage import CompactedSegment, Segment, SegmentPlace

STAGING_PREFIX = ".pipeline-staging-"


@dataclass(frozen=True)
class SparkCompactionStats(CompactionStats):
    """The embedded compactor's figures, and where the result went."""

    out: str | None = None  # the new data directory, when compacting into another one


def closed_segments(segments: list[SegmentPlace]) -> list[SegmentPlace]:
    """The segments the embedded compactor would take: all but an open (unsealed) last one."""
    if segments and segments[-1].sealed_end is None:
        return segments[:-1]
    return segments


def compact(spark: SparkSession, data_dir: str | os.PathLike[str], *,
            tombstone_retention_ms: int, now_ms: int | None = None,
            segment_bytes: int = DEFAULT_SEGMENT_BYTES,
            out: str | os.PathLike[str] | None = None) -> SparkCompactionStats:
    """Compact the record log of ``data_dir`` in place, or into a new data directory ``out``.

    Raises DataDirLockedError while a server holds ``data_dir``.
    """
    started = time.perf_counter()
    data_dir = os.fspath(data_dir)
    if not os.path.isdir(data_dir):
        raise StorageError(f"{data_dir} is not a data directory")
    if now_ms is None:
        now_ms = time.time_ns() // 1_000_000
    with DataDirLock.acquire(data_dir):
        if out is None:
            if os.path.isdir(meta_dir(data_dir)):
                # finish an interrupted swap, as a start would
                finish_interrupted_compaction(meta_dir(data_dir))
            return _in_place(spark, data_dir, tombstone_retention_ms, now_ms, segment_bytes,
                             started)
        return _into(spark, data_dir, os.fspath(out), tombstone_retention_ms, now_ms,
                     segment_bytes, started)


def _in_place(spark: SparkSession, data_dir: str, retention_ms: int, now_ms: int,
              segment_bytes: int, started: float) -> SparkCompactionStats:
    directory = meta_dir(data_dir)
    inputs = closed_segments(plan_segments(data_dir))
    if not inputs:
        return SparkCompactionStats(duration_s=time.perf_counter() - started)
    staging = os.path.join(data_dir, STAGING_PREFIX + uuid.uuid4().hex)
    try:
        stats, outputs = _compact_segments(spark, data_dir, inputs, staging, directory,
                                           retention_ms, now_ms, segment_bytes, temporary=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if stats.skipped:
        for output in outputs:
            os.unlink(temporary_name(output.path))
        return _timed(stats, started)
    fsync_dir(directory)
    manifest = CompactionManifest(tuple(os.path.basename(s.path) for s in inputs),
                                  tuple(os.path.basename(s.path) for s in outputs))
    commit_manifest(directory, manifest)
    roll_forward(directory, manifest)
    return _timed(stats, started)


def _into(spark: SparkSession, data_dir: str, out: str, retention_ms: int, now_ms: int,
          segment_bytes: int, started: float) -> SparkCompactionStats:
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise StorageError(f"{out} exists and is not empty")
    segments = plan_segments(data_dir)
    inputs = closed_segments(segments)
    building = f"{out.rstrip(os.sep)}.partial-{uuid.uuid4().hex[:8]}"
    target = meta_dir(building)
    os.makedirs(target)
    try:
        stats = SparkCompactionStats()
        if inputs:
            staging = os.path.join(building, STAGING_PREFIX + uuid.uuid4().hex)
            stats, outputs = _compact_segments(spark, data_dir, inputs, staging, target,
                                               retention_ms, now_ms, segment_bytes,
                                               temporary=False)
            shutil.rmtree(staging)
            if stats.skipped:  # nothing gained: the inputs as they are
                for output in outputs:
                    os.unlink(output.path)
                for s in inputs:
                    shutil.copy2(s.path, os.path.join(target, os.path.basename(s.path)))
        for s in segments[len(inputs):]:  # the active segment, as it is
            shutil.copy2(s.path, os.path.join(target, os.path.basename(s.path)))
        source_partitions = os.path.join(data_dir, "partitions")
        if os.path.isdir(source_partitions):
            shutil.copytree(source_partitions, os.path.join(building, "partitions"))
        _fsync_tree(building)
        if os.path.isdir(out):
            os.rmdir(out)
        os.rename(building, out)
        fsync_dir(os.path.dirname(os.path.abspath(out)))
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return _timed(dataclasses.replace(stats, out=out), started)


def _timed(stats: SparkCompactionStats, started: float) -> SparkCompactionStats:
    return dataclasses.replace(stats, duration_s=time.perf_counter() - started)


# -- the Spark job --------------------------------------------------------------------


def survivors(spark: SparkSession, data_dir: str, inputs: list[SegmentPlace],
              expire_before_ms: int) -> DataFrame:
    """One row per (type id, key) of the inputs: its newest record's position and
    plain frame, how many records the key had, and whether it is a tombstone to drop."""
    from pyspark.sql import functions as F

    raw = (spark.read.format("kcsim").option("kind", "raw").load(data_dir)
           .where(F.col("segment").isin([s.base for s in inputs])))
    newest = raw.groupBy("type_id", "key").agg(
        F.max_by(F.struct("position", "timestamp_ms", "version", "tombstone", "value"),
                 "position").alias("r"),
        F.count(F.lit(1)).alias("records"),
    )
    flat = newest.select(
        "type_id", "key", "records", "r.position", "r.timestamp_ms", "r.version", "r.value",
        (F.col("r.tombstone") & (F.col("r.timestamp_ms") < F.lit(expire_before_ms)))
        .alias("drop"),
    )
    return flat.mapInArrow(_frames, "position long, records long, drop boolean, frame binary")


def _frames(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The plain frame each newest record is written as (in the Spark workers)."""
    import pyarrow as pa

    from kcsim.storage import plain_frame_bytes

    for batch in batches:
        d = batch.to_pydict()
        frames = [None if drop else plain_frame_bytes(t, v, ts, k, value)
                  for t, v, ts, k, value, drop in zip(d["type_id"], d["version"],
                                                      d["timestamp_ms"], d["key"], d["value"],
                                                      d["drop"])]
        yield pa.RecordBatch.from_arrays(
            [batch.column("position"), batch.column("records"), batch.column("drop"),
             pa.array(frames, pa.binary())],
            names=["position", "records", "drop", "frame"])


def _compact_segments(spark: SparkSession, data_dir: str, inputs: list[SegmentPlace],
                      staging: str, target: str, retention_ms: int, now_ms: int,
                      segment_bytes: int, *, temporary: bool,
                      ) -> tuple[SparkCompactionStats, list[Segment]]:
    """Run the job, then cut and write the output segments into ``target`` (under
    temporary names when ``temporary``); returns the stats and the segments written."""
    frame = survivors(spark, data_dir, inputs, now_ms - retention_ms)
    frame.orderBy("position").write.mode("overwrite").parquet(staging)
    cut = CompactedSegments(inputs[0].base, segment_bytes)
    outputs: list[Segment] = []
    records_before = dropped = 0
    for batch in _staged_batches(staging):
        records_before += _sum(batch.column("records"))
        dropped += _sum(batch.column("drop"))
        for done in _cut_batch(cut, batch):
            outputs.append(done.write(target, temporary=temporary))
    outputs.append(cut.finish(_input_end(inputs)).write(target, temporary=temporary))
    records_after = sum(s.count for s in outputs)
    bytes_before = sum(os.path.getsize(s.path) for s in inputs)
    stats = SparkCompactionStats(
        segments_before=len(inputs), segments_after=len(outputs),
        records_before=records_before, records_after=records_after,
        bytes_before=bytes_before, bytes_after=sum(s.size for s in outputs),
        tombstones_dropped=dropped, skipped=False)
    if records_after == records_before and len(outputs) >= len(inputs):
        stats = dataclasses.replace(stats, skipped=True)
    return stats, outputs


def _cut_batch(cut: CompactedSegments, batch: pa.RecordBatch) -> Iterator[CompactedSegment]:
    """Hand the batch's kept frames to ``cut``, as views into the batch's own buffer;
    the segments they complete."""
    import numpy as np
    import pyarrow.compute as pc

    keep = batch.filter(pc.invert(batch.column("drop")))
    if keep.num_rows == 0:
        return
    frames = keep.column("frame")
    positions = keep.column("position").to_pylist()
    buffers = frames.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int32, count=len(frames) + 1,
                            offset=frames.offset * 4).tolist()
    data = memoryview(buffers[2])
    for i, position in enumerate(positions):
        done = cut.add(data[offsets[i]:offsets[i + 1]], position)
        if done is not None:
            yield done


def _sum(column: pa.Array | pa.ChunkedArray) -> int:
    import pyarrow.compute as pc

    total = pc.sum(column).as_py()
    return int(total or 0)


def _staged_batches(staging: str) -> Iterator[pa.RecordBatch]:
    """The staged rows in position order: Spark writes one sorted part file per range."""
    import pyarrow.parquet as pq

    for path in sorted(glob.glob(os.path.join(staging, "part-*.parquet"))):
        yield from pq.ParquetFile(path).iter_batches(batch_size=65_536)


def _input_end(inputs: list[SegmentPlace]) -> int:
    """Where the last input ends: its sealed end, or (unsealed) where the next segment starts."""
    last = inputs[-1]
    if last.sealed_end is not None:
        return last.sealed_end
    assert last.next_base is not None
    return last.next_base


def _fsync_tree(root: str) -> None:
    for directory, _dirs, files in os.walk(root):
        for name in files:
            fd = os.open(os.path.join(directory, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(directory)

