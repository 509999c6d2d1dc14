"""Exactly-once: a consume-transform-produce loop committing every 100 messages, with and
without transactions, and the server CPU a transaction adds.

One connection runs the loop as a client library does, one request at a time: Fetch 100
input messages, then with transactions AddPartitionsToTxn, a transactional Produce of
the 100 transformed messages, AddOffsetsToTxn, TxnOffsetCommit and EndTxn (commit);
without, a plain Produce and an OffsetCommit. The floor has no transactions: these
figures are kcsim's alone.
"""

from __future__ import annotations

import time

from ..admin import ensure_topic
from ..client import BenchError, Frame, LoadClient, message_class, request
from ..harness import RunContext, Side, figures, outcomes
from ..measure import CpuMeter
from ..records import batch
from ..registry import Figure, at_least, at_most, workload

PRODUCE, FETCH, OFFSET_COMMIT, INIT, ADD_PARTITIONS, ADD_OFFSETS, END, TXN_COMMIT = (
    0, 1, 8, 22, 24, 25, 26, 28)
PER_TRANSACTION = 100
INPUT_BATCHES = 50
SOURCE, SINK, GROUP, TXN_ID = "bench-txn-in", "bench-txn-out", "bench-txn", "bench-txn-producer"
TXNS_TARGET = 200.0
ADDED_CPU_TARGET_US = 1000.0


def _check(what: str, code: int) -> None:
    if code != 0:
        raise BenchError(f"{what} answered error {code}")


def produce_frame(topic: str, records: bytes, txn_id: str | None) -> Frame:
    cls = message_class(PRODUCE, "request")
    return request(PRODUCE, 9, transactional_id=txn_id, acks=-1, timeout_ms=30000,
                   topic_data=[cls.TopicProduceData(name=topic, partition_data=[
                       cls.PartitionProduceData(index=0, records=records)])])


def fetch_frame(offset: int) -> Frame:
    cls = message_class(FETCH, "request")
    return request(FETCH, 12, max_wait_ms=0, min_bytes=0, max_bytes=1, isolation_level=1,
                   session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                   topics=[cls.FetchTopic(topic=SOURCE, partitions=[cls.FetchPartition(
                       partition=0, fetch_offset=offset, partition_max_bytes=1)])])


class Loop:
    """The client's side of the loop: input position, producer id, epoch and sequence."""

    def __init__(self, client: LoadClient, transactional: bool) -> None:
        self.client = client
        self.transactional = transactional
        self.offset = 0
        self.seq = 0
        self.values = [b"%06d" % i for i in range(PER_TRANSACTION)]
        self.pid = self.epoch = -1
        if transactional:
            init = client.call(request(INIT, 4, transactional_id=TXN_ID,
                                       transaction_timeout_ms=60000, producer_id=-1,
                                       producer_epoch=-1))
            _check("InitProducerId", init.error_code)
            self.pid, self.epoch = init.producer_id, init.producer_epoch

    def step(self) -> None:
        call = self.client.call
        fetched = call(fetch_frame(self.offset)).responses[0].partitions[0]
        _check("Fetch", fetched.error_code)
        if not fetched.records:
            raise BenchError(f"Fetch from {self.offset} returned nothing")
        self.offset = (self.offset + PER_TRANSACTION) % (INPUT_BATCHES * PER_TRANSACTION)
        if not self.transactional:
            done = call(produce_frame(SINK, batch(self.values), None))
            _check("Produce", done.responses[0].partition_responses[0].error_code)
            cls = message_class(OFFSET_COMMIT, "request")
            committed = call(request(OFFSET_COMMIT, 8, group_id=GROUP,
                                     generation_id_or_member_epoch=-1, member_id="",
                                     group_instance_id=None, topics=[
                                         cls.OffsetCommitRequestTopic(name=SOURCE, partitions=[
                                             cls.OffsetCommitRequestPartition(
                                                 partition_index=0, committed_offset=self.offset,
                                                 committed_leader_epoch=-1,
                                                 committed_metadata="")])]))
            _check("OffsetCommit", committed.topics[0].partitions[0].error_code)
            return
        add = message_class(ADD_PARTITIONS, "request")
        added = call(request(ADD_PARTITIONS, 3, v3_and_below_transactional_id=TXN_ID,
                             v3_and_below_producer_id=self.pid,
                             v3_and_below_producer_epoch=self.epoch, v3_and_below_topics=[
                                 add.AddPartitionsToTxnTopic(name=SINK, partitions=[0])]))
        _check("AddPartitionsToTxn",
               added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code)
        records = batch(self.values, producer_id=self.pid, producer_epoch=self.epoch,
                        base_sequence=self.seq, transactional=True)
        self.seq += PER_TRANSACTION
        done = call(produce_frame(SINK, records, TXN_ID))
        _check("Produce", done.responses[0].partition_responses[0].error_code)
        _check("AddOffsetsToTxn", call(request(
            ADD_OFFSETS, 3, transactional_id=TXN_ID, producer_id=self.pid,
            producer_epoch=self.epoch, group_id=GROUP)).error_code)
        cls = message_class(TXN_COMMIT, "request")
        sent = call(request(TXN_COMMIT, 3, transactional_id=TXN_ID, group_id=GROUP,
                            producer_id=self.pid, producer_epoch=self.epoch,
                            generation_id_or_member_epoch=-1,
                            member_id="", group_instance_id=None, topics=[
                                cls.TxnOffsetCommitRequestTopic(name=SOURCE, partitions=[
                                    cls.TxnOffsetCommitRequestPartition(
                                        partition_index=0, committed_offset=self.offset,
                                        committed_leader_epoch=-1, committed_metadata="")])]))
        _check("TxnOffsetCommit", sent.topics[0].partitions[0].error_code)
        _check("EndTxn", call(request(END, 3, transactional_id=TXN_ID, producer_id=self.pid,
                                      producer_epoch=self.epoch, committed=True)).error_code)


