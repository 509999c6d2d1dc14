"""The ``kcsim`` PySpark data source: a data directory's logs as DataFrames.

``spark.read.format("kcsim").load(data_dir)`` with ``.option("kind", ...)``:

- ``records`` (the default): one row per record of the coordinator's log, in
  log order, key and value fields flattened into typed columns (``columns``);
- ``raw``: the same records with their key and value as encoded (compaction);
- ``messages``: the produced data, with the columns of Spark's Kafka source;
- ``segments``: one row per segment file with what reading it found (torn
  tails and damage included): the diagnostic view, which never fails;
- ``events``: the group events the log holds, one row each (``events``).

``spark.readStream.format("kcsim").load(data_dir)`` tails the ``records`` of a
live server's log (``stream_source``).

One Spark partition per segment file. Equality and IN filters on ``group``,
``topic`` and ``record_type`` (records: other record types are not even
decoded), ``segment`` (raw), ``topic`` and ``partition``
(messages) and ``group``, ``group_type`` and ``kind`` (events) are pushed down when ``spark.sql.python.filterPushdown.enabled`` is on (see
:func:`register`); the Python data source API offers no column pruning.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    EqualTo,
    In,
    InputPartition,
)
from pyspark.sql.pandas.types import from_arrow_schema

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    import pyarrow as pa
    from pyspark.sql import SparkSession
    from pyspark.sql.datasource import Filter
    from pyspark.sql.types import StructType

KINDS = ("records", "raw", "messages", "segments", "events")
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


@functools.cache
def _columns() -> Any:
    from .columns import record_columns
    from .registry import record_types

    return record_columns(record_types())


def arrow_schema(kind: str) -> pa.Schema:
    from . import arrow_batches

    if kind == "records":
        return _columns().schema
    if kind == "events":
        from .events import EVENT_SCHEMA

        return EVENT_SCHEMA
    return {"raw": arrow_batches.RAW_SCHEMA, "messages": arrow_batches.MESSAGE_SCHEMA,
            "segments": arrow_batches.SEGMENT_SCHEMA}[kind]


class KcsimDataSource(DataSource):
    """Options: ``path`` (the data directory, as given to load()), ``kind``."""

    @classmethod
    def name(cls) -> str:
        return "kcsim"

    def __init__(self, options: Any) -> None:
        super().__init__(options)
        self.kind = str(options.get("kind", "records")).lower()
        if self.kind not in KINDS:
            raise ValueError(f"kcsim data source: unknown kind {self.kind!r} "
                             f"(one of {', '.join(KINDS)})")
        path = options.get("path")
        if not path:
            raise ValueError("kcsim data source: give the data directory to load()")
        self.data_dir = str(path)

    def schema(self) -> StructType:
        return from_arrow_schema(arrow_schema(self.kind))

    def reader(self, schema: StructType) -> DataSourceReader:
        return KcsimReader(self.data_dir, self.kind)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from .stream_source import stream_reader

        return stream_reader(self.data_dir, self.kind, self.options)


class KcsimPushdownDataSource(KcsimDataSource):
    """The same source, for sessions with Python filter push-down on."""

    def reader(self, schema: StructType) -> DataSourceReader:
        return KcsimPushdownReader(self.data_dir, self.kind)


# Columns whose equality filters a kind applies itself.
PUSHABLE: dict[str, tuple[str, ...]] = {"records": ("group", "topic", "record_type"),
                                        "raw": ("segment",),
                                        "messages": ("topic", "partition"),
                                        "events": ("group", "group_type", "kind")}


class KcsimReader(DataSourceReader):

    def __init__(self, data_dir: str, kind: str) -> None:
        self.data_dir = data_dir
        self.kind = kind
        self.only: dict[str, frozenset[Any]] = {}

    def partitions(self) -> list[InputPartition]:
        from .meta_log import plan_segments, topic_names
        from .partition_data import plan_partition_segments

        if self.kind == "messages" or self.kind == "segments":
            topics = self.only.get("topic")
            parts = self.only.get("partition")
            names = topic_names(self.data_dir, strict=self.kind == "messages")
            data = plan_partition_segments(self.data_dir, names,
                                           set(topics) if topics is not None else None,
                                           set(parts) if parts is not None else None)
            if self.kind == "messages":
                return [InputPartition(s) for s in data] or [InputPartition(None)]
            meta = [InputPartition(s) for s in plan_segments(self.data_dir)]
            return meta + [InputPartition(s) for s in data] or [InputPartition(None)]
        wanted = self.only.get("segment")
        return [InputPartition(s) for s in plan_segments(self.data_dir)
                if wanted is None or s.base in wanted] or [InputPartition(None)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        from kcsim.storage import SegmentPlace

        from . import arrow_batches

        segment = partition.value
        if segment is None:
            return
        if self.kind == "records":
            yield from arrow_batches.record_batches(segment, _columns(), self.only.get("group"),
                                                    self.only.get("topic"),
                                                    self.only.get("record_type"))
        elif self.kind == "raw":
            yield from arrow_batches.raw_batches(segment)
        elif self.kind == "events":
            from .events import event_batches

            yield from event_batches(segment, self.only)
        elif self.kind == "messages":
            yield from arrow_batches.message_batches(segment, self.only.get("partition"))
        else:
            row = (arrow_batches.meta_segment_row(segment) if isinstance(segment, SegmentPlace)
                   else arrow_batches.partition_segment_row(segment))
            yield pa.RecordBatch.from_pylist([row], schema=arrow_batches.SEGMENT_SCHEMA)


class KcsimPushdownReader(KcsimReader):
    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        pushable = PUSHABLE.get(self.kind, ())
        for f in filters:
            values = _equality(f, pushable)
            if values is None:
                yield f
                continue
            column, wanted = values
            known = self.only.get(column)
            self.only[column] = wanted if known is None else known & wanted


def _equality(f: Filter, columns: tuple[str, ...]) -> tuple[str, frozenset[Any]] | None:
    """(column, accepted values) of ``column = v`` or ``column IN (...)`` on a pushable column."""
    if isinstance(f, (EqualTo, In)) and len(f.attribute) == 1 and f.attribute[0] in columns:
        values = (f.value,) if isinstance(f, EqualTo) else tuple(f.value)
        return f.attribute[0], frozenset(values)
    return None


def register(spark: SparkSession) -> None:
    """Make ``format("kcsim")`` available in ``spark``, with push-down where it is on."""
    enabled = str(spark.conf.get(PUSHDOWN_CONF, "false")).lower() == "true"
    spark.dataSource.register(KcsimPushdownDataSource if enabled else KcsimDataSource)
