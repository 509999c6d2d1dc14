"""Classic groups (issue #3): offsets, rebalances, group listing and heartbeats at scale.

- group_commit: OffsetCommit v8 of 10 partitions per request, simple commits
  (generation -1, no member id) each connection to its own Empty group, over 1
  and 8 connections with 1 and N requests in flight; kcsim runs with
  `--fsync never` (fsync is storage_commits' subject), so the figure is the
  coordinator's and the shell's CPU per request.
- group_fetch: 1,000 groups with 10 committed partitions each; OffsetFetch v8
  of one group per request (sequential, then N in flight) against one KIP-709
  request naming all 1,000 groups.
- group_rebalance: 10 and 100 classic members, each on its own connection, to
  Stable (bench/rebalance.py: JoinGroup v9 with the MEMBER_ID_REQUIRED round
  trip, SyncGroup v5, the leader assigning round-robin); initial rebalance delay
  0 (kcsim's default), `--fsync never`.
- group_admin: 1,000 then 10,000 one-member Stable groups (created by the same
  join/sync exchange); ListGroups v5 of all of them and DescribeGroups v5 of all
  of them in sequential requests of 100, and how the cost grows with 10x groups.
- group_heartbeat: 1,000 members in 100 groups of 10, joined and synced, then
  Heartbeat v4 round-robin over 16 connections with N in flight each.

The floor answers each API with one fixed response shaped like kcsim's, so the
rebalance floor is the same three requests per member with no coordination.
Request-rate figures take server CPU from /proc over phases of seconds;
per-call figures (a sweep of fetches, one rebalance, one listing) from the
server's CPU clock (bench/cpuclock.py), since one call may cost under /proc's
10 ms tick. Wall-clock figures suffer from other load on the machine; the CPU
ones much less.
"""

from __future__ import annotations

from typing import Any

from .. import classic as c
from ..admin import API_VERSIONS, ensure_topic, floor_admin_table, floor_api_versions
from ..client import BenchError, Frame, LoadClient
from ..harness import BASELINE, RunContext, Settings, Side, figures
from ..measure import combine, per_request_extra
from ..phases import Calls, Rings, SameAnswer, alternate, beside, merged, one_side, sweep
from ..rebalance import Driver, Member
from ..registry import Figure, Target, at_least, at_most, workload

FSYNC_NEVER = ["--fsync", "never"]
COMMIT_CONNECTIONS = 8
RING = 64  # distinct commit frames per connection, cycled
UNPIPELINED_US, PIPELINED_US = 100.0, 30.0

FETCH_GROUPS = 1000
FETCH_OFFSET = 5000
KIP709_MS, KIP709_SPEEDUP = 50.0, 5.0

REBALANCE_SIZES = (10, 100)
STABLE_MS = 300.0  # for 100 members

ADMIN_SIZES = (1000, 10000)
DESCRIBE_BATCH = 100
LIST_MS, DESCRIBE_MS, GROWTH_MAX = 60.0, 150.0, 12.0
POPULATE_CONNECTIONS = 100
LONG_SESSION_MS = 1_800_000  # group.max.session.timeout.ms: populated members outlive the run

HEARTBEAT_GROUPS, HEARTBEAT_GROUP_SIZE = 100, 10
HEARTBEAT_CONNECTIONS = 16
HEARTBEATS_PER_S = 20000.0


def _accepted(resp: Any) -> str | None:
    errors = {p.error_code for t in resp.topics for p in t.partitions}
    return None if errors == {0} else f"OffsetCommit answered errors {sorted(errors)}"


def _commit_table() -> dict[int, bytes]:
    table = floor_admin_table(c.TOPIC, c.PARTITIONS)
    table[c.OFFSET_COMMIT] = c.floor_commit()
    return table


def _populate_commits(client: LoadClient, frames: list[Frame]) -> None:
    """Send every frame once, spread over the client's connections, 16 in flight each."""
    conns = len(client.conns)
    queues = [iter(frames[i::conns]) for i in range(conns)]
    client.run(lambda idx: next(queues[idx], None), SameAnswer(_accepted), in_flight=16)


