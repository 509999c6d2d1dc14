"""Retention and the log cleaner against a model of Kafka's log.

Random produce, DeleteRecords, clock, roll-and-maintain and restart steps run against
a partition (on disk and in memory) and against a few lines that say what Kafka's
log holds: segments cut by size, whole segments deleted by retention.ms once their
largest timestamp is old enough (the active one too, once every record in it is),
each key's newest record kept by the cleaner in the closed segments, tombstones
until delete.retention.ms, offsets where they were. What a fetch from the log start
reads must be the model's records, before and after every restart.
"""

from __future__ import annotations

import tempfile
import uuid
from dataclasses import dataclass, field
from typing import Any

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcsim.protocol.record_batch import batch_records, encode_batch
from kcsim.server.config import Config
from kcsim.server.maintenance import LogMaintenance
from kcsim.server.shell.clock import Clock
from kcsim.server.state.broker_state import BrokerState
from kcsim.server.state.topics import TopicRegistry
from kcsim.storage import PartitionLog

SEGMENT_BYTES = 400
FRAME = 32  # a partition log's frame around each batch
KEYS = [b"a", b"b", b"c", b"d"]


@dataclass
class Batch:
    base: int
    size: int
    records: list[tuple[int, bytes, bytes | None, int]]  # (offset, key, value, timestamp)

    @property
    def end(self) -> int:
        return self.base + len(self.records)


@dataclass
class Segment:
    base: int
    batches: list[Batch] = field(default_factory=list)
    size: int = 0


class KafkaLog:
    """What Kafka's log holds, told as plainly as possible."""

    def __init__(self, policy: str, retention_ms: int, delete_retention_ms: int) -> None:
        self.policy = policy
        self.retention_ms = retention_ms
        self.delete_retention_ms = delete_retention_ms
        self.segments = [Segment(0)]
        self.start = 0
        self.end = 0
        self.removed: set[int] = set()  # offsets the cleaner removed

    def append(self, batch: Batch) -> None:
        active = self.segments[-1]
        if active.size and active.size + batch.size + FRAME > SEGMENT_BYTES:
            active = Segment(batch.base)
            self.segments.append(active)
        active.batches.append(batch)
        active.size += batch.size + FRAME
        self.end = batch.end

    def roll(self) -> None:
        if self.segments[-1].batches:
            self.segments.append(Segment(self.end))

    def move_start(self, offset: int) -> None:
        if offset <= self.start:
            return
        self.start = offset
        if offset == self.end:
            self.roll()
        while len(self.segments) > 1 and self.segments[1].base <= offset:
            del self.segments[0]

    def largest_timestamp(self, segment: Segment) -> int:
        """Over the batches that hold an offset at or above the log start."""
        return max((r[3] for b in segment.batches if b.end > self.start for r in b.records),
                   default=-1)

    def retain(self, now: int) -> None:
        if "delete" not in self.policy or self.retention_ms < 0:
            return
        count = 0
        for i, segment in enumerate(self.segments):
            if i == len(self.segments) - 1 and not segment.batches:
                break
            if now - self.largest_timestamp(segment) <= self.retention_ms:
                break
            count += 1
        if count:
            self.move_start(self.segments[count].base if count < len(self.segments) else self.end)

    def clean(self, now: int) -> None:
        if "compact" not in self.policy:
            return
        closed = [r for s in self.segments[:-1] for b in s.batches for r in b.records
                  if r[0] not in self.removed]
        newest = {key: offset for offset, key, _v, _ts in closed}
        for offset, key, value, ts in closed:
            if newest[key] != offset or (value is None and ts < now - self.delete_retention_ms):
                self.removed.add(offset)

    def visible(self) -> list[tuple[int, bytes, bytes | None]]:
        return [(o, k, v) for s in self.segments for b in s.batches for o, k, v, _ts in b.records
                if o >= self.start and o not in self.removed]


record = st.tuples(st.sampled_from(KEYS), st.one_of(st.none(), st.binary(max_size=12)))
step = st.one_of(
    st.tuples(st.just("produce"), st.lists(record, min_size=1, max_size=4),
              st.integers(-3000, 0)),
    st.tuples(st.just("delete_records"), st.floats(0, 1)),
    st.tuples(st.just("advance"), st.integers(1, 4000)),
    st.tuples(st.just("maintain"), st.booleans()),
    st.tuples(st.just("restart")),
)


def fetched(partition: Any) -> list[tuple[int, bytes | None, bytes | None]]:
    out = []
    for batch in partition.read(partition.log_start_offset, 1 << 30):
        for rec in batch_records(batch, int.from_bytes(batch[:8], "big"), _no_codec):
            if rec.offset >= partition.log_start_offset:
                out.append((rec.offset, rec.key, rec.value))
    return out


def _no_codec(codec: int, data: bytes) -> bytes:
    raise AssertionError("the test writes uncompressed batches")


