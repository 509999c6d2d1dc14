"""The log cleaner of a topic partition beside the record log's compaction, per record.

- log_cleaner: a partition log of 1,000,000 records (100 a batch, as a producer with
  linger sends them; 8-byte keys, 32-byte values, each key written twice, so half
  are superseded) is cleaned as a compacted topic's is (`kcsim.storage.clean_partition`
  over the broker's Kafka batch reader, `server/state/log_cleaner.py`); beside it,
  `storage.compact()` of a record log of 1,000,000 OffsetCommit records, half
  superseded too (storage_replay's log). Per record, each; the target is that the
  cleaner costs at most twice what the record log's compaction does.

In this process, on files in a temporary directory; `--quick` uses a fifth of the records.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..registry import Figure, at_most, workload
from .storage import _compact, _data_dir, build_log, record_count, segment_bytes

if TYPE_CHECKING:
    from pathlib import Path

    from ..harness import RunContext

BATCH_RECORDS = 100
RATIO_TARGET = 2.0


def _write_partition(directory: Path, records: int) -> None:
    from kcsim.protocol.record_batch import encode_batch
    from kcsim.storage import PartitionLog

    keys = records // 2
    now = int(time.time() * 1000)
    value = b"v" * 32
    with PartitionLog.open(directory) as log:
        offset = 0
        for first in range(0, records, BATCH_RECORDS):
            batch, info = encode_batch(offset, [
                (b"%08d" % ((first + i) % keys), value, now) for i in range(BATCH_RECORDS)])
            log.append(offset, info.last_offset_delta, batch, info.max_timestamp)
            offset += BATCH_RECORDS
        log.roll()
        log.sync()


def _clean_partition(directory: Path) -> dict[str, Any]:
    from kcsim.server.state.log_cleaner import KafkaBatches
    from kcsim.storage import PartitionLog, clean_partition

    with PartitionLog.open(directory) as log:
        segments = [(base, end) for base, end, _size in log.segment_ranges()[:-1]]
        bytes_before = log.size_bytes
        started = time.perf_counter()
        cleaned = clean_partition(log, segments, KafkaBatches([], 0), expire_before_ms=0)
        elapsed = time.perf_counter() - started
        return {"clean_s": elapsed, "records_before": cleaned.records_before,
                "records_after": cleaned.records_after, "segments": len(segments),
                "bytes_before": bytes_before, "bytes_after": log.size_bytes}


@workload("log_cleaner", "storage", order=63, in_process=True)
def log_cleaner(ctx: RunContext) -> list[Figure]:
    """A topic partition's cleaning beside the record log's compaction, per record."""
    if "kcsim" not in ctx.sides:
        return []
    records = record_count(ctx.settings)
    values: dict[str, float] = {}
    extra: dict[str, Any] = {}
    error: str | None = None
    with _data_dir() as data_dir:
        try:
            ctx.log(f"log_cleaner: writing a partition of {records:,} records")
            _write_partition(data_dir / "partition", records)
            cleaned = _clean_partition(data_dir / "partition")
            extra["partition"] = cleaned
            values["cleaner"] = cleaned["clean_s"] / cleaned["records_before"] * 1e9
            ctx.log(f"log_cleaner: writing a record log of {records:,} records")
            size = segment_bytes(ctx.settings)
            extra["log"] = build_log(data_dir / "log", records // 2, passes=2, segment_bytes=size)
            compaction = _compact(data_dir / "log", size)
            extra["compaction"] = compaction
            values["compact"] = compaction["compact_s"] / compaction["records_before"] * 1e9
            values["ratio"] = values["cleaner"] / values["compact"]
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            ctx.log(f"[red]log_cleaner failed:[/] {error}")

    def fig(key: str, metric: str, unit: str, target: Any = None) -> Figure:
        return Figure("log_cleaner", metric, unit, values.get(key), None, target,
                      kcsim_error=None if key in values else error or "not measured",
                      extra=extra if key == "cleaner" else {})

    label = f"{records:,} records, half superseded"
    return [
        fig("cleaner", f"cleaning a compacted topic's partition, {label}, per record", "ns"),
        fig("compact", f"compaction of kcsim's record log, {label}, per record", "ns"),
        fig("ratio", "  the cleaner's cost over the record log's", "x",
            at_most(RATIO_TARGET, "x")),
    ]
