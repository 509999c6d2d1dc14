"""kcsim beside a real Apache Kafka broker: the same OffsetCommit load, start-up and memory.

Kafka (one KRaft node, tests/oracle/kafka.py, fetched with Maven once into .cache/)
and `kcsim serve` get the same load from the same client: simple-group OffsetCommits
(generation -1, the 3 partitions of one topic) over 1 connection with 1 and 16 requests in flight
and over 8 connections with 1 in flight each. Start-up is from spawning the process
(Kafka: its storage format tool, then the broker) until FindCoordinator answers; RSS is read
from /proc once ready and again after the load. A group of 100 classic members is
formed (bench/rebalance.py's driver, one connection each). Then 10,000 groups that only committed
offsets are listed (ListGroups) and described (DescribeGroups, 100 a request). Last, 1,000
members in 100 groups heartbeat on 1,000 connections, one heartbeat in flight each, first
classic then KIP-848 (bench/heartbeat_storm.py); kcsim runs with `--batch-connections`. Where Kafka cannot be fetched or
started the Kafka column says so (the reason is printed) and the workload still measures kcsim.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class

from ..procstat import rss_bytes
from ..registry import Figure, workload
from ..servers import kcsim

if TYPE_CHECKING:
    from ..harness import RunContext

OFFSET_COMMIT, COMMIT_VERSION = 8, 8
FIND_COORDINATOR = 10
MODES = ((1, 1), (1, 16), (8, 1))  # (connections, requests in flight on each)
READY_TIMEOUT_S = 90.0
TOPIC = "bench-kafka"
LIST_GROUPS, DESCRIBE_GROUPS = 16, 15
ADMIN_GROUPS = 10_000
REBALANCE_MEMBERS = 100
REBALANCE_RUNS = 3
ADMIN_RUNS = 5
DESCRIBE_BATCH = 100
POPULATE_IN_FLIGHT = 64
STORM_TOPIC = "bench-kafka-storm"


def _wait_coordinating(host: str, port: int, deadline: float) -> None:
    from tests.server.durability.wire import Closed, Wire

    cls = request_class(FIND_COORDINATOR)
    while time.monotonic() < deadline:
        try:
            with Wire(host, port, timeout=5.0) as wire:
                found = wire.call(FIND_COORDINATOR, 4, cls(key_type=0, coordinator_keys=["bench"]))
                if found.coordinators[0].error_code == 0:
                    return
        except (OSError, Closed):
            pass
        time.sleep(0.05)
    raise TimeoutError("the server did not coordinate groups in time")


def _commit_load(host: str, port: int, connections: int, in_flight: int,
                 seconds: float) -> tuple[float, int]:
    """Commits per second over `seconds`, and how many answers carried an error."""
    from tests.server.durability.wire import Wire, commit_request

    done = [0] * connections
    errors = [0] * connections

    def drive(i: int) -> None:
        request = commit_request(f"bench-kafka-{i}", TOPIC, {0: 1, 1: 2, 2: 3})
        with Wire(host, port, timeout=30.0) as wire:
            end = time.monotonic() + seconds
            for _ in range(in_flight):
                wire.send(OFFSET_COMMIT, COMMIT_VERSION, request)
            while time.monotonic() < end:
                resp = wire.receive()
                errors[i] += sum(p.error_code != 0 for t in resp.topics for p in t.partitions)
                done[i] += 1
                wire.send(OFFSET_COMMIT, COMMIT_VERSION, request)
            while wire.in_flight:
                wire.receive()

    threads = [threading.Thread(target=drive, args=(i,)) for i in range(connections)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done) / (time.perf_counter() - t0), sum(errors)


def _measure(host: str, port: int, pid: int, seconds: float, out: dict[str, float],
             errors: dict[str, int]) -> None:
    from tests.server.durability.wire import Wire

    out["rss ready"] = rss_bytes(pid) / 2**20
    with Wire(host, port, timeout=30.0) as wire:
        wire.create_topic(TOPIC, 3)
    for connections, in_flight in MODES:
        key = f"commit {connections}x{in_flight}"
        out[key], errors[key] = _commit_load(host, port, connections, in_flight, seconds)
    _rebalance(host, port, out)
    _admin(host, port, out)
    _heartbeat_storms(host, port, pid, seconds, out, errors)
    out["rss after"] = rss_bytes(pid) / 2**20


def _heartbeat_storms(host: str, port: int, pid: int, seconds: float, out: dict[str, float],
                      errors: dict[str, int]) -> None:
    """1,000 members on 1,000 connections, one heartbeat in flight each: classic Heartbeat,
    then KIP-848 ConsumerGroupHeartbeat (bench/heartbeat_storm.py)."""
    from .. import heartbeat_storm as storm
    from ..admin import ensure_topic
    from ..client import LoadClient

    for kind in ("classic", "consumer"):
        with LoadClient(host, port, storm.MEMBERS) as client:
            if kind == "classic":
                frames = storm.classic_heartbeats(host, port, "bench-kafka-storm")
            else:
                ensure_topic(client, STORM_TOPIC, storm.TOPIC_PARTITIONS)
                frames = storm.consumer_heartbeats(client, "bench-kafka-storm848", STORM_TOPIC)
            storm.storm(client, pid, frames, min(seconds, 1.0))  # warm-up
            result = storm.storm(client, pid, frames, seconds)
        out[f"storm {kind}"] = result.rate
        out[f"storm {kind} cpu"] = result.cpu_us
        out[f"storm {kind} p99"] = result.p99_ms
        if result.errors:
            errors[f"storm {kind}"] = sum(result.errors.values())


def _rebalance(host: str, port: int, out: dict[str, float]) -> None:
    """REBALANCE_MEMBERS classic members, each on its own connection, from the first JoinGroup
    to the last SyncGroup answer (bench/rebalance.py's driver); median of REBALANCE_RUNS."""
    from ..rebalance import Driver, Member

    runs = []
    with Driver(host, port, REBALANCE_MEMBERS) as driver:
        for n in range(REBALANCE_RUNS + 1):
            members = [Member(f"bench-kafka-rebalance-{n}", "kcsim-bench", i)
                       for i in range(REBALANCE_MEMBERS)]
            result = driver.run(members)
            if n:  # the first run warms up
                runs.append(result.seconds)
            out["rebalance generations"] = result.max_generation()
    out["rebalance"] = statistics.median(runs) * 1e3


def _admin(host: str, port: int, out: dict[str, float]) -> None:
    """ListGroups and DescribeGroups (batches of DESCRIBE_BATCH) over ADMIN_GROUPS groups that
    only committed offsets (Empty, no protocol type): both list and describe them alike."""
    from tests.server.durability.wire import Wire, commit_request

    ids = [f"bench-kafka-admin-{i:05d}" for i in range(ADMIN_GROUPS)]
    listing, describing = request_class(LIST_GROUPS), request_class(DESCRIBE_GROUPS)
    with Wire(host, port, timeout=60.0) as wire:
        for lo in range(0, ADMIN_GROUPS, POPULATE_IN_FLIGHT):
            for group in ids[lo:lo + POPULATE_IN_FLIGHT]:
                wire.send(OFFSET_COMMIT, COMMIT_VERSION, commit_request(group, TOPIC, {0: 1}))
            while wire.in_flight:
                wire.receive()
        runs = []
        for _ in range(ADMIN_RUNS):
            t0 = time.perf_counter()
            resp = wire.call(LIST_GROUPS, 4, listing(states_filter=[]))
            runs.append(time.perf_counter() - t0)
        mine = sum(g.group_id.startswith("bench-kafka-admin-") for g in resp.groups)
        if resp.error_code != 0 or mine != ADMIN_GROUPS:
            raise RuntimeError(f"ListGroups answered {resp.error_code} with {mine} of "
                               f"{ADMIN_GROUPS} groups")
        out["list groups"] = statistics.median(runs) * 1e3
        t0 = time.perf_counter()
        for lo in range(0, ADMIN_GROUPS, DESCRIBE_BATCH):
            wire.send(DESCRIBE_GROUPS, 5, describing(groups=ids[lo:lo + DESCRIBE_BATCH],
                                                     include_authorized_operations=False))
        described = 0
        while wire.in_flight:
            described += sum(g.error_code == 0 for g in wire.receive().groups)
        out["describe groups"] = (time.perf_counter() - t0) * 1e3
        if described != ADMIN_GROUPS:
            raise RuntimeError(f"DescribeGroups described {described} of {ADMIN_GROUPS} groups")


def _on_kcsim(seconds: float) -> tuple[dict[str, float], dict[str, int]]:
    values: dict[str, float] = {}
    errors: dict[str, int] = {}
    with kcsim(["--batch-connections"]) as srv:  # for the 1,000-connection storms
        t0 = time.perf_counter()
        srv.start()
        _wait_coordinating(srv.host, srv.port, time.monotonic() + READY_TIMEOUT_S)
        values["ready"] = time.perf_counter() - t0
        _measure(srv.host, srv.port, srv.pid, seconds, values, errors)
    return values, errors


def _on_kafka(seconds: float) -> tuple[dict[str, float], dict[str, int]]:
    from tests.oracle.kafka import KafkaBroker, kafka_jars

    kafka_jars()  # fetched before the clock starts
    values: dict[str, float] = {}
    errors: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="kcsim-bench-kafka-") as tmp:
        broker = KafkaBroker(Path(tmp))
        t0 = time.perf_counter()
        broker.start()
        try:
            values["ready"] = time.perf_counter() - t0
            assert broker.proc is not None
            _measure(broker.host, broker.port, broker.proc.pid, seconds, values, errors)
        finally:
            broker.stop()
    return values, errors


