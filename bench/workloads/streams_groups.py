"""KIP-1071 streams groups: 10 members and 200 tasks to a reconciled group, and what a
steady streams heartbeat costs beside a KIP-848 consumer group's.

- stable: 10 members, each on its own connection, join a word count-like topology
  (subtopology 0 reads a 100-partition topic and writes a repartition topic,
  subtopology 1 reads it into a store with a changelog: 200 tasks), sending raw
  StreamsGroupHeartbeat v1 back to back (no heartbeat interval) and reporting the
  tasks they were last given, as a Kafka Streams thread does once its rebalance
  callbacks ran. A round is one heartbeat from every member at once; after each a
  StreamsGroupDescribe asks whether the group is stable: every member at the group
  epoch, owning exactly its target, and all 200 tasks owned once. The wall time runs
  from the first heartbeat and includes the broker creating the two internal topics.
  kcsim runs with no initial rebalance delay and no assignment interval (Kafka's
  defaults, 3 s and 1 s, are what a real application waits first), each run on a
  fresh application. The median of several runs is shown.
- heartbeat: the last group, stable, beside a KIP-848 group of 10 members on a
  200-partition topic; both heartbeat the steady way (member id and epoch, nothing
  changed) over 10 connections with N in flight each, in alternating slices on the
  same server; server CPU per heartbeat of each and their ratio.

kcsim only: the floor has no group coordinator.
"""

from __future__ import annotations

import statistics
import uuid
from typing import Any

from ..admin import ensure_topic
from ..client import BenchError, Frame, LoadClient, message_class, request
from ..harness import RunContext, Side, figures, outcomes
from ..heartbeat_storm import ConsumerMember
from ..measure import CpuMeter, combine, per_request_extra
from ..phases import Rings, SameAnswer
from ..registry import Figure, at_most, workload

HEARTBEAT, DESCRIBE, LEAVE_EPOCH = 88, 89, -1
HEARTBEAT_V = DESCRIBE_V = 1
MEMBERS = 10
INPUT_PARTITIONS = 100  # two subtopologies of 100 tasks each
TASKS = 2 * INPUT_PARTITIONS
INPUT = "bench-streams-words"
CONSUMER_TOPIC = "bench-streams-848"
CONSUMER_GROUP = "bench-streams-848"
MAX_ROUNDS = 50
STABLE_MS = 100.0
RATIO_MAX = 1.5
KCSIM_ARGS = ["--fsync", "never", "--streams-group-initial-rebalance-delay-ms", "0",
              "--streams-group-assignment-interval-ms", "0",
              "--consumer-group-assignment-interval-ms", "0"]

Task = tuple[str, int]


def topology(app: str) -> Any:
    """Words in, repartitioned by word, counted in a store: 2 × INPUT_PARTITIONS tasks."""
    T = message_class(HEARTBEAT, "request")
    repartition, changelog = f"{app}-count-repartition", f"{app}-store-changelog"
    return T.Topology(epoch=1, subtopologies=[
        T.Subtopology(subtopology_id="0", source_topics=[INPUT],
                      repartition_sink_topics=[repartition]),
        T.Subtopology(subtopology_id="1",
                      repartition_source_topics=[T.TopicInfo(name=repartition)],
                      state_changelog_topics=[T.TopicInfo(name=changelog)]),
    ])


def _task_ids(tasks: set[Task]) -> list[Any]:
    T = message_class(HEARTBEAT, "request")
    by_sub: dict[str, list[int]] = {}
    for sub, p in sorted(tasks):
        by_sub.setdefault(sub, []).append(p)
    return [T.TaskIds(subtopology_id=s, partitions=ps) for s, ps in by_sub.items()]


def _tasks(ids: list[Any] | None) -> set[Task]:
    return {(t.subtopology_id, p) for t in ids or () for p in t.partitions}


