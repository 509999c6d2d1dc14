"""What installed fault rules that never fire cost every request: server CPU per request
of a consumer's usual mix (OffsetCommit, Heartbeat, Fetch) with no rule, with 20 rules
on other APIs, and with 20 rules on these very APIs that do not match (rules for other
groups, or for another client on Fetch, which names no group), each as a difference
from no rule.

One `kcsim serve --control-port` serves all three; the rules are installed and removed
through its HTTP control API between timed slices, and the slices alternate between the
configurations (in turn reversed) so load from other processes falls on each alike;
each overhead is the median of the rounds' own.
Rules are indexed by API key: a request of an API no rule names costs one dict lookup,
one of an API some rules name is checked against those rules.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from typing import Any

from kcsim.tools.control_client import ControlClient

from .. import classic as c
from .. import cpuclock
from ..admin import ensure_topic
from ..client import BenchError, Frame, LoadClient, message_class, request
from ..harness import RunContext, Side
from ..measure import CpuMeter, CpuSample, combine, per_request_extra
from ..rebalance import Driver, Member
from ..records import batch
from ..registry import Figure, at_most, workload

GROUP = "bench-faults"
RULES = 20
TARGET_PERCENT = 5.0
PRODUCE, FETCH = 0, 1
# APIs the mix never sends, for the rules that name other APIs.
OTHER_APIS = ("JoinGroup", "SyncGroup", "LeaveGroup", "DescribeGroups", "ListGroups",
              "DeleteGroups", "OffsetDelete", "OffsetFetch", "ListOffsets", "CreateTopics")
MIX_APIS = ("OffsetCommit", "Heartbeat", "Fetch")
CONFIGS = ("none", "other APIs", "these APIs")
SLICE_S = 0.2  # a timed slice: short, so the configurations of a round see the same load
_CONTROL = re.compile(r"control API (http://\S+)")


class _Meter(CpuMeter):
    """CpuMeter with the server's CPU read from its nanosecond CPU-time clock: a slice of
    0.2 s is too short for /proc's 10 ms ticks."""

    def __enter__(self) -> _Meter:
        super().__enter__()
        self._ns0 = cpuclock.cpu_seconds(self.pid)
        return self

    def __exit__(self, *exc: object) -> None:
        server = cpuclock.cpu_seconds(self.pid) - self._ns0
        super().__exit__(*exc)
        assert self.sample is not None
        self.sample = dataclasses.replace(self.sample, server=server)


def _rules(config: str) -> list[dict[str, Any]]:
    """The 20 rules of a configuration; none of them fires on the mix."""
    if config == "none":
        return []
    if config == "other APIs":
        return [{"api": OTHER_APIS[i % len(OTHER_APIS)], "error": "NOT_COORDINATOR",
                 "times": None} for i in range(RULES)]
    # Rules for other groups, as a test steering several groups installs them; Fetch names
    # no group, so its rules are for another client.
    return [{"api": api, "error": "NOT_COORDINATOR", "times": None,
             **({"client_id": f"nobody-{i}"} if api == "Fetch" else {"group": f"other-{i}"})}
            for i, api in ((i, MIX_APIS[i % len(MIX_APIS)]) for i in range(RULES))]


def _install(control: ControlClient, config: str) -> None:
    control.call("DELETE", "/faults")
    for rule in _rules(config):
        control.call("POST", "/faults", rule)


def _produce_frame() -> Frame:
    cls = message_class(PRODUCE, "request")
    return request(PRODUCE, 9, transactional_id=None, acks=1, timeout_ms=30000,
                   topic_data=[cls.TopicProduceData(name=c.TOPIC, partition_data=[
                       cls.PartitionProduceData(index=0, records=batch([b"x" * 100] * 4))])])