SPECS = (
    ("ready", "start to coordinating groups (Kafka: with storage format)", "s"),
    ("rss ready", "RSS once ready", "MiB"),
    *((f"commit {c}x{f}", f"OffsetCommit, {c} conn x {f} in flight", "req/s") for c, f in MODES),
    ("rebalance", f"{REBALANCE_MEMBERS} members, first JoinGroup to all synced, median of "
     f"{REBALANCE_RUNS}", "ms"),
    ("rebalance generations", "generations the last of those rebalances took", ""),
    ("list groups", f"ListGroups of {ADMIN_GROUPS:,} groups, median of {ADMIN_RUNS}", "ms"),
    ("describe groups", f"DescribeGroups of {ADMIN_GROUPS:,} groups, {DESCRIBE_BATCH} a request",
     "ms"),
    *(spec for kind, api in (("classic", "Heartbeat v4"), ("consumer", "ConsumerGroupHeartbeat"))
      for spec in (
          (f"storm {kind}", f"{api}, 1,000 members in 100 groups on 1,000 connections, 1 in "
           "flight each", "req/s"),
          (f"storm {kind} cpu", f"  {api}: server CPU per heartbeat", "µs"),
          (f"storm {kind} p99", f"  {api}: p99 round trip", "ms"))),
    ("rss after", "RSS after the commit load, the groups and the heartbeat storms", "MiB"),
)


@workload("kafka_beside", "kafka", order=90)
def kafka_beside(ctx: RunContext) -> list[Figure]:
    """The same OffsetCommit load, start-up and RSS on kcsim and on Apache Kafka."""
    seconds = ctx.settings.duration / 2
    ctx.log(f"kafka_beside: kcsim, then Apache Kafka; {seconds:g} s per commit mode")
    ours, our_errors = _on_kcsim(seconds)
    kafka_error: str | None = None
    theirs: dict[str, float] = {}
    their_errors: dict[str, int] = {}
    try:
        theirs, their_errors = _on_kafka(seconds)
    except Exception as exc:
        kafka_error = f"Apache Kafka not measured: {type(exc).__name__}: {exc}".splitlines()[0]
        ctx.log(kafka_error)
    figures = []
    for key, metric, unit in SPECS:
        extra: dict[str, Any] = {}
        if key in our_errors or key in their_errors:
            extra["error_answers"] = {"kcsim": our_errors.get(key), "kafka": their_errors.get(key)}
        figures.append(Figure("kafka_beside", metric, unit, ours.get(key), None,
                              kafka=theirs.get(key),
                              kafka_error=kafka_error if key not in theirs else None,
                              extra=extra))
    return figures