class StreamsMember:
    """One streams thread's side of the protocol: its epoch and the tasks it owns."""

    def __init__(self, app: str, n: int) -> None:
        self.app = app
        self.member_id = uuid.uuid4().hex
        self.process_id = f"{app}-process-{n}"
        self.epoch = 0
        self.owned: set[Task] = set()
        self.report = True  # the owned tasks changed since the last heartbeat

    def frame(self) -> Frame:
        joining = self.epoch == 0
        tasks = _task_ids(self.owned) if self.report else None
        self.report = False
        return request(
            HEARTBEAT, HEARTBEAT_V, group_id=self.app, member_id=self.member_id,
            member_epoch=self.epoch, endpoint_information_epoch=0,
            rebalance_timeout_ms=30000 if joining else -1,
            topology=topology(self.app) if joining else None,
            process_id=self.process_id if joining else None,
            active_tasks=tasks, standby_tasks=None if tasks is None else [],
            warmup_tasks=None if tasks is None else [])

    def answer(self, resp: Any) -> None:
        if resp.error_code != 0:
            raise BenchError(f"StreamsGroupHeartbeat of {self.member_id} answered error "
                             f"{resp.error_code} ({resp.error_message})")
        self.epoch = resp.member_epoch
        if resp.active_tasks is not None:
            self.owned = _tasks(resp.active_tasks)
            self.report = True

    def steady_frame(self) -> Frame:
        return request(HEARTBEAT, HEARTBEAT_V, group_id=self.app, member_id=self.member_id,
                       member_epoch=self.epoch, endpoint_information_epoch=0)

    def leave_frame(self) -> Frame:
        return request(HEARTBEAT, HEARTBEAT_V, group_id=self.app, member_id=self.member_id,
                       member_epoch=LEAVE_EPOCH, endpoint_information_epoch=0)


def _round(client: LoadClient, frames: list[Frame], answer: list[Any]) -> None:
    """One frame per connection, all at once; each answer handed to its member."""
    sent: set[int] = set()

    def next_frame(idx: int) -> Frame | None:
        if idx in sent:
            return None
        sent.add(idx)
        return frames[idx]

    def on_response(idx: int, frame: Frame, raw: bytes) -> None:
        answer[idx](frame.decode_response(raw))

    client.run(next_frame, on_response, in_flight=1)


def _reconciled(client: LoadClient, app: str) -> bool:
    resp = client.call(request(DESCRIBE, DESCRIBE_V, group_ids=[app],
                               include_authorized_operations=False), conn=0)
    group = resp.groups[0]
    if group.error_code != 0:
        raise BenchError(f"StreamsGroupDescribe answered error {group.error_code}")
    if group.group_state != "Stable" or group.assignment_epoch != group.group_epoch:
        return False
    owned: list[Task] = []
    for m in group.members:
        got = _tasks(m.assignment.active_tasks)
        if m.member_epoch != group.group_epoch or got != _tasks(m.target_assignment.active_tasks):
            return False
        owned += got
    return len(owned) == TASKS == len(set(owned))


def until_stable(client: LoadClient, members: list[StreamsMember]) -> int:
    """Heartbeat rounds until the group is reconciled; returns the rounds."""
    for rounds in range(1, MAX_ROUNDS + 1):
        _round(client, [m.frame() for m in members], [m.answer for m in members])
        if _reconciled(client, members[0].app):
            return rounds
    raise BenchError(f"the streams group was not stable after {MAX_ROUNDS} heartbeat rounds")


def _join_consumers(client: LoadClient) -> list[Frame]:
    """A KIP-848 group of MEMBERS on the consumer topic, heartbeating until a round changes
    nothing; the steady frame of each member."""
    members = [ConsumerMember(CONSUMER_GROUP, CONSUMER_TOPIC) for _ in range(MEMBERS)]
    for _ in range(MAX_ROUNDS):
        for m in members:
            m.changed = False
        _round(client, [m.next_frame() for m in members], [m.answered for m in members])
        if not any(m.changed or not m.holds for m in members):
            return [m.steady_frame() for m in members]
    raise BenchError(f"the consumer group still changed after {MAX_ROUNDS} rounds")


def _heartbeat_ok(resp: Any) -> str | None:
    if resp.error_code != 0:
        return f"heartbeat answered error {resp.error_code}"
    return None


