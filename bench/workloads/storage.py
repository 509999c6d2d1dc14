"""Durable storage: acknowledged commits by fsync policy, replay, compaction, memory.

- storage_commits: OffsetCommit v8 of 4 partitions per request over 8 connections
  with 16 requests in flight each (each connection its own simple group), against
  two `kcsim serve` processes at once, `--fsync always` and `--fsync never`,
  alternating short slices so background load hits both alike. A commit counts
  once its response arrived with error 0 on every partition.
- storage_commit_latency: synchronous, unpipelined OffsetCommit v8 (4 partitions):
  one connection, one request in flight, the next sent when the previous was
  answered, as a client's commitSync() does. Three `kcsim serve` processes at once,
  `--fsync always`, `interval` (the default, 1 s) and `never`, alternating short
  slices. Per policy: the round trip's median and p99, and commits/s; the target
  is that `interval` costs about what `never` costs.
- storage_replay: a record log of 1,000,000 OffsetCommit records (500,000
  partitions committed twice) is written with storage.RecordLog into a data
  dir's `meta/`, 10 partitions per append as a 10-partition OffsetCommit
  writes them (one batch frame each); after one untimed start (which creates the partition
  directories of the log's topics), timed: `kcsim serve` from spawn to its ready
  line (and the replay time it logs), `kcsim.server.app.build(config)` in this
  process, and storage.compact() of the log's closed segments.
- storage_memory: resident memory (VmRSS) of `kcsim serve` once it has replayed
  a log of 1,000,000 distinct committed partitions, minus that of an empty server,
  per partition.

There is no floor for these: the figures are kcsim's alone. `--quick` uses a
fifth of the records and leaves the replay figures without targets.
"""

from __future__ import annotations

import re
import shutil
import statistics
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import procstat
from ..admin import ensure_topic
from ..client import BenchError, Frame, LoadClient, PhaseResult, message_class, request
from ..measure import BackgroundMeter, CpuMeter, CpuSample, combine, per_request_extra
from ..registry import Figure, at_least, at_most, workload
from ..servers import ServerError, ServerProcess

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..harness import RunContext, Settings

OFFSET_COMMIT = 8
OFFSET_COMMIT_V = 8
TOPIC = "bench-storage"
CONNECTIONS = 8
IN_FLIGHT = 16
COMMIT_PARTITIONS = 4
RING = 64  # distinct commit frames per connection, cycled

FULL_RECORDS = 1_000_000
REPLAY_TARGET_S = 3.0  # for FULL_RECORDS
MEMORY_TARGET_BYTES = 1024
ALWAYS_VS_NEVER_TARGET = 0.5
INTERVAL_VS_NEVER_TARGET = 1.5
SEGMENT_BYTES = 8 * 1024 * 1024  # several closed segments for compaction to work on
APPEND_RECORDS = 10  # one 10-partition OffsetCommit: one frame
PARTITIONS_PER_TOPIC = 100
TOPICS_PER_GROUP = 10

_REPLAYED = re.compile(r"replayed (\d+) records in ([\d.]+) s")


def record_count(s: Settings) -> int:
    return FULL_RECORDS // 5 if s.quick else FULL_RECORDS


def segment_bytes(s: Settings) -> int:
    """Segments of the logs written here: a quick run's smaller log still rolls a few."""
    return SEGMENT_BYTES // 8 if s.quick else SEGMENT_BYTES


def _kcsim(ctx: RunContext, data_dir: Path | None, *extra: str) -> ServerProcess:
    """`kcsim serve` on `data_dir` (a fresh temporary one if None), logging at INFO."""
    return ctx.kcsim(list(extra), data_dir=data_dir, log_level="INFO")


# -- acknowledged commits/s -----------------------------------------------------------


def _commit_frames(conn: int) -> list[Frame]:
    cls = message_class(OFFSET_COMMIT, "request")
    frames = []
    for n in range(1, RING + 1):
        frames.append(request(
            OFFSET_COMMIT, OFFSET_COMMIT_V, group_id=f"bench-storage-{conn}",
            generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
            retention_time_ms=-1, topics=[cls.OffsetCommitRequestTopic(name=TOPIC, partitions=[
                cls.OffsetCommitRequestPartition(partition_index=p, committed_offset=n * 1000 + p,
                                                 committed_leader_epoch=-1, committed_metadata="")
                for p in range(COMMIT_PARTITIONS)])]))
    return frames