async def run_steps(steps: list[Any], policy: str, retention_ms: int, delete_retention_ms: int,
                    on_disk: bool) -> None:
    directory = tempfile.mkdtemp(prefix="kcsim-maintenance-")

    def registry() -> TopicRegistry:
        if not on_disk:
            return TopicRegistry()
        return TopicRegistry(lambda topic_id, index: PartitionLog.open(
            f"{directory}/{topic_id.hex}/{index}", segment_bytes=SEGMENT_BYTES))

    configs = {"cleanup.policy": policy, "retention.ms": str(retention_ms),
               "delete.retention.ms": str(delete_retention_ms)}
    topic_id = uuid.uuid4()
    clock = Clock()
    clock.freeze()
    topics = registry()
    state = BrokerState(Config(in_memory=True), topics, None, clock)
    maintenance = LogMaintenance(state, clock, lambda: None)
    partition = topics.create("t", 1, configs, topic_id).partitions[0]
    partition.store.segment_bytes = SEGMENT_BYTES
    model = KafkaLog(policy, retention_ms, delete_retention_ms)
    for kind, *args in steps:
        now = clock.now_ms()
        if kind == "produce":
            records, age = args
            ts = now + age
            batch, info = encode_batch(0, [(k, v, ts) for k, v in records])
            base = partition.append(batch, info)
            model.append(Batch(base, len(batch), [(base + i, k, v, ts)
                                                  for i, (k, v) in enumerate(records)]))
        elif kind == "delete_records":
            offset = model.start + round(args[0] * (model.end - model.start))
            partition.move_log_start(offset)
            model.move_start(offset)
        elif kind == "advance":
            clock.advance(args[0])
        elif kind == "maintain":
            await maintenance.run_now(roll=args[0])
            if args[0]:
                model.roll()
            model.retain(now)
            model.clean(now)
        elif kind == "restart" and on_disk:
            topics.close()
            topics = registry()
            state.topics = topics
            partition = topics.create("t", 1, configs, topic_id).partitions[0]
            partition.store.segment_bytes = SEGMENT_BYTES
        assert (partition.log_start_offset, partition.log_end_offset) == (model.start, model.end)
        assert fetched(partition) == model.visible(), (kind, args)
    topics.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, max_size=40),
       policy=st.sampled_from(["delete", "compact", "compact,delete"]),
       retention_ms=st.sampled_from([-1, 1000, 5000]),
       delete_retention_ms=st.sampled_from([0, 2000, 86400000]),
       on_disk=st.booleans())
def test_fetch_reads_what_kafkas_log_holds(steps: list[Any], policy: str, retention_ms: int,
                                           delete_retention_ms: int, on_disk: bool) -> None:
    trio.run(run_steps, steps, policy, retention_ms, delete_retention_ms, on_disk)


class Broker:
    """One in-memory topic, its maintenance and a frozen clock, for the rules the model
    above leaves out."""

    def __init__(self, **configs: str) -> None:
        self.clock = Clock()
        self.clock.freeze()
        topics = TopicRegistry()
        self.maintenance = LogMaintenance(
            BrokerState(Config(in_memory=True), topics, None, self.clock), self.clock,
            lambda: None)
        self.partition = topics.create("t", 1, configs).partitions[0]
        self.partition.store.segment_bytes = SEGMENT_BYTES

    def produce(self, *records: tuple[bytes, bytes | None]) -> None:
        batch, info = encode_batch(0, [(k, v, self.clock.now_ms()) for k, v in records])
        self.partition.append(batch, info)

    def segments(self) -> list[tuple[int, int, int]]:
        return list(self.partition.store.segment_ranges())


async def retention_bytes() -> None:
    broker = Broker(**{"retention.bytes": "0", "retention.ms": "-1"})
    for i in range(9):
        broker.produce((b"k", b"%d" % i * 40))
    *closed, active = broker.segments()
    total = sum(size for _b, _e, size in closed) + active[2]
    # Kafka deletes a segment while the log without it is still over retention.bytes.
    setting = total - closed[0][2] - 1
    broker.maintenance.state.topics.get("t").configs["retention.bytes"] = str(setting)
    await broker.maintenance.run_now()
    assert broker.partition.log_start_offset == closed[1][0]
    broker.maintenance.state.topics.get("t").configs["retention.bytes"] = "0"
    await broker.maintenance.run_now()  # everything, the active segment too
    assert broker.partition.log_start_offset == broker.partition.log_end_offset == 9


def test_retention_bytes_deletes_the_oldest_segments_while_the_log_is_over_it() -> None:
    trio.run(retention_bytes)


async def cleaner_timing() -> None:
    broker = Broker(**{"cleanup.policy": "compact", "min.compaction.lag.ms": "60000",
                       "min.cleanable.dirty.ratio": "0.5"})
    for i in range(8):
        broker.produce((b"k", b"%d" % i * 40))
    await broker.maintenance.run_now(roll=True)
    assert len(fetched(broker.partition)) == 8  # younger than min.compaction.lag.ms
    broker.clock.advance(60_001)
    await broker.maintenance.run_now(force=False)
    assert fetched(broker.partition) == [(7, b"k", b"7" * 40)]  # all of it was dirty
    broker.produce((b"k", b"8" * 40))
    broker.clock.advance(60_001)
    await broker.maintenance.run_now(force=False, roll=True)
    # The new segment is a small part of what is cleanable: under the dirty ratio.
    assert [offset for offset, _k, _v in fetched(broker.partition)] == [7, 8]
    await broker.maintenance.run_now(roll=True)
    assert fetched(broker.partition) == [(8, b"k", b"8" * 40)]


def test_the_cleaner_waits_for_min_compaction_lag_and_the_dirty_ratio() -> None:
    trio.run(cleaner_timing)