def _measure(side: Side, runs: int, in_flight: int, seconds: float, warmup: float,
             rounds: int) -> None:
    srv = side.server
    walls: list[float] = []
    cpus: list[float] = []
    heartbeat_rounds: list[int] = []
    with LoadClient(srv.host, srv.port, connections=MEMBERS) as client:
        ensure_topic(client, INPUT, INPUT_PARTITIONS)
        ensure_topic(client, CONSUMER_TOPIC, TASKS)
        for run in range(runs + 1):  # the first run warms up
            members = [StreamsMember(f"bench-streams-{run}", i) for i in range(MEMBERS)]
            with CpuMeter(srv.pid) as meter:
                n = until_stable(client, members)
            assert meter.sample is not None
            if run:
                walls.append(meter.sample.wall * 1e3)
                cpus.append(meter.sample.server * 1e3)
                heartbeat_rounds.append(n)
            if run < runs:
                _round(client, [m.leave_frame() for m in members], [_ignore] * MEMBERS)
        side.values["stable"] = statistics.median(walls)
        side.values["stable cpu"] = statistics.median(cpus)
        side.extra["stable"] = {"members": MEMBERS, "tasks": TASKS, "runs": runs,
                                "wall_ms": [round(w, 1) for w in walls],
                                "server_cpu_ms": [round(c, 1) for c in cpus],
                                "heartbeat_rounds": heartbeat_rounds}
        streams = [m.steady_frame() for m in members]
        consumers = _join_consumers(client)
    loads = {"streams": Rings(LoadClient(srv.host, srv.port, MEMBERS), [[f] for f in streams],
                              SameAnswer(_heartbeat_ok)),
             "consumer": Rings(LoadClient(srv.host, srv.port, MEMBERS),
                               [[f] for f in consumers], SameAnswer(_heartbeat_ok))}
    try:
        for load in loads.values():
            load.run(srv.pid, None, in_flight, warmup)
        for r in range(rounds):
            for label in (("streams", "consumer") if r % 2 == 0 else ("consumer", "streams")):
                loads[label].run(srv.pid, label, in_flight, seconds / rounds)
    finally:
        for load in loads.values():
            load.close()
    for label, load in loads.items():
        result, cpu = combine(load.slices[label])
        side.values[f"cpu {label}"] = cpu.server / max(result.requests, 1) * 1e6
        side.extra[f"cpu {label}"] = per_request_extra(result, cpu)
    side.values["ratio"] = side.values["cpu streams"] / side.values["cpu consumer"]


def _ignore(_resp: Any) -> None:
    """A leaving member's answer: nothing to keep."""


@workload("streams_groups", "groups", order=56)
def streams_groups(ctx: RunContext) -> list[Figure]:
    """10 streams members, 200 tasks to stable; steady streams vs KIP-848 heartbeat CPU."""
    s = ctx.settings
    name = "streams_groups"
    runs = 3 if s.quick else 9
    sides = []
    if "kcsim" in ctx.sides:
        ctx.log(f"{name}: kcsim, {MEMBERS} members, {TASKS} tasks")
        with ctx.kcsim(KCSIM_ARGS) as srv:
            side = Side(ctx, name, "kcsim", srv)
            side.attempt(lambda x: x.server.start())
            side.attempt(_measure, runs, s.pipeline, max(s.duration / 2, 0.4), s.warmup,
                         max(2, s.rounds))
        side.report_stderr()
        sides.append(side)
    what = f"{MEMBERS} members × {s.pipeline} in flight, steady"
    return figures(name, outcomes(sides), [
        ("stable", f"{MEMBERS} streams members, {TASKS} tasks: first heartbeat to stable "
         "(wall, median)", "ms", at_most(STABLE_MS, "ms")),
        ("stable cpu", f"{MEMBERS} streams members, {TASKS} tasks to stable (server CPU)", "ms",
         None),
        ("cpu streams", f"StreamsGroupHeartbeat, {what}: server CPU/heartbeat", "µs", None),
        ("cpu consumer", f"ConsumerGroupHeartbeat, {what}: server CPU/heartbeat", "µs", None),
        ("ratio", "streams heartbeat CPU / consumer heartbeat CPU", "x",
         at_most(RATIO_MAX, "x")),
    ])