class _Committer:
    """Connections committing; every answer must be the all-partitions-accepted one."""

    def __init__(self, srv: ServerProcess, connections: int = CONNECTIONS,
                 in_flight: int = IN_FLIGHT) -> None:
        self.srv = srv
        self.in_flight = in_flight
        self.client = LoadClient(srv.host, srv.port, connections=connections)
        ensure_topic(self.client, TOPIC, COMMIT_PARTITIONS)
        self.frames = [_commit_frames(c) for c in range(connections)]
        self.next = [0] * connections
        self.accepted: bytes | None = None
        for c in range(connections):
            resp = self.client.call(self.frames[c][0], conn=c)
            errors = [p.error_code for t in resp.topics for p in t.partitions]
            if errors != [0] * COMMIT_PARTITIONS:
                raise BenchError(f"OffsetCommit v{OFFSET_COMMIT_V} answered errors {errors}")
        self.slices: list[tuple[PhaseResult, CpuSample]] = []

    def _next_frame(self, conn: int) -> Frame:
        i = self.next[conn]
        self.next[conn] = (i + 1) % RING
        return self.frames[conn][i]

    def _check(self, _conn: int, _frame: Frame, raw: bytes) -> None:
        body = raw[4:]  # all accepted answers are identical after the correlation id
        if self.accepted is None:
            resp = _frame.decode_response(raw)
            errors = [p.error_code for t in resp.topics for p in t.partitions]
            if errors != [0] * COMMIT_PARTITIONS:
                raise BenchError(f"OffsetCommit answered errors {errors}")
            self.accepted = body
        elif body != self.accepted:
            resp = _frame.decode_response(raw)
            errors = [p.error_code for t in resp.topics for p in t.partitions]
            raise BenchError(f"OffsetCommit answered errors {errors}")

    def run(self, seconds: float, timed: bool) -> None:
        if not timed:
            self.client.run(self._next_frame, self._check, in_flight=self.in_flight,
                            duration=seconds)
            return
        with CpuMeter(self.srv.pid) as meter:
            result = self.client.run(self._next_frame, self._check, in_flight=self.in_flight,
                                     duration=seconds, latencies=True)
        assert meter.sample is not None
        self.slices.append((result, meter.sample))

    def close(self) -> None:
        self.client.close()


def _interleaved(ctx: RunContext, policies: tuple[str, ...], connections: int,
                 in_flight: int) -> tuple[dict[str, PhaseResult], dict[str, Any]]:
    """One `kcsim serve` per fsync policy, all up at once, measured in alternating
    slices; per policy the combined result and its JSON detail."""
    s = ctx.settings
    rounds = max(2, s.rounds)
    results: dict[str, PhaseResult] = {}
    extra: dict[str, Any] = {}
    servers = {p: _kcsim(ctx, None, "--fsync", p) for p in policies}
    committers: dict[str, _Committer] = {}
    try:
        for p, srv in servers.items():
            srv.start()
            committers[p] = _Committer(srv, connections, in_flight)
        for c in committers.values():
            c.run(s.warmup, timed=False)
        for r in range(rounds):
            order = policies if r % 2 == 0 else policies[::-1]
            for p in order:
                committers[p].run(s.duration / rounds, timed=True)
                if not servers[p].alive():
                    raise ServerError(f"kcsim --fsync {p} exited" + servers[p].stderr_tail())
        for p, c in committers.items():
            result, cpu = combine(c.slices)
            results[p] = result
            extra[p] = per_request_extra(result, cpu)
    finally:
        for c in committers.values():
            c.close()
        for srv in servers.values():
            srv.stop()
    return results, extra