def _fetch_frame() -> Frame:
    cls = message_class(FETCH, "request")
    return request(FETCH, 12, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20,
                   isolation_level=0, session_id=0, session_epoch=-1, rack_id="",
                   forgotten_topics_data=[],
                   topics=[cls.FetchTopic(topic=c.TOPIC, partitions=[cls.FetchPartition(
                       partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])


def _mix(host: str, port: int, client: LoadClient) -> list[Frame]:
    """A member of GROUP (joined and synced) and its requests, each checked to succeed."""
    ensure_topic(client, c.TOPIC, c.PARTITIONS)
    if client.call(_produce_frame()).responses[0].partition_responses[0].error_code:
        raise BenchError("Produce to the bench topic failed")
    member = Member(GROUP, "kcsim-bench-member", 0, session_ms=600_000)
    with Driver(host, port, 1) as driver:
        driver.run([member])
    frames = [c.commit_frame(GROUP, 7, member.member_id, member.generation),
              c.heartbeat_frame(GROUP, member.generation, member.member_id),
              _fetch_frame()]
    commit, heartbeat, fetch = (client.call(f) for f in frames)
    errors = ([p.error_code for t in commit.topics for p in t.partitions]
              + [heartbeat.error_code, fetch.error_code]
              + [p.error_code for t in fetch.responses for p in t.partitions])
    if any(errors):
        raise BenchError(f"the mix's requests answered errors {errors}")
    return frames


@workload("fault_rules", "request_rate", order=25)
def fault_rules(ctx: RunContext) -> list[Figure]:
    """Server CPU per request of OffsetCommit/Heartbeat/Fetch with 20 fault rules that do
    not match, against none."""
    s = ctx.settings
    rounds = max(2, s.rounds, round(s.duration / SLICE_S))
    in_flight = s.pipeline
    side = Side(ctx, "fault_rules", "kcsim", ctx.kcsim(["--in-memory", "--control-port", "0"]))
    slices: dict[str, list[tuple[Any, CpuSample]]] = {k: [] for k in CONFIGS}

    def run(side: Side) -> None:
        srv = side.server
        srv.start()
        found = _CONTROL.search(srv.ready_line)
        if found is None:
            raise BenchError(f"no control API in the ready line {srv.ready_line!r}")
        control = ControlClient(found.group(1))
        with LoadClient(srv.host, srv.port) as client:
            frames = _mix(srv.host, srv.port, client)

            def next_frame(idx: int) -> Frame:
                return frames[idx % len(frames)]

            client.run(next_frame, in_flight=in_flight, duration=s.warmup)
            for r in range(rounds):
                for config in CONFIGS if r % 2 == 0 else CONFIGS[::-1]:
                    _install(control, config)
                    with _Meter(srv.pid) as meter:
                        result = client.run(next_frame, in_flight=in_flight,
                                            duration=s.duration / rounds)
                    assert meter.sample is not None
                    slices[config].append((result, meter.sample))
            listed = control.call("GET", "/faults")["rules"]
            if any(rule["fired"] for rule in listed):
                raise BenchError("a rule meant never to match fired")

    ctx.log(f"fault_rules: {', '.join(CONFIGS)} interleaved, {in_flight} in flight")
    with side.srv:  # type: ignore[union-attr]
        side.attempt(run)
    side.report_stderr()
    cpu_us: dict[str, float] = {}
    extra: dict[str, Any] = {}
    for config, got in slices.items():
        if not got or side.error is not None:
            continue
        result, cpu = combine(got)
        cpu_us[config] = cpu.server / max(result.requests, 1) * 1e6
        extra[config] = per_request_extra(result, cpu)
    figures = []
    for config in CONFIGS:
        figures.append(Figure(
            "fault_rules", f"server CPU/req, {_label(config)}", "µs", cpu_us.get(config), None,
            kcsim_error=side.error, extra={"kcsim": extra.get(config)}))
    for config in CONFIGS[1:]:
        rounds_pct = _paired_overheads(slices["none"], slices[config])
        overhead = statistics.median(rounds_pct) if rounds_pct and side.error is None else None
        figures.append(Figure(
            "fault_rules", f"CPU/req added by {_label(config)}, median of rounds", "%",
            overhead, None, at_most(TARGET_PERCENT, "%"), kcsim_error=side.error,
            extra={"kcsim": {"rounds_percent": [round(x, 2) for x in rounds_pct],
                             "of_totals_percent": None if config not in cpu_us else round(
                                 (cpu_us[config] / cpu_us["none"] - 1) * 100, 2)}}))
    return figures


def _paired_overheads(base: list[tuple[Any, CpuSample]],
                      other: list[tuple[Any, CpuSample]]) -> list[float]:
    """Per round, how much more CPU per request `other` took than `base` (%): the two
    slices of a round ran back to back, so a burst of load elsewhere falls on one round,
    and the median leaves it out."""
    out = []
    for (b, bc), (o, oc) in zip(base, other):
        if b.requests and o.requests and bc.server > 0:
            out.append((oc.server / o.requests) / (bc.server / b.requests) * 100 - 100)
    return out


def _label(config: str) -> str:
    return "no fault rule" if config == "none" else f"{RULES} rules on {config} (no match)"