# -- OffsetCommit ---------------------------------------------------------------------


def _commit_modes(s: Settings) -> list[tuple[str, int, int, float]]:
    k = s.pipeline
    return [(f"{n} conn × {f} in flight", n, f, UNPIPELINED_US if f == 1 else PIPELINED_US)
            for n in (1, COMMIT_CONNECTIONS) for f in (1, k)]


@workload("group_commit", "groups", order=51)
def group_commit(ctx: RunContext) -> list[Figure]:
    """OffsetCommit v8 of 10 partitions (simple commits), 1/8 connections × 1/N in flight."""
    s = ctx.settings
    name = "group_commit"
    modes = _commit_modes(s)
    seconds = max(s.duration / 4, 0.2)
    rounds = max(1, s.rounds // 2)

    def open_(side: Side) -> None:
        srv = side.server
        client = LoadClient(srv.host, srv.port, COMMIT_CONNECTIONS)
        rings = [[c.commit_frame(f"bench-commit-{i}", n * 1000) for n in range(RING)]
                 for i in range(COMMIT_CONNECTIONS)]
        side.state["load"] = Rings(client, rings, SameAnswer(_accepted))
        ensure_topic(client, c.TOPIC, c.PARTITIONS)
        for i in range(COMMIT_CONNECTIONS):
            problem = _accepted(client.call(rings[i][0], conn=i))
            if problem:
                raise BenchError(problem)

    def phase(side: Side, label: str | None, conns: int, in_flight: int, secs: float) -> None:
        side.state["load"].run(side.server.pid, label, in_flight, secs,
                               only=0 if conns == 1 else None)

    with ctx.paired(name, _commit_table(), FSYNC_NEVER) as sides:
        try:
            for side in sides:
                side.attempt(open_)
            for label, conns, k, _ in modes:
                alternate(sides, 1, phase, None, conns, k, s.warmup / 2)
                alternate(sides, rounds, phase, label, conns, k, seconds / rounds)
                for side in sides:
                    side.attempt(_rate_figures, label)
        finally:
            _close(sides, "load")
    specs: list[tuple[str, str, str, Target | None]] = []
    for label, _n, _k, target in modes:
        specs.append((f"cpu {label}", f"OffsetCommit 10 partitions, {label}: server CPU/req "
                      "(fsync never)", "µs", at_most(target, "µs")))
        specs.append((f"rate {label}", f"OffsetCommit 10 partitions, {label}: req/s", "req/s",
                      None))
    return figures(name, merged(sides), specs)


def _rate_figures(side: Side, label: str) -> None:
    """Request rate and server CPU per request of the slices timed under `label`."""
    result, cpu = combine(side.state["load"].slices[label])
    side.values[f"rate {label}"] = result.rate()
    side.values[f"cpu {label}"] = cpu.server / max(result.requests, 1) * 1e6
    side.extra[f"cpu {label}"] = per_request_extra(result, cpu)


def _close(sides: list[Side], *keys: str) -> None:
    for side in sides:
        for key in keys:
            if key in side.state:
                side.state[key].close()


# -- OffsetFetch ----------------------------------------------------------------------


def _fetch_groups() -> list[str]:
    return [f"bench-fetch-{i:04d}" for i in range(FETCH_GROUPS)]


def _check_fetch(resp: Any, groups: list[str]) -> None:
    got = [g.group_id for g in resp.groups]
    if got != groups:
        raise BenchError(f"OffsetFetch answered {len(got)} groups, wanted {len(groups)}")
    for g in resp.groups:
        offsets = [(p.partition_index, p.committed_offset, p.error_code)
                   for t in g.topics for p in t.partitions]
        want = [(p, FETCH_OFFSET + p, 0) for p in range(c.PARTITIONS)]
        if g.error_code != 0 or offsets != want:
            raise BenchError(f"OffsetFetch of {g.group_id}: error {g.error_code}, {offsets}")


@workload("group_fetch", "groups", order=52)
def group_fetch(ctx: RunContext) -> list[Figure]:
    """OffsetFetch of 1,000 groups × 10 partitions: per-group requests vs one KIP-709 request."""
    s = ctx.settings
    name = "group_fetch"
    groups = _fetch_groups()
    per_group = [c.fetch_frame([g]) for g in groups]
    batched = c.fetch_frame(groups)
    sweeps = 1 if s.quick else 3
    singles = 3 if s.quick else 10
    k = s.pipeline

    def populate(side: Side) -> None:
        srv = side.server
        with LoadClient(srv.host, srv.port, 8) as client:
            ensure_topic(client, c.TOPIC, c.PARTITIONS)
            _populate_commits(client, [c.commit_frame(g, FETCH_OFFSET) for g in groups])
            _check_fetch(client.call(per_group[0]), groups[:1])
            _check_fetch(client.call(batched), groups)

    def connect(side: Side) -> None:
        side.state["client"] = LoadClient(side.server.host, side.server.port)
        side.state["calls"] = {}

    def timed(side: Side, label: str | None, fn: Any) -> None:
        """One call of `fn`, timed under `label` (None: a warm-up)."""
        client = side.state["client"]
        if label is None:
            fn(client)
            return
        side.state["calls"].setdefault(label, Calls()).timed(side.server.pid, lambda: fn(client))

    def seq(client: LoadClient) -> int:
        return sweep(client, per_group, 1)

    def pipelined(client: LoadClient) -> int:
        return sweep(client, per_group, k)

    def kip709(client: LoadClient) -> int:
        return sweep(client, [batched], 1)

    def finish(side: Side) -> None:
        calls: dict[str, Calls] = side.state["calls"]
        for label, got in calls.items():
            side.values[f"{label} wall"] = got.median_ms()
            side.values[f"{label} cpu"] = (got.cpu_ms_per_call() if label == "kip709"
                                           else got.cpu_us_per_request())
            side.extra[f"{label} wall"] = got.detail()
        _speedups(side.values)

    def close(side: Side | None) -> None:
        if side is not None and "client" in side.state:
            side.state["client"].close()

    floor_single = floor_admin_table(c.TOPIC, c.PARTITIONS)
    floor_single[c.OFFSET_FETCH] = c.floor_fetch(groups[:1], FETCH_OFFSET)
    floor_batched = {API_VERSIONS: floor_api_versions(),
                     c.OFFSET_FETCH: c.floor_fetch(groups, FETCH_OFFSET)}
    sides: list[Side | None] = []
    with one_side(ctx, name, "kcsim") as kc, one_side(ctx, name, BASELINE) as bl:
        sides.append(kc)
        try:
            for side in (kc, bl):
                if side is not None:
                    side.attempt(populate)
            if kc is not None:
                kc.attempt(connect)
            with beside(ctx, name, bl, floor_single) as fl:
                sides.append(fl)
                if fl is not None:
                    fl.attempt(connect)
                try:
                    alternate([kc, fl], 1, timed, None, seq)
                    alternate([kc, fl], sweeps, timed, "seq", seq)
                    alternate([kc, fl], sweeps, timed, "pipelined", pipelined)
                finally:
                    close(fl)
                if fl is not None:
                    fl.attempt(finish)
            with beside(ctx, name, bl, floor_batched) as fl2:
                sides.append(fl2)
                if fl2 is not None:
                    fl2.attempt(connect)
                try:
                    alternate([kc, fl2], 1, timed, None, kip709)
                    alternate([kc, fl2], singles, timed, "kip709", kip709)
                finally:
                    close(fl2)
                if fl2 is not None:
                    fl2.attempt(finish)
            if kc is not None:
                kc.attempt(finish)
        finally:
            close(kc)
    results = merged(sides)
    for outcome in results.values():
        _speedups(outcome.values)
    n = f"{FETCH_GROUPS:,} groups × {c.PARTITIONS} partitions"
    return figures(name, results, [
        ("seq wall", f"OffsetFetch {n}, one request per group, sequential: total (wall)", "ms",
         None),
        ("seq cpu", "… sequential: server CPU/req", "µs", None),
        ("pipelined wall", f"… one request per group, {k} in flight: total (wall)", "ms", None),
        ("pipelined cpu", f"… {k} in flight: server CPU/req", "µs", None),
        ("kip709 wall", f"OffsetFetch {n} in one KIP-709 request (wall)", "ms",
         at_most(KIP709_MS, "ms")),
        ("kip709 cpu", "… one KIP-709 request: server CPU", "ms", at_most(KIP709_MS, "ms")),
        ("speedup seq", "KIP-709 request vs sequential per-group requests (wall)", "x faster",
         at_least(KIP709_SPEEDUP, "x")),
        ("speedup pipelined", f"KIP-709 request vs per-group requests {k} in flight (wall)",
         "x faster", None),
    ])


def _speedups(values: dict[str, float]) -> None:
    """How many times faster the one KIP-709 request is than the per-group sweeps."""
    one = values.get("kip709 wall")
    for label in ("seq", "pipelined"):
        sweep_ms = values.get(f"{label} wall")
        if one and sweep_ms:
            values[f"speedup {label}"] = sweep_ms / one


# -- rebalance ------------------------------------------------------------------------


def _rebalance_table() -> dict[int, bytes]:
    largest = max(REBALANCE_SIZES)
    ids = [c.member_id_of("kcsim-bench", i) for i in range(largest)]
    return {c.JOIN_GROUP: c.floor_join(ids[1]), c.SYNC_GROUP: c.floor_sync(largest),
            c.LEAVE_GROUP: c.floor_leave(ids)}


@workload("group_rebalance", "groups", order=53)
def group_rebalance(ctx: RunContext) -> list[Figure]:
    """10 and 100 classic members, each on its own connection, from JoinGroup to Stable."""
    s = ctx.settings
    name = "group_rebalance"
    reps = 3 if s.quick else 10
    largest = max(REBALANCE_SIZES)

    def open_(side: Side) -> None:
        srv = side.server
        side.state["driver"] = Driver(srv.host, srv.port, largest)
        side.state["admin"] = LoadClient(srv.host, srv.port)
        side.state["n"] = 0

    def once(side: Side, size: int, timed: bool) -> None:
        st = side.state
        st["n"] += 1
        group = f"bench-rebalance-{size}-{st['n']}"
        members = [Member(group, "kcsim-bench", i) for i in range(size)]
        scripted = side.name == "floor"
        got: dict[str, Any] = {}

        def run() -> tuple[int, float]:
            """Wall time from the first JoinGroup to the last SyncGroup answer."""
            result = got["result"] = st["driver"].run(members, scripted=scripted)
            return sum(result.requests.values()), result.seconds

        if timed:
            st.setdefault(f"calls {size}", Calls()).timed(side.server.pid, run)
            result = got["result"]
            st.setdefault(f"gens {size}", []).append(result.max_generation())
            st.setdefault(f"heartbeats {size}", []).append(result.requests.get("Heartbeat", 0))
        else:
            run()
        resp = st["admin"].call(c.leave_frame(group, [m.member_id for m in members]))
        if not scripted and resp.error_code != 0:
            raise BenchError(f"LeaveGroup answered error {resp.error_code}")

    def finish(side: Side, size: int) -> None:
        calls: Calls = side.state[f"calls {size}"]
        side.values[f"wall {size}"] = calls.median_ms()
        side.values[f"cpu {size}"] = calls.cpu_ms_per_call()
        side.extra[f"wall {size}"] = {**calls.detail(),
                                      "generations": side.state.get(f"gens {size}"),
                                      "heartbeats": side.state.get(f"heartbeats {size}")}

    with ctx.paired(name, _rebalance_table(), FSYNC_NEVER) as sides:
        try:
            for side in sides:
                side.attempt(open_)
            for size in REBALANCE_SIZES:
                alternate(sides, 1, once, size, False)
                alternate(sides, reps, once, size, True)
                for side in sides:
                    side.attempt(finish, size)
        finally:
            _close(sides, "driver", "admin")
    specs: list[tuple[str, str, str, Target | None]] = []
    for size in REBALANCE_SIZES:
        target = at_most(STABLE_MS, "ms") if size == largest else None
        specs.append((f"wall {size}", f"{size} members, first JoinGroup to all synced "
                      "(wall, median, fsync never)", "ms", target))
        specs.append((f"cpu {size}", f"{size} members to Stable: server CPU per rebalance",
                      "ms", target))
    return figures(name, merged(sides), specs)


# -- ListGroups / DescribeGroups --------------------------------------------------------


def _admin_group(i: int) -> str:
    return f"bench-group-{i:05d}"


def _populate_groups(driver: Driver, start: int, stop: int) -> None:
    """One-member groups start..stop-1, POPULATE_CONNECTIONS joining at a time."""
    for lo in range(start, stop, POPULATE_CONNECTIONS):
        hi = min(lo + POPULATE_CONNECTIONS, stop)
        driver.run([Member(_admin_group(i), "kcsim-bench", i - lo, session_ms=LONG_SESSION_MS)
                    for i in range(lo, hi)])


def _check_listing(resp: Any, size: int) -> None:
    stable = [g for g in resp.groups if g.group_state == "Stable"]
    if resp.error_code != 0 or len(resp.groups) != size or len(stable) != size:
        raise BenchError(f"ListGroups answered error {resp.error_code} with {len(resp.groups)} "
                         f"groups ({len(stable)} Stable), wanted {size} Stable")


def _check_described(resp: Any, groups: list[str]) -> None:
    bad = [g.group_id for g in resp.groups
           if g.error_code != 0 or g.group_state != "Stable" or len(g.members) != 1]
    if [g.group_id for g in resp.groups] != groups or bad:
        raise BenchError(f"DescribeGroups: {len(bad)} of {len(groups)} groups not Stable "
                         f"with one member (first: {bad[:1]})")


@workload("group_admin", "groups", order=54)
def group_admin(ctx: RunContext) -> list[Figure]:
    """ListGroups and DescribeGroups (100 per request) of 1,000 and 10,000 Stable groups."""
    s = ctx.settings
    name = "group_admin"
    min_seconds = 0.3 if s.quick else 1.0
    list_frame = c.list_groups_frame()
    describe = {size: [f for f, _ in _describe_frames(size)] for size in ADMIN_SIZES}

    def connect(side: Side) -> None:
        side.state["client"] = LoadClient(side.server.host, side.server.port)

    def grow(side: Side, size: int) -> None:
        srv = side.server
        have = side.state.get("groups", 0)
        with Driver(srv.host, srv.port, POPULATE_CONNECTIONS) as driver:
            _populate_groups(driver, have, size)
        side.state["groups"] = size
        client: LoadClient = side.state["client"]
        _check_listing(client.call(list_frame), size)
        for frame, ids in _describe_frames(size)[:: max(1, size // DESCRIBE_BATCH // 4)]:
            _check_described(client.call(frame), ids)

    def measure(side: Side, size: int, what: str, timed: bool) -> None:
        client: LoadClient = side.state["client"]
        frames = describe[size] if what == "describe" else [list_frame]
        if timed:
            calls = side.state.setdefault(f"{what} {size}", Calls())
            calls.timed(side.server.pid, lambda: sweep(client, frames, 1))
        else:
            sweep(client, frames, 1)

    def enough(side: Side | None, size: int, what: str) -> bool:
        """Three calls at least, and kcsim's adding up to min_seconds (the floor's are
        too quick for that: it simply takes as many as kcsim)."""
        if side is None or side.error is not None:
            return True
        calls: Calls | None = side.state.get(f"{what} {size}")
        if calls is None or len(calls.walls) < 3:
            return False
        return side.name == "floor" or sum(calls.walls) >= min_seconds

    def finish(side: Side, size: int) -> None:
        for what in ("list", "describe"):
            calls: Calls | None = side.state.get(f"{what} {size}")
            if calls is None:
                continue
            side.values[f"{what} {size} wall"] = calls.median_ms()
            side.values[f"{what} {size} cpu"] = calls.cpu_ms_per_call()
            side.extra[f"{what} {size} wall"] = calls.detail()

    sides: list[Side | None] = []
    with one_side(ctx, name, "kcsim") as kc, one_side(ctx, name, BASELINE) as bl:
        sides.append(kc)
        for side in (kc, bl):
            if side is not None:
                side.attempt(connect)
        try:
            for size in ADMIN_SIZES:
                for side in (kc, bl):
                    if side is not None:
                        ctx.log(f"{name}: {side.name}, populating {size:,} one-member groups")
                        side.attempt(grow, size)
                ids = [_admin_group(i) for i in range(size)]
                table = {c.LIST_GROUPS: c.floor_list_groups(ids),
                         c.DESCRIBE_GROUPS: c.floor_describe(ids[:DESCRIBE_BATCH])}
                with beside(ctx, name, bl, table) as fl:
                    sides.append(fl)
                    if fl is not None and "client" not in fl.state:
                        fl.attempt(connect)
                    try:
                        for what in ("list", "describe"):
                            alternate([kc, fl], 1, measure, size, what, False)
                            while not (enough(kc, size, what) and enough(fl, size, what)):
                                alternate([kc, fl], 1, measure, size, what, True)
                    finally:
                        if fl is not None and fl is not bl and "client" in fl.state:
                            fl.state["client"].close()
                    for side in (kc, fl):
                        if side is not None:
                            side.attempt(finish, size)
        finally:
            for side in (kc, bl):
                if side is not None and "client" in side.state:
                    side.state["client"].close()
    small, large = ADMIN_SIZES
    batches = large // DESCRIBE_BATCH
    specs: list[tuple[str, str, str, Target | None]] = []
    for size in ADMIN_SIZES:
        big = size == large
        specs += [
            (f"list {size} wall", f"ListGroups v5, {size:,} groups (wall, median)", "ms",
             at_most(LIST_MS, "ms") if big else None),
            (f"list {size} cpu", f"ListGroups v5, {size:,} groups: server CPU", "ms",
             at_most(LIST_MS, "ms") if big else None),
            (f"describe {size} wall", f"DescribeGroups v5 of all {size:,}, {DESCRIBE_BATCH} "
             "per request, sequential: total (wall, median)", "ms",
             at_most(DESCRIBE_MS, "ms") if big else None),
            (f"describe {size} cpu", f"DescribeGroups of all {size:,}: server CPU", "ms",
             at_most(DESCRIBE_MS, "ms") if big else None),
        ]
    specs += [
        ("list growth", f"ListGroups cost, {large:,} / {small:,} groups (server CPU)", "x",
         at_most(GROWTH_MAX, "x")),
        ("describe growth", f"DescribeGroups cost, {large:,} / {small:,} groups "
         f"({batches} / {small // DESCRIBE_BATCH} requests, server CPU)", "x",
         at_most(GROWTH_MAX, "x")),
    ]
    results = merged(sides)
    for outcome in results.values():
        _growth(outcome.values)
    return figures(name, results, specs)


def _describe_frames(size: int) -> list[tuple[Frame, list[str]]]:
    out = []
    for lo in range(0, size, DESCRIBE_BATCH):
        ids = [_admin_group(i) for i in range(lo, min(lo + DESCRIBE_BATCH, size))]
        out.append((c.describe_frame(ids), ids))
    return out


def _growth(values: dict[str, float]) -> None:
    """Cost at the large size over cost at the small one: 10 when it grows linearly."""
    small, large = ADMIN_SIZES
    for what in ("list", "describe"):
        lo, hi = values.get(f"{what} {small} cpu"), values.get(f"{what} {large} cpu")
        if lo and hi:
            values[f"{what} growth"] = hi / lo


# -- heartbeats -----------------------------------------------------------------------


def _heartbeat_frames(members: list[tuple[str, int, str]]) -> list[list[Frame]]:
    """Each member's Heartbeat, dealt round-robin to HEARTBEAT_CONNECTIONS connections."""
    frames = [c.heartbeat_frame(g, gen, m) for g, gen, m in members]
    return [frames[i::HEARTBEAT_CONNECTIONS] for i in range(HEARTBEAT_CONNECTIONS)]


def _heartbeat_ok(resp: Any) -> str | None:
    return None if resp.error_code == 0 else f"Heartbeat answered error {resp.error_code}"


@workload("group_heartbeat", "groups", order=55)
def group_heartbeat(ctx: RunContext) -> list[Figure]:
    """1,000 members in 100 groups heartbeating (Heartbeat v4) over 16 connections, pipelined."""
    s = ctx.settings
    name = "group_heartbeat"
    k = s.pipeline
    seconds = max(s.duration / 2, 0.4)
    rounds = max(1, s.rounds)
    label = "heartbeat"

    def populate(side: Side) -> None:
        srv = side.server
        if side.name == "floor":
            joined = [(f"bench-hb-{g:03d}", 1, c.member_id_of("kcsim-bench", i))
                      for g in range(HEARTBEAT_GROUPS) for i in range(HEARTBEAT_GROUP_SIZE)]
        else:
            joined = _join_heartbeat_groups(srv.host, srv.port)
        client = LoadClient(srv.host, srv.port, HEARTBEAT_CONNECTIONS)
        side.state["load"] = Rings(client, _heartbeat_frames(joined), SameAnswer(_heartbeat_ok))

    def phase(side: Side, timed: str | None, secs: float) -> None:
        side.state["load"].run(side.server.pid, timed, k, secs)

    table = {c.HEARTBEAT: c.floor_heartbeat()}
    with ctx.paired(name, table) as sides:
        try:
            for side in sides:
                side.attempt(populate)
            alternate(sides, 1, phase, None, s.warmup)
            alternate(sides, rounds, phase, label, seconds / rounds)
            for side in sides:
                side.attempt(_rate_figures, label)
        finally:
            _close(sides, "load")
    members = HEARTBEAT_GROUPS * HEARTBEAT_GROUP_SIZE
    what = (f"Heartbeat v4, {members:,} members in {HEARTBEAT_GROUPS} groups, "
            f"{HEARTBEAT_CONNECTIONS} conns × {k} in flight")
    return figures(name, merged(sides), [
        (f"rate {label}", f"{what}: heartbeats/s", "req/s", at_least(HEARTBEATS_PER_S, "req/s")),
        (f"cpu {label}", f"{what}: server CPU/heartbeat", "µs",
         at_most(1e6 / HEARTBEATS_PER_S, "µs")),
    ])


def _join_heartbeat_groups(host: str, port: int) -> list[tuple[str, int, str]]:
    """Join and sync every heartbeat group, as many at once as there are connections;
    returns (group, generation, member id) of every member."""
    at_once = POPULATE_CONNECTIONS // HEARTBEAT_GROUP_SIZE
    joined: list[tuple[str, int, str]] = []
    with Driver(host, port, POPULATE_CONNECTIONS) as driver:
        for lo in range(0, HEARTBEAT_GROUPS, at_once):
            members = [Member(f"bench-hb-{g:03d}", "kcsim-bench",
                              (g - lo) * HEARTBEAT_GROUP_SIZE + i, session_ms=LONG_SESSION_MS)
                       for g in range(lo, min(lo + at_once, HEARTBEAT_GROUPS))
                       for i in range(HEARTBEAT_GROUP_SIZE)]
            driver.run(members)
            joined += [(m.group, m.generation, m.member_id) for m in members]
    return joined