@workload("storage_commits", "storage", order=60)
def storage_commits(ctx: RunContext) -> list[Figure]:
    """Acknowledged OffsetCommits/s, --fsync always beside --fsync never."""
    if "kcsim" not in ctx.sides:
        return []
    policies = ("never", "always")
    rates: dict[str, float] = {}
    extra: dict[str, Any] = {}
    error: str | None = None
    ctx.log(f"storage_commits: fsync {' and '.join(policies)} interleaved, "
            f"{CONNECTIONS} connections x {IN_FLIGHT} in flight")
    try:
        results, extra = _interleaved(ctx, policies, CONNECTIONS, IN_FLIGHT)
        rates = {p: r.rate() for p, r in results.items()}
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        ctx.log(f"[red]storage_commits failed:[/] {error}")
    shape = f"{CONNECTIONS} conns x {IN_FLIGHT} in flight, {COMMIT_PARTITIONS} partitions/commit"
    figures = [
        Figure("storage_commits", f"acked commits/s, fsync never ({shape})", "req/s",
               rates.get("never"), None, kcsim_error=error, extra=extra.get("never") or {}),
        Figure("storage_commits", "acked commits/s, fsync always", "req/s",
               rates.get("always"), None, kcsim_error=error, extra=extra.get("always") or {}),
    ]
    ratio = rates["always"] / rates["never"] if rates.get("never") and "always" in rates else None
    figures.append(Figure("storage_commits", "fsync always / fsync never", "x", ratio, None,
                          at_least(ALWAYS_VS_NEVER_TARGET, "x"), kcsim_error=error))
    return figures


@workload("storage_commit_latency", "storage", order=60)
def storage_commit_latency(ctx: RunContext) -> list[Figure]:
    """Synchronous, unpipelined OffsetCommit round trip under each --fsync policy."""
    if "kcsim" not in ctx.sides:
        return []
    policies = ("always", "interval", "never")
    results: dict[str, PhaseResult] = {}
    extra: dict[str, Any] = {}
    error: str | None = None
    ctx.log(f"storage_commit_latency: fsync {', '.join(policies)} interleaved, "
            "1 connection x 1 in flight")
    try:
        results, extra = _interleaved(ctx, policies, connections=1, in_flight=1)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        ctx.log(f"[red]storage_commit_latency failed:[/] {error}")
    figures = []
    for p in policies:
        result = results.get(p)
        shape = f" (1 client, 1 in flight, {COMMIT_PARTITIONS} partitions)" if p == policies[0] else ""
        figures += [
            Figure("storage_commit_latency", f"commitSync round trip p50, fsync {p}{shape}", "µs",
                   result.latency_us(0.5) if result else None, None, kcsim_error=error,
                   extra=extra.get(p) or {}),
            Figure("storage_commit_latency", f"  p99, fsync {p}", "µs",
                   result.latency_us(0.99) if result else None, None, kcsim_error=error),
            Figure("storage_commit_latency", f"  commits/s, fsync {p}", "req/s",
                   result.rate() if result else None, None, kcsim_error=error),
        ]
    # "interval" answers once the records are in the OS, like "never": it must cost
    # about the same, its fsyncs running in a worker thread off the answer's path.
    p50 = {p: r.latency_us(0.5) for p, r in results.items()}
    ratio = (p50["interval"] / p50["never"]
             if p50.get("interval") and p50.get("never") else None)
    figures.append(Figure("storage_commit_latency", "p50 fsync interval / p50 fsync never", "x",
                          ratio, None, at_most(INTERVAL_VS_NEVER_TARGET, "x"),
                          kcsim_error=error))
    return figures


# -- building logs --------------------------------------------------------------------


