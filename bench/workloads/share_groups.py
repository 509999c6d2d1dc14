"""KIP-932 share groups: records/s through ShareFetch + ShareAcknowledge with 1, 4 and 16
consumers on one partition, and the server's CPU per acknowledged record.

Each run takes a fresh share group (share.auto.offset.reset=earliest) over the same
RECORDS records, produced beforehand in batches of BATCH. Each consumer has its own
connection and alternates, one request in flight: ShareFetch (up to BATCH records,
long-polling MAX_WAIT_MS for records another member releases or the log gains), then a
ShareAcknowledge ACCEPTing every range it acquired, as a KafkaShareConsumer in explicit
mode with commitSync does. The wall time runs from the first fetch until the last
record is acknowledged; the server CPU is over the whole phase.

kcsim only: the floor has no share groups.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from ..admin import ensure_topic
from ..client import BenchError, Frame, LoadClient, message_class, request
from ..harness import RunContext, Side, figures, outcomes
from ..measure import CpuMeter
from ..records import batch
from ..registry import Figure, at_least, workload

PRODUCE, ALTER_CONFIGS, HEARTBEAT, FETCH, ACK = 0, 44, 76, 78, 79
GROUP_RESOURCE, SET = 32, 0
ACCEPT = 1
TOPIC = "bench-share"
BATCH = 500
MAX_WAIT_MS = 200
CONSUMERS = (1, 4, 16)
TARGET_RATE = 20_000.0  # records acknowledged per second
KCSIM_ARGS = ["--fsync", "never"]


def _produce(client: LoadClient, records: int) -> None:
    cls = message_class(PRODUCE, "request")
    values = [b"x" * 100] * BATCH
    for _ in range(records // BATCH):
        resp = client.call(request(PRODUCE, 9, transactional_id=None, acks=1, timeout_ms=30000,
                                   topic_data=[cls.TopicProduceData(name=TOPIC, partition_data=[
                                       cls.PartitionProduceData(index=0, records=batch(values))])]))
        error = resp.responses[0].partition_responses[0].error_code
        if error:
            raise BenchError(f"Produce answered error {error}")


def _earliest(client: LoadClient, group: str) -> None:
    cls = message_class(ALTER_CONFIGS, "request")
    resp = client.call(request(ALTER_CONFIGS, 1, validate_only=False, resources=[
        cls.AlterConfigsResource(resource_type=GROUP_RESOURCE, resource_name=group, configs=[
            cls.AlterableConfig(name="share.auto.offset.reset", config_operation=SET,
                                value="earliest")])]))
    if resp.responses[0].error_code:
        raise BenchError(f"IncrementalAlterConfigs answered error {resp.responses[0].error_code}")


class Consumer:
    """One share consumer: its membership, share session and the ranges it holds."""

    def __init__(self, group: str, topic_id: uuid.UUID) -> None:
        self.group, self.topic_id = group, topic_id
        self.member_id = uuid.uuid4().hex
        self.session_epoch = 0
        self.held: list[tuple[int, int]] = []

    def join(self, client: LoadClient, conn: int) -> None:
        resp = client.call(request(HEARTBEAT, 1, group_id=self.group, member_id=self.member_id,
                                   member_epoch=0, rack_id=None,
                                   subscribed_topic_names=[TOPIC]), conn=conn)
        if resp.error_code:
            raise BenchError(f"ShareGroupHeartbeat answered error {resp.error_code}")

    def next_frame(self) -> Frame:
        epoch, self.session_epoch = self.session_epoch, self.session_epoch + 1
        if not self.held:
            F = message_class(FETCH, "request")
            return request(FETCH, 2, group_id=self.group, member_id=self.member_id,
                           share_session_epoch=epoch, max_wait_ms=MAX_WAIT_MS, min_bytes=1,
                           max_records=BATCH, batch_size=BATCH,
                           topics=[F.FetchTopic(topic_id=self.topic_id, partitions=[
                               F.FetchPartition(partition_index=0, acknowledgement_batches=[])])],
                           forgotten_topics_data=[])
        A = message_class(ACK, "request")
        return request(ACK, 2, group_id=self.group, member_id=self.member_id,
                       share_session_epoch=epoch, topics=[A.AcknowledgeTopic(
                           topic_id=self.topic_id, partitions=[A.AcknowledgePartition(
                               partition_index=0, acknowledgement_batches=[
                                   A.AcknowledgementBatch(first_offset=a, last_offset=b,
                                                          acknowledge_types=[ACCEPT])
                                   for a, b in self.held])])])

    def answered(self, api_key: int, resp: Any) -> int:
        """The records this answer acknowledged (a ShareAcknowledge's), else 0."""
        if resp.error_code:
            raise BenchError(f"share request {api_key} answered error {resp.error_code}")
        for topic in resp.responses:
            for part in topic.partitions:
                if part.error_code:
                    raise BenchError(f"share request {api_key} answered partition error "
                                     f"{part.error_code}")
                if api_key == FETCH:
                    self.held += [(r.first_offset, r.last_offset) for r in part.acquired_records]
        if api_key != ACK:
            return 0
        done = sum(b - a + 1 for a, b in self.held)
        self.held = []
        return done


def _run(srv: Any, topic_id: uuid.UUID, consumers: int, records: int, label: str
         ) -> tuple[float, float]:
    """(records/s acknowledged, server CPU µs per record) for `consumers` on a new group."""
    group = f"bench-share-{label}-{uuid.uuid4().hex[:8]}"
    with LoadClient(srv.host, srv.port, connections=consumers) as client:
        _earliest(client, group)
        members = [Consumer(group, topic_id) for _ in range(consumers)]
        for i, m in enumerate(members):
            m.join(client, i)
        acked = [0]
        done_at: list[float] = []

        def next_frame(idx: int) -> Frame | None:
            if acked[0] >= records:
                return None
            return members[idx].next_frame()

        def on_response(idx: int, frame: Frame, raw: bytes) -> None:
            acked[0] += members[idx].answered(frame.api_key, frame.decode_response(raw))
            if acked[0] >= records and not done_at:
                done_at.append(time.perf_counter())

        with CpuMeter(srv.pid) as meter:
            start = time.perf_counter()
            client.run(next_frame, on_response, in_flight=1)
        assert meter.sample is not None
        if acked[0] != records:
            raise BenchError(f"{acked[0]} records acknowledged of {records}")
        wall = done_at[0] - start
        return records / wall, meter.sample.server / records * 1e6


def _measure(side: Side, records: int) -> None:
    srv = side.server
    with LoadClient(srv.host, srv.port) as client:
        topic = ensure_topic(client, TOPIC, 1)
        _produce(client, records)
    _run(srv, topic.topic_id, 4, records, "warmup")
    for n in CONSUMERS:
        rate, cpu = _run(srv, topic.topic_id, n, records, str(n))
        side.values[f"rate {n}"] = rate
        side.values[f"cpu {n}"] = cpu
    side.extra["records"] = records


@workload("share_groups", "groups", order=57)
def share_groups(ctx: RunContext) -> list[Figure]:
    """Share groups: records/s through ShareFetch + ShareAcknowledge, 1/4/16 consumers."""
    records = 20_000 if ctx.settings.quick else 100_000
    name = "share_groups"
    sides = []
    if "kcsim" in ctx.sides:
        ctx.log(f"{name}: kcsim, {records} records, {CONSUMERS} consumers on one partition")
        with ctx.kcsim(KCSIM_ARGS) as srv:
            side = Side(ctx, name, "kcsim", srv)
            side.attempt(lambda x: x.server.start())
            side.attempt(_measure, records)
        side.report_stderr()
        sides.append(side)
    rows: list[tuple[str, str, str, Any]] = []
    for n in CONSUMERS:
        rows.append((f"rate {n}", f"{n} share consumer(s), one partition: records acknowledged/s",
                     "rec/s", at_least(TARGET_RATE, "rec/s")))
        rows.append((f"cpu {n}", f"{n} share consumer(s): server CPU per acknowledged record",
                     "µs", None))
    return figures(name, outcomes(sides), rows)
