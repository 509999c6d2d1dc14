"""Produce then Fetch of 1 KiB messages on a 1-partition topic, in MB/s of message values.

Produce keeps several acks=1 requests of one batch each in flight; Fetch then
reads everything back from offset 0, one large request at a time, the way a
catching-up consumer does. MB = 10^6 bytes of record values (keys and batch
framing not counted).
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from .. import procstat
from ..admin import ensure_topic, fixed_response, floor_admin_table
from ..client import BenchError, Frame, LoadClient, PhaseResult, message_class, request
from ..harness import RunContext, Settings, Side, figures
from ..measure import CpuMeter, CpuSample
from ..records import batch, walk
from ..registry import Figure, at_least, workload

PRODUCE, FETCH = 0, 1
PRODUCE_V = 9
FETCH_V = 12
TOPIC = "bench-throughput"
TARGET_MB_S = 50.0
_RING = 8  # distinct batches cycled by the producer


def produce_frame(value_batch: bytes) -> Frame:
    cls = message_class(PRODUCE, "request")
    return request(PRODUCE, PRODUCE_V, transactional_id=None, acks=1, timeout_ms=30000,
                   topic_data=[cls.TopicProduceData(name=TOPIC, partition_data=[
                       cls.PartitionProduceData(index=0, records=value_batch)])])


def fetch_frame(offset: int, max_bytes: int) -> Frame:
    cls = message_class(FETCH, "request")
    return request(FETCH, FETCH_V, max_wait_ms=500, min_bytes=1, max_bytes=max_bytes,
                   isolation_level=0, session_id=0, session_epoch=-1, rack_id="",
                   forgotten_topics_data=[],
                   topics=[cls.FetchTopic(topic=TOPIC, partitions=[cls.FetchPartition(
                       partition=0, fetch_offset=offset, partition_max_bytes=max_bytes)])])


def _batches(s: Settings) -> list[bytes]:
    return [batch([os.urandom(s.record_bytes) for _ in range(s.batch_records)])
            for _ in range(_RING)]


def floor_table(s: Settings) -> dict[int, bytes]:
    """Admin answers plus a fixed Produce ack and a Fetch answer as full as kcsim's."""
    p = message_class(PRODUCE, "response")
    f = message_class(FETCH, "response")
    one = batch([os.urandom(s.record_bytes) for _ in range(s.batch_records)])
    count = max(1, s.fetch_max_bytes // len(one))
    records = b"".join(batch([os.urandom(s.record_bytes) for _ in range(s.batch_records)],
                             base_offset=i * s.batch_records) for i in range(count))
    table = floor_admin_table(TOPIC, 1)
    table[PRODUCE] = fixed_response(PRODUCE, PRODUCE_V, throttle_time_ms=0, responses=[
        p.TopicProduceResponse(name=TOPIC, partition_responses=[p.PartitionProduceResponse(
            index=0, error_code=0, base_offset=0, log_append_time_ms=-1, log_start_offset=0,
            record_errors=[], error_message=None)])])
    table[FETCH] = fixed_response(FETCH, FETCH_V, throttle_time_ms=0, error_code=0,
                                  session_id=0, responses=[f.FetchableTopicResponse(
                                      topic=TOPIC, topic_id=uuid.UUID(int=0), partitions=[
                                          f.PartitionData(partition_index=0, error_code=0,
                                                          high_watermark=count * s.batch_records,
                                                          last_stable_offset=-1,
                                                          log_start_offset=0,
                                                          aborted_transactions=None,
                                                          records=records)])])
    return table


class _Producer:
    """Cycles the batch ring and checks every acknowledgement."""

    def __init__(self, frames: list[Frame], per_batch: int, strict: bool) -> None:
        self.frames = frames
        self.per_batch = per_batch
        self.strict = strict
        self.i = 0
        self.acked = 0
        self.next_base = 0

    def next_frame(self, _idx: int) -> Frame:
        self.i += 1
        return self.frames[self.i % len(self.frames)]

    def on_response(self, _idx: int, frame: Frame, raw: bytes) -> None:
        part = frame.decode_response(raw).responses[0].partition_responses[0]
        if part.error_code != 0:
            raise BenchError(f"Produce answered error {part.error_code} ({part.error_message})")
        if self.strict and part.base_offset != self.next_base:
            raise BenchError(f"Produce assigned base offset {part.base_offset}, "
                             f"expected {self.next_base}")
        self.next_base = part.base_offset + self.per_batch
        self.acked += 1


class _Fetcher:
    """Reads from offset 0 until `total` records arrived, re-checking each batch's CRC."""

    def __init__(self, total: int, max_bytes: int, strict: bool) -> None:
        self.total = total
        self.max_bytes = max_bytes
        self.strict = strict
        self.offset = 0
        self.records = 0
        self.requests = 0

    def next_frame(self, _idx: int) -> Frame | None:
        if self.records >= self.total:
            return None
        return fetch_frame(self.offset, self.max_bytes)

    def on_response(self, _idx: int, frame: Frame, raw: bytes) -> None:
        resp = frame.decode_response(raw)
        if resp.error_code != 0:
            raise BenchError(f"Fetch answered top-level error {resp.error_code}")
        part = resp.responses[0].partitions[0]
        if part.error_code != 0:
            raise BenchError(f"Fetch at offset {self.offset} answered error {part.error_code}")
        got = walk(part.records or b"")
        if got.records == 0:
            raise BenchError(f"Fetch at offset {self.offset} returned no records "
                             f"(high watermark {part.high_watermark}, {self.records} of "
                             f"{self.total} records read)")
        if self.strict and not got.first_offset <= self.offset < got.next_offset:
            raise BenchError(f"Fetch at offset {self.offset} returned offsets "
                             f"{got.first_offset}..{got.next_offset - 1}")
        self.records += got.records
        self.offset = got.next_offset
        self.requests += 1


def _detail(result: PhaseResult, cpu: CpuSample, mb: float, **more: Any) -> dict[str, Any]:
    """What the JSON keeps beside a throughput figure."""
    return {"requests": result.requests, "mb": round(mb, 1), "seconds": round(result.elapsed, 3),
            "server_cpu_s": round(cpu.server, 3), "client_cpu_s": round(cpu.client, 3),
            "other_processes_cpu_share": round(cpu.other / cpu.wall, 2) if cpu.wall else None,
            **more}


def _measure(s: Settings) -> Any:
    def measure(side: Side) -> None:
        srv, extra = side.server, side.extra
        strict = srv.name == "kcsim"
        value_bytes = s.record_bytes * s.batch_records
        with LoadClient(srv.host, srv.port) as client:
            ensure_topic(client, TOPIC, 1)
            producer = _Producer([produce_frame(b) for b in _batches(s)], s.batch_records, strict)
            k = s.produce_in_flight
            client.run(producer.next_frame, producer.on_response, in_flight=k, duration=s.warmup)
            cap = s.produce_mib * 1024 * 1024 // value_bytes
            with CpuMeter(srv.pid) as pm:
                prod = client.run(producer.next_frame, producer.on_response, in_flight=k,
                                  duration=s.produce_seconds, max_requests=cap)
            rss = procstat.rss_bytes(srv.pid)
            total = producer.acked * s.batch_records

            warm = _Fetcher(1, s.fetch_max_bytes, strict)
            client.run(warm.next_frame, warm.on_response)
            fetcher = _Fetcher(total, s.fetch_max_bytes, strict)
            with CpuMeter(srv.pid) as fm:
                fetch = client.run(fetcher.next_frame, fetcher.on_response)
        assert pm.sample is not None and fm.sample is not None
        produced_mb = prod.requests * value_bytes / 1e6
        fetched_mb = fetcher.records * s.record_bytes / 1e6
        extra["produce"] = _detail(prod, pm.sample, produced_mb, in_flight=k,
                                   records_per_batch=s.batch_records)
        extra["fetch"] = _detail(fetch, fm.sample, fetched_mb, records=fetcher.records,
                                 max_bytes=s.fetch_max_bytes)
        side.values.update({
            "produce": produced_mb / prod.elapsed,
            "produce cpu": pm.sample.server * 1e3 / max(produced_mb, 1e-9),
            "fetch": fetched_mb / fetch.elapsed,
            "fetch cpu": fm.sample.server * 1e3 / max(fetched_mb, 1e-9),
            "rss": rss / 2**20,
        })

    return measure


@workload("produce_fetch", "throughput", order=30)
def produce_fetch(ctx: RunContext) -> list[Figure]:
    """Produce (v9, acks=1) then Fetch (v12) 1 KiB messages, MB/s each."""
    s = ctx.settings
    outcomes = ctx.side_by_side("produce_fetch", floor_table(s), _measure(s))
    produce = figures("produce", outcomes, [
        ("produce", "throughput, 1 KiB messages", "MB/s", at_least(TARGET_MB_S, "MB/s")),
        ("produce cpu", "server CPU per MB", "ms", None),
        ("rss", "server RSS after produce", "MiB", None),
    ])
    fetch = figures("fetch", outcomes, [
        ("fetch", "throughput, 1 KiB messages", "MB/s", at_least(TARGET_MB_S, "MB/s")),
        ("fetch cpu", "server CPU per MB", "ms", None),
    ])
    for fig in produce + fetch:  # the run's details ride on the throughput rows
        key = fig.workload
        if fig.metric.startswith("throughput"):
            fig.extra = {side: o.extra.get(key) for side, o in outcomes.items()
                         if o.extra.get(key) is not None}
    return produce + fetch