def _fill(client: LoadClient) -> None:
    for i in range(INPUT_BATCHES):
        values = [b"in-%d-%d" % (i, j) for j in range(PER_TRANSACTION)]
        done = client.call(produce_frame(SOURCE, batch(values), None))
        _check("Produce", done.responses[0].partition_responses[0].error_code)


def _run(side: Side, loop: Loop, key: str, seconds: float, warmup: float) -> None:
    end = time.perf_counter() + warmup
    while time.perf_counter() < end:
        loop.step()
    steps = 0
    with CpuMeter(side.server.pid) as meter:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            loop.step()
            steps += 1
    sample = meter.sample
    assert sample is not None
    side.values[f"{key} rate"] = steps / sample.wall
    side.values[f"{key} cpu"] = sample.server / steps * 1e6
    side.extra[key] = {"loops": steps, "messages": steps * PER_TRANSACTION,
                       "server_cpu_s": round(sample.server, 3),
                       "client_cpu_s": round(sample.client, 3), "wall_s": round(sample.wall, 3)}


def _measure(side: Side, seconds: float, warmup: float) -> None:
    srv = side.server
    with LoadClient(srv.host, srv.port) as client:
        ensure_topic(client, SOURCE, 1)
        ensure_topic(client, SINK, 1)
        _fill(client)
        _run(side, Loop(client, transactional=False), "plain", seconds, warmup)
        _run(side, Loop(client, transactional=True), "txn", seconds, warmup)
    side.values["added cpu"] = side.values["txn cpu"] - side.values["plain cpu"]


@workload("transactions", "transactions", order=60)
def transactions(ctx: RunContext) -> list[Figure]:
    """Consume-transform-produce committing every 100 messages, with and without
    transactions (kcsim only)."""
    sides = []
    seconds = ctx.settings.duration / 2
    if "kcsim" in ctx.sides:
        ctx.log(f"transactions: kcsim, {PER_TRANSACTION} messages per transaction")
        with ctx.kcsim() as srv:
            side = Side(ctx, "transactions", "kcsim", srv)
            side.attempt(lambda s: s.server.start())
            side.attempt(_measure, seconds, ctx.settings.warmup)
        side.report_stderr()
        sides.append(side)
    per = f"{PER_TRANSACTION} messages"
    return figures("transactions", outcomes(sides), [
        ("txn rate", f"consume-transform-produce transactions/s ({per} each)", "/s",
         at_least(TXNS_TARGET, "/s")),
        ("plain rate", f"the same loop without transactions, loops/s ({per} each)", "/s", None),
        ("txn cpu", "server CPU per transaction", "µs", None),
        ("plain cpu", "server CPU per loop without transactions", "µs", None),
        ("added cpu", "server CPU a transaction adds (its produce, offsets and end)", "µs",
         at_most(ADDED_CPU_TARGET_US, "µs")),
    ])


