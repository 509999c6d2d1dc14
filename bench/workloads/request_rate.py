"""Small-request rate over one connection: ApiVersions and Metadata, 1 and N in flight.

These isolate the per-request path (framing, header and body decode, routing,
encode, send) where trio's own overhead is the natural floor, so the targets are
expressed as server CPU per request relative to the floor.
"""

from __future__ import annotations

from typing import Any

from ..admin import (
    API_VERSIONS,
    api_versions_frame,
    ensure_topic,
    floor_admin_table,
    floor_api_versions,
    metadata_frame,
)
from ..client import BenchError, Frame, LoadClient
from ..harness import RunContext, Side, figures, outcomes
from ..measure import combine, per_request_extra, repeat
from ..registry import Figure, Target, ratio_max, workload

TOPIC = "bench-metadata"
PARTITIONS = 3
UNPIPELINED_TARGET = 2.0
PIPELINED_TARGET = 3.0


def _modes(ctx: RunContext) -> list[tuple[str, int, float]]:
    n = ctx.settings.pipeline
    return [("1 in flight", 1, UNPIPELINED_TARGET), (f"{n} in flight", n, PIPELINED_TARGET)]


def _run(ctx: RunContext, name: str, table: dict[int, bytes], frame_for: Any,
         kcsim_args: list[str] | None = None) -> list[Figure]:
    s = ctx.settings
    modes = _modes(ctx)
    rounds = max(1, s.rounds)

    def open_(side: Side) -> None:
        client = side.state["client"] = LoadClient(side.server.host, side.server.port)
        side.state["frame"] = frame_for(client)

    def warm(side: Side, k: int) -> None:
        repeat(side.state["client"], side.server.pid, side.state["frame"], k, s.warmup, timed=False)

    def timed(side: Side, label: str, k: int) -> None:
        got = repeat(side.state["client"], side.server.pid, side.state["frame"], k,
                     s.duration / rounds)
        side.state.setdefault(label, []).append(got)

    def finish(side: Side, label: str) -> None:
        result, cpu = combine(side.state[label])
        side.values[f"rate {label}"] = result.rate()
        side.values[f"cpu {label}"] = cpu.server / max(result.requests, 1) * 1e6
        side.extra[f"cpu {label}"] = per_request_extra(result, cpu)

    with ctx.paired(name, table, kcsim_args) as sides:
        try:
            for side in sides:
                side.attempt(open_)
            for label, k, _target in modes:
                for side in sides:
                    side.attempt(warm, k)
                for r in range(rounds):
                    for side in sides if r % 2 == 0 else sides[::-1]:
                        side.attempt(timed, label, k)
                for side in sides:
                    side.attempt(finish, label)
        finally:
            for side in sides:
                if "client" in side.state:
                    side.state["client"].close()
    specs: list[tuple[str, str, str, Target | None]] = []
    for label, _k, target in modes:
        specs.append((f"rate {label}", f"req/s, {label}", "req/s", None))
        specs.append((f"cpu {label}", f"server CPU/req, {label}", "µs", ratio_max(target)))
    return figures(name, outcomes(sides), specs)


@workload("api_versions", "request_rate", order=10)
def api_versions(ctx: RunContext) -> list[Figure]:
    """ApiVersions v3 over one connection, unpipelined and pipelined."""

    def frame_for(client: LoadClient) -> Frame:
        frame = api_versions_frame()
        resp = client.call(frame)
        if resp.error_code != 0:
            raise BenchError(f"ApiVersions answered error {resp.error_code}")
        return frame

    return _run(ctx, "api_versions", {API_VERSIONS: floor_api_versions()}, frame_for)


@workload("metadata", "request_rate", order=20)
def metadata(ctx: RunContext) -> list[Figure]:
    """Metadata v12 for one existing 3-partition topic over one connection."""

    def frame_for(client: LoadClient) -> Frame:
        ensure_topic(client, TOPIC, PARTITIONS)
        return metadata_frame(TOPIC)

    return _run(ctx, "metadata", floor_admin_table(TOPIC, PARTITIONS), frame_for,
                kcsim_args=["--default-partitions", str(PARTITIONS)])
