"""What watching the coordinator costs: server CPU per OffsetCommit and per Heartbeat with
the group events and the metrics on, against both off; and the time of one Prometheus
scrape of a broker holding 10,000 groups.

The cost: two `kcsim serve` run at once, one with `--metrics --events` (and its metrics
port open), one with `--no-metrics --no-events`; each holds one member in a group,
which commits (or heartbeats) in timed slices alternating between the two servers, in
turn reversed, so load from other processes falls on both alike. PAIRS such pairs
are started in turn (a process's layout biases its own figures), and the overhead is
the median of all their rounds' own. A build without the `events` setting runs the comparison
on the metrics alone, and says so.

The scrape: 10,000 groups, each with the offset of one partition committed (so one
lag series per group), then GET /metrics on the metrics port, timed end to end (the
median of SCRAPES).
"""

from __future__ import annotations

import os
import re
import statistics
import time
import urllib.request
from contextlib import ExitStack
from typing import Any

from kcsim.server.config import SETTINGS

from .. import classic as c
from ..admin import ensure_topic
from ..callgrind import MIXES
from ..client import BenchError, Frame, LoadClient, message_class, request
from ..harness import RunContext, Side
from ..measure import CpuSample, combine, per_request_extra
from ..rebalance import Driver, Member
from ..registry import Figure, at_most, workload
from .fault_rules import _Meter, _paired_overheads

TARGET_PERCENT = 3.0
TARGET_SCRAPE_MS = 100.0
GROUPS = 10_000
SCRAPES = 5
SLICE_S = 0.2
# Fresh pairs of servers: a process's own memory layout shifts its CPU per request by a
# few percent (two servers alike differ by up to 3%), so the rounds of several pairs
# are pooled, and their median evens it out.
PAIRS = 3
_METRICS = re.compile(r"metrics (http://\S+/metrics)")
# Builds with the events setting (the group event log) turn it on and off with the metrics.
HAS_EVENTS = "events" in SETTINGS


def _flags(on: bool) -> list[str]:
    flags = ["--in-memory", "--metrics" if on else "--no-metrics"]
    if on:
        flags += ["--metrics-port", "0"]
    if HAS_EVENTS:
        flags.append("--events" if on else "--no-events")
    return flags


def _member_frames(host: str, port: int, client: LoadClient, group: str) -> dict[str, Frame]:
    """A member of `group` (joined and synced): its OffsetCommit and Heartbeat, checked."""
    ensure_topic(client, c.TOPIC, c.PARTITIONS)
    member = Member(group, "kcsim-bench-member", 0, session_ms=600_000)
    with Driver(host, port, 1) as driver:
        driver.run([member])
    frames = {"OffsetCommit": c.commit_frame(group, 7, member.member_id, member.generation),
              "Heartbeat": c.heartbeat_frame(group, member.generation, member.member_id)}
    commit, heartbeat = (client.call(f) for f in frames.values())
    errors = [p.error_code for t in commit.topics for p in t.partitions] + [heartbeat.error_code]
    if any(errors):
        raise BenchError(f"the member's requests answered errors {errors}")
    return frames


def _compare_pair(ctx: RunContext, rounds: int, slice_s: float,
                  slices: dict[tuple[str, str], list[tuple[Any, CpuSample]]],
                  errors: list[str]) -> None:
    """One pair of servers, `off` and `on`: `rounds` slices of each mix on each, in turn."""
    s = ctx.settings
    configs = ("off", "on")
    with ExitStack() as stack:
        sides = {}
        for config in configs:
            srv = stack.enter_context(ctx.kcsim(_flags(config == "on")))
            sides[config] = Side(ctx, "observability_cost", f"kcsim ({config})", srv)
        clients: dict[str, LoadClient] = {}
        frames: dict[str, dict[str, Frame]] = {}

        def start(side: Side, config: str) -> None:
            srv = side.server
            # One hash seed for both: dicts of str keys then probe alike in the two servers.
            seed = os.environ.get("PYTHONHASHSEED")
            os.environ["PYTHONHASHSEED"] = "0"
            try:
                srv.start()
            finally:
                if seed is None:
                    del os.environ["PYTHONHASHSEED"]
                else:
                    os.environ["PYTHONHASHSEED"] = seed
            clients[config] = stack.enter_context(LoadClient(srv.host, srv.port))
            frames[config] = _member_frames(srv.host, srv.port, clients[config], "bench-obs")

        for config, side in sides.items():
            side.attempt(start, config)

        def run(side: Side, config: str, mix: str) -> None:
            frame = frames[config][mix]
            with _Meter(side.server.pid) as meter:
                result = clients[config].run(lambda _i: frame, in_flight=s.pipeline,
                                             duration=slice_s)
            assert meter.sample is not None
            slices[mix, config].append((result, meter.sample))

        for mix in MIXES:
            for config in configs:
                if sides[config].error is None:
                    frame = frames[config][mix]
                    clients[config].run(lambda _i, f=frame: f, in_flight=s.pipeline,
                                        duration=s.warmup)
            for r in range(rounds):
                for config in configs if r % 2 == 0 else configs[::-1]:
                    sides[config].attempt(run, config, mix)
        for side in sides.values():
            side.report_stderr()
            if side.error is not None:
                errors.append(f"{side.name}: {side.error}")


