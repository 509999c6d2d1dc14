"""Incremental fetch sessions (KIP-227) against full fetches: server CPU per Fetch of a
consumer caught up on 100 partitions.

One connection fetches the 100 partitions of a topic, each holding a few records, from
their end, with max_wait_ms 0 so that every Fetch is answered at once with nothing new:
once as full fetches without a session (every partition named and answered), once
incrementally in a session opened by a full fetch (nothing named, nothing answered),
in alternating slices so that load from elsewhere on the machine falls on both alike.
The floor has no sessions: these figures are kcsim's alone.
"""

from __future__ import annotations

import time

from ..admin import ensure_topic
from ..client import BenchError, Frame, LoadClient, message_class, request
from ..harness import RunContext, Side, figures, outcomes
from ..measure import CpuMeter
from ..records import batch
from ..registry import Figure, at_most, workload

PRODUCE, FETCH = 0, 1
FETCH_V = 12
PARTITIONS = 100
TOPIC = "bench-fetch-sessions"
HALF = 0.5  # incremental / full server CPU per request, at most


def fetch_frame(session_id: int, epoch: int, end: int | None) -> Frame:
    """A fetch of every partition from `end` (None: of none, in a session)."""
    cls = message_class(FETCH, "request")
    topics = [] if end is None else [cls.FetchTopic(topic=TOPIC, partitions=[
        cls.FetchPartition(partition=p, fetch_offset=end, partition_max_bytes=1 << 20)
        for p in range(PARTITIONS)])]
    return request(FETCH, FETCH_V, max_wait_ms=0, min_bytes=0, max_bytes=50 << 20,
                   isolation_level=0, session_id=session_id, session_epoch=epoch, rack_id="",
                   forgotten_topics_data=[], topics=topics)


def _fill(client: LoadClient) -> int:
    """Three records in each partition; the end offset of each."""
    cls = message_class(PRODUCE, "request")
    done = client.call(request(PRODUCE, 9, transactional_id=None, acks=1, timeout_ms=30000,
                               topic_data=[cls.TopicProduceData(name=TOPIC, partition_data=[
                                   cls.PartitionProduceData(index=p,
                                                            records=batch([b"a", b"b", b"c"]))
                                   for p in range(PARTITIONS)])]))
    if any(p.error_code for p in done.responses[0].partition_responses):
        raise BenchError("Produce answered an error")
    return 3


class Consumer:
    """The client's side: a full fetch, or the next incremental one of its session."""

    def __init__(self, client: LoadClient, end: int) -> None:
        self.client = client
        self.full = fetch_frame(0, -1, end)
        opened = client.call(fetch_frame(0, 0, end))
        if opened.error_code or not opened.session_id:
            raise BenchError(f"no fetch session was opened (error {opened.error_code})")
        self.session, self.epoch = opened.session_id, 1

    def full_fetch(self) -> None:
        answer = self.client.call(self.full)
        if answer.error_code or len(answer.responses[0].partitions) != PARTITIONS:
            raise BenchError("a full fetch was not answered in full")

    def incremental_fetch(self) -> None:
        answer = self.client.call(fetch_frame(self.session, self.epoch, None))
        if answer.error_code or answer.session_id != self.session or answer.responses:
            raise BenchError(f"an incremental fetch was answered {answer.error_code}, "
                             f"{len(answer.responses)} topics")
        self.epoch += 1


def _slice(side: Side, step: object, seconds: float) -> tuple[int, float]:
    """(requests, server CPU seconds) of `step` repeated for `seconds`."""
    calls = 0
    with CpuMeter(side.server.pid) as meter:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            step()  # type: ignore[operator]
            calls += 1
    assert meter.sample is not None
    return calls, meter.sample.server


def _measure(side: Side, seconds: float, warmup: float, rounds: int) -> None:
    srv = side.server
    with LoadClient(srv.host, srv.port) as client:
        ensure_topic(client, TOPIC, PARTITIONS)
        consumer = Consumer(client, _fill(client))
        for step in (consumer.full_fetch, consumer.incremental_fetch):
            _slice(side, step, warmup)
        totals = {"full": [0, 0.0], "incremental": [0, 0.0]}
        for _ in range(rounds):
            for key, step in (("full", consumer.full_fetch),
                              ("incremental", consumer.incremental_fetch)):
                calls, cpu = _slice(side, step, seconds / rounds)
                totals[key][0] += calls
                totals[key][1] += cpu
    for key, (calls, cpu) in totals.items():
        side.values[f"{key} cpu"] = cpu / calls * 1e6
        side.extra[key] = {"requests": calls, "server_cpu_s": round(cpu, 3)}
    side.values["ratio"] = side.values["incremental cpu"] / side.values["full cpu"]


@workload("fetch_sessions", "fetch", order=45)
def fetch_sessions(ctx: RunContext) -> list[Figure]:
    """Server CPU per Fetch of 100 caught-up partitions: incremental in a session against
    full without one (kcsim only)."""
    sides = []
    if "kcsim" in ctx.sides:
        ctx.log(f"fetch_sessions: kcsim, {PARTITIONS} partitions")
        with ctx.kcsim() as srv:
            side = Side(ctx, "fetch_sessions", "kcsim", srv)
            side.attempt(lambda s: s.server.start())
            side.attempt(_measure, ctx.settings.duration, ctx.settings.warmup,
                         max(2, ctx.settings.rounds))
        side.report_stderr()
        sides.append(side)
    per = f"{PARTITIONS} partitions, nothing new"
    return figures("fetch_sessions", outcomes(sides), [
        ("incremental cpu", f"server CPU per incremental Fetch in a session ({per})", "µs",
         None),
        ("full cpu", f"server CPU per full Fetch without a session ({per})", "µs", None),
        ("ratio", "incremental / full server CPU per Fetch", "", at_most(HALF, "")),
    ])