def build_log(data_dir: Path, partitions: int, passes: int,
              segment_bytes: int = SEGMENT_BYTES) -> dict[str, Any]:
    """Write `partitions * passes` OffsetCommit records (each partition once per pass)
    plus the topic records, straight into `data_dir/meta` with storage.RecordLog."""
    from kcsim.coordinator.records import OffsetCommitKey, OffsetCommitValue
    from kcsim.server.durability import RECORD_TYPES
    from kcsim.server.state.topic_records import TopicKey, TopicValue
    from kcsim.storage import Record, RecordLog

    started = time.perf_counter()
    now = int(time.time() * 1000)
    per_group = TOPICS_PER_GROUP * PARTITIONS_PER_TOPIC
    topics = [f"topic-{t}" for t in range(TOPICS_PER_GROUP)]
    with RecordLog.open(data_dir / "meta", types=RECORD_TYPES,
                        segment_bytes=segment_bytes) as log:
        log.append([Record(TopicKey(t), TopicValue(uuid.uuid4().bytes, PARTITIONS_PER_TOPIC))
                    for t in topics], timestamp_ms=now)
        batch = []
        for n in range(passes):
            for i in range(partitions):
                group, rest = divmod(i, per_group)
                topic, partition = divmod(rest, PARTITIONS_PER_TOPIC)
                batch.append(Record(OffsetCommitKey(f"group-{group}", topics[topic], partition),
                                    OffsetCommitValue(n * partitions + i, -1, "", now, -1)))
                if len(batch) == APPEND_RECORDS:
                    log.append(batch, timestamp_ms=now)
                    batch = []
        log.append(batch, timestamp_ms=now)
        log.sync()
        size = log.size_bytes
        segments = len(log.segments)
    return {"records": partitions * passes + len(topics), "partitions": partitions,
            "bytes": size, "segments": segments,
            "write_s": round(time.perf_counter() - started, 2)}


@contextmanager
def _data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="kcsim-bench-storage-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _serve_once(ctx: RunContext, data_dir: Path) -> dict[str, float]:
    """Start `kcsim serve` on `data_dir`: spawn-to-ready, logged replay, RSS; then stop."""
    srv = _kcsim(ctx, data_dir)
    try:
        srv.start(timeout=120)
        ready = srv.ready_at - srv.started_at
        rss = procstat.rss_bytes(srv.pid)
        peak = procstat.peak_rss_bytes(srv.pid)
        tail = srv.stderr_tail(50)
    finally:
        srv.stop()
    m = _REPLAYED.search(tail)
    if m is None:
        raise ServerError("kcsim did not log its replay" + tail)
    return {"ready_s": ready, "replayed": int(m.group(1)), "replay_s": float(m.group(2)),
            "rss": rss, "peak_rss": peak}


def _build_in_process(data_dir: Path) -> dict[str, float]:
    """kcsim.server.app.build(config) in this process: open, replay, attach."""
    import gc

    from kcsim.server import config as config_mod
    from kcsim.server.app import build

    config = config_mod.load(None, env={}, data_dir=str(data_dir), port=0, log_level="WARNING")
    gc.collect()
    started = time.perf_counter()
    server = build(config)
    elapsed = time.perf_counter() - started
    durability = server.durability
    out = {"build_s": elapsed, "replayed": durability.replayed,
           "replay_s": durability.replay_seconds}
    server.broker.topics.close()
    durability.close()
    del server, durability
    gc.collect()
    return out


def _compact(data_dir: Path, segment_bytes: int = SEGMENT_BYTES) -> dict[str, Any]:
    """storage.compact() of every closed segment of the log (frames validated beforehand)."""
    from kcsim.server.durability import RECORD_TYPES
    from kcsim.storage import RecordLog, compact

    with RecordLog.open(data_dir / "meta", types=RECORD_TYPES,
                        segment_bytes=segment_bytes) as log:
        log.closed_segments()  # the first-open validation a server does at start-up
        stats = compact(log, tombstone_retention_ms=24 * 3600 * 1000)
    return {"compact_s": stats.duration_s, "records_before": stats.records_before,
            "records_after": stats.records_after, "bytes_before": stats.bytes_before,
            "bytes_after": stats.bytes_after, "segments_before": stats.segments_before,
            "segments_after": stats.segments_after}