@workload("observability_cost", "request_rate", order=26)
def observability_cost(ctx: RunContext) -> list[Figure]:
    """Server CPU per OffsetCommit and per Heartbeat with events and metrics on, against off."""
    s = ctx.settings
    rounds = max(2, s.rounds, round(s.duration / SLICE_S))
    configs = ("off", "on")
    slices: dict[tuple[str, str], list[tuple[Any, CpuSample]]] = {
        (mix, config): [] for mix in MIXES for config in configs}
    what = "events and metrics" if HAS_EVENTS else "metrics (no events setting in this build)"
    ctx.log(f"observability_cost: {what} on against off, interleaved")
    errors: list[str] = []
    per_pair = max(2, rounds // PAIRS)
    for _ in range(PAIRS):
        _compare_pair(ctx, per_pair, s.duration / (per_pair * PAIRS), slices, errors)
    error = "; ".join(errors) or None
    figures = []
    for mix in MIXES:
        cpu_us: dict[str, float] = {}
        extra: dict[str, Any] = {"events": HAS_EVENTS}
        for config in configs:
            got = slices[mix, config]
            if got and error is None:
                result, cpu = combine(got)
                cpu_us[config] = cpu.server / max(result.requests, 1) * 1e6
                extra[config] = per_request_extra(result, cpu)
        for config in configs:
            figures.append(Figure("observability_cost",
                                  f"server CPU/{mix}, events and metrics {config}", "µs",
                                  cpu_us.get(config), None, kcsim_error=error,
                                  extra={"kcsim": extra.get(config)}))
        pct = _paired_overheads(slices[mix, "off"], slices[mix, "on"])
        figures.append(Figure(
            "observability_cost", f"CPU/{mix} added by events and metrics, median of rounds",
            "%", statistics.median(pct) if pct and error is None else None, None,
            at_most(TARGET_PERCENT, "%"), kcsim_error=error,
            extra={"kcsim": {"rounds_percent": [round(x, 2) for x in pct],
                             "events": HAS_EVENTS}}))
    return figures


def _commit_one(group: str, offset: int) -> Frame:
    """A simple (admin-style) OffsetCommit of partition 0 of TOPIC."""
    cls = message_class(c.OFFSET_COMMIT, "request")
    return request(
        c.OFFSET_COMMIT, c.COMMIT_V, group_id=group, generation_id_or_member_epoch=-1,
        member_id="", group_instance_id=None, retention_time_ms=-1,
        topics=[cls.OffsetCommitRequestTopic(name=c.TOPIC, partitions=[
            cls.OffsetCommitRequestPartition(partition_index=0, committed_offset=offset,
                                             committed_leader_epoch=-1,
                                             committed_metadata="")])])


def _metrics_url(srv: Any) -> str:
    """Start `srv`; the URL of its metrics, from its ready line."""
    srv.start()
    found = _METRICS.search(srv.ready_line)
    if found is None:
        raise BenchError(f"no metrics URL in the ready line {srv.ready_line!r}")
    return found.group(1)


def _scrape(url: str) -> tuple[float, bytes]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=30) as answer:
        body = answer.read()
    return time.perf_counter() - start, body


@workload("metrics_scrape", "metrics", order=27)
def metrics_scrape(ctx: RunContext) -> list[Figure]:
    """The time of one GET /metrics of a broker holding 10,000 groups with an offset each."""
    side = Side(ctx, "metrics_scrape", "kcsim", ctx.kcsim(_flags(True)))
    times: list[float] = []
    size = [0, 0]

    def run(side: Side) -> None:
        url = _metrics_url(side.server)
        with LoadClient(side.server.host, side.server.port) as client:
            ensure_topic(client, c.TOPIC, c.PARTITIONS)
            commits = [_commit_one(f"bench-scrape-{i}", 0) for i in range(GROUPS)]
            client.run(lambda i: commits.pop() if commits else None, in_flight=ctx.settings.pipeline)
        _scrape(url)  # the first builds the registry
        for _ in range(SCRAPES):
            took, body = _scrape(url)
            times.append(took)
        if f'consumergroup="bench-scrape-{GROUPS - 1}"'.encode() not in body:
            raise BenchError("the scrape does not show the last group's lag")
        size[:] = [len(body), body.count(b"\n")]

    ctx.log(f"metrics_scrape: {GROUPS} groups, one committed partition each")
    with side.srv:  # type: ignore[union-attr]
        side.attempt(run)
    side.report_stderr()
    median_ms = statistics.median(times) * 1000 if times and side.error is None else None
    return [Figure("metrics_scrape", f"GET /metrics, {GROUPS} groups", "ms", median_ms, None,
                   at_most(TARGET_SCRAPE_MS, "ms"), kcsim_error=side.error,
                   extra={"kcsim": {"scrapes_ms": [round(t * 1000, 1) for t in times],
                                    "bytes": size[0], "lines": size[1]}})]