@workload("storage_replay", "storage", order=61)
def storage_replay(ctx: RunContext) -> list[Figure]:
    """Start-up replay of a 1,000,000-record log (serve and in-process), then its compaction."""
    if "kcsim" not in ctx.sides:
        return []
    records = record_count(ctx.settings)
    runs = 1 if ctx.settings.quick else max(1, min(3, ctx.settings.startup_runs))
    target = at_most(REPLAY_TARGET_S, "s") if records == FULL_RECORDS else None
    values: dict[str, float] = {}
    extra: dict[str, Any] = {}
    error: str | None = None
    with _data_dir() as data_dir, BackgroundMeter() as load:
        try:
            ctx.log(f"storage_replay: writing {records:,} records")
            extra["log"] = build_log(data_dir, records // 2, passes=2,
                                     segment_bytes=segment_bytes(ctx.settings))
            first = _serve_once(ctx, data_dir)  # creates the topics' partition directories
            extra["first_start"] = {k: round(v, 3) for k, v in first.items()}
            serve = [_serve_once(ctx, data_dir) for _ in range(runs)]
            values["ready"] = statistics.median(r["ready_s"] for r in serve)
            values["served replay"] = statistics.median(r["replay_s"] for r in serve)
            extra["serve"] = [{k: round(v, 3) for k, v in r.items()} for r in serve]
            if ctx.on_this_tree:  # in process: this tree's kcsim, never a baseline's
                builds = [_build_in_process(data_dir) for _ in range(runs)]
                values["build"] = statistics.median(r["build_s"] for r in builds)
                values["rate"] = extra["log"]["records"] / values["build"]
                extra["build"] = [{k: round(v, 3) for k, v in r.items()} for r in builds]
            ctx.log("storage_replay: compacting")
            compaction = _compact(data_dir, segment_bytes(ctx.settings))
            values["compact"] = compaction["compact_s"]
            extra["compaction"] = compaction
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            ctx.log(f"[red]storage_replay failed:[/] {error}")
    extra["other_processes_cpu_share"] = load.share
    label = f"{records:,}-record log"

    def fig(key: str, metric: str, unit: str, target: Any = None) -> Figure:
        return Figure("storage_replay", metric, unit, values.get(key), None, target,
                      kcsim_error=None if key in values else error or "not measured",
                      extra={"runs": runs, **extra} if key == "ready" else {})

    return [
        fig("ready", f"kcsim serve spawn to ready, {label}, median of {runs}", "s", target),
        fig("served replay", "  of which replay (as the server logs it)", "s"),
        fig("build", f"app.build(config) in-process, {label}", "s", target),
        fig("rate", "  replayed records/s (in-process)", "rec/s"),
        fig("compact", f"compaction of the {label} (half superseded)", "s"),
    ]


@workload("storage_memory", "storage", order=62)
def storage_memory(ctx: RunContext) -> list[Figure]:
    """Server RSS after replaying 1,000,000 distinct committed partitions, per partition."""
    if "kcsim" not in ctx.sides:
        return []
    partitions = record_count(ctx.settings)
    values: dict[str, float] = {}
    extra: dict[str, Any] = {}
    error: str | None = None
    with _data_dir() as empty_dir, _data_dir() as data_dir:
        try:
            ctx.log(f"storage_memory: writing {partitions:,} distinct partitions")
            extra["log"] = build_log(data_dir, partitions, passes=1)
            empty = _serve_once(ctx, empty_dir)
            # The first start on a log written without kcsim serving it adds the record
            # of __consumer_offsets (the topic itself is written once read); the figure
            # is that of a start as every later one is.
            extra["first_start"] = {k: round(v, 3) for k, v in _serve_once(ctx, data_dir).items()}
            full = _serve_once(ctx, data_dir)
            values["raw"] = full["rss"] / partitions
            values["net"] = (full["rss"] - empty["rss"]) / partitions
            extra["empty_server_rss_mib"] = round(empty["rss"] / 2**20, 1)
            extra["server_rss_mib"] = round(full["rss"] / 2**20, 1)
            extra["server_peak_rss_mib"] = round(full["peak_rss"] / 2**20, 1)
            extra["replay_s"] = full["replay_s"]
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            ctx.log(f"[red]storage_memory failed:[/] {error}")

    def fig(key: str, metric: str, target: Any = None) -> Figure:
        return Figure("storage_memory", metric, "B", values.get(key), None, target,
                      kcsim_error=None if key in values else error or "not measured",
                      extra=extra if key == "net" else {})

    return [
        fig("net", f"server RSS per committed partition, net of an empty server "
                   f"({partitions:,} partitions)", at_most(MEMORY_TARGET_BYTES, "B")),
        fig("raw", "server RSS per committed partition, raw"),
    ]
