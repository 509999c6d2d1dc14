"""A big consumer group's heartbeats: 1,000 members, each on its own connection.

The shape of a fleet of consumers: 100 groups of 10 members, every member on a
connection of its own with one heartbeat in flight, the next sent as soon as the
answer came. Nearly all the server's cost here is per connection wake-up, not per
heartbeat, which is what a server handling each connection in its own task pays.

Two protocols:

- classic: members joined and synced (bench/rebalance.py's driver), then Heartbeat v4;
- consumer (KIP-848): each member joins with ConsumerGroupHeartbeat (epoch 0,
  subscribing to a 10-partition topic), then heartbeats in rounds, acknowledging
  what it was assigned, until every member holds a partition and a whole round
  changes no member's epoch or assignment; then the steady heartbeat, which
  repeats only member id and epoch.

`storm` then keeps every connection busy for the given seconds and returns the
heartbeats/s, the server CPU per heartbeat (from /proc) and the p99 round trip.
Every answer is checked: an error code counts as a failure, not a heartbeat.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from . import classic as c
from .client import BenchError, Frame, LoadClient, message_class, request
from .measure import CpuMeter
from .rebalance import Driver, Member

GROUPS, GROUP_SIZE = 100, 10
MEMBERS = GROUPS * GROUP_SIZE
JOIN_CONNECTIONS = 100
LONG_SESSION_MS = 300_000  # within group.max.session.timeout.ms of both brokers' test setup
CONSUMER_HEARTBEAT, CONSUMER_HEARTBEAT_V = 68, 0
TOPIC_PARTITIONS = GROUP_SIZE
MAX_JOIN_ROUNDS = 400


@dataclass
class StormResult:
    rate: float  # heartbeats/s
    cpu_us: float  # server CPU per heartbeat
    p99_ms: float
    errors: dict[int, int] = field(default_factory=dict)  # error code -> answers


def classic_heartbeats(host: str, port: int, prefix: str) -> list[Frame]:
    """Join and sync every group (JOIN_CONNECTIONS members at once); one Heartbeat v4 frame
    per member."""
    at_once = JOIN_CONNECTIONS // GROUP_SIZE
    frames: list[Frame] = []
    with Driver(host, port, JOIN_CONNECTIONS) as driver:
        for lo in range(0, GROUPS, at_once):
            members = [Member(f"{prefix}-{g:03d}", "kcsim-bench", (g - lo) * GROUP_SIZE + i,
                              session_ms=LONG_SESSION_MS)
                       for g in range(lo, min(lo + at_once, GROUPS))
                       for i in range(GROUP_SIZE)]
            driver.run(members)
            frames += [c.heartbeat_frame(m.group, m.generation, m.member_id) for m in members]
    return frames


class ConsumerMember:
    """One KIP-848 member's side of the join: its epoch and what it was last assigned."""

    def __init__(self, group: str, topic: str) -> None:
        self.group = group
        self.topic = topic
        self.member_id = str(uuid.uuid4())
        self.epoch = 0
        self.owned: list[Any] | None = None  # assigned partitions not yet acknowledged
        self.holds = 0  # partitions in the last assignment received
        self.changed = True

    def next_frame(self) -> Frame:
        cls = message_class(CONSUMER_HEARTBEAT, "request")
        if self.epoch == 0:
            return request(CONSUMER_HEARTBEAT, CONSUMER_HEARTBEAT_V, group_id=self.group,
                           member_id=self.member_id, member_epoch=0,
                           rebalance_timeout_ms=LONG_SESSION_MS,
                           subscribed_topic_names=[self.topic], topic_partitions=[])
        owned = None
        if self.owned is not None:
            owned = [cls.TopicPartitions(topic_id=t.topic_id, partitions=t.partitions)
                     for t in self.owned]
            self.owned = None
        return request(CONSUMER_HEARTBEAT, CONSUMER_HEARTBEAT_V, group_id=self.group,
                       member_id=self.member_id, member_epoch=self.epoch,
                       topic_partitions=owned)

    def answered(self, resp: Any) -> None:
        if resp.error_code != 0:
            raise BenchError(f"ConsumerGroupHeartbeat of {self.group} answered "
                             f"{resp.error_code}: {resp.error_message}")
        if resp.member_id and resp.member_id != self.member_id:
            self.member_id = resp.member_id
        if resp.member_epoch != self.epoch:
            self.epoch = resp.member_epoch
            self.changed = True
        if resp.assignment is not None:
            self.owned = resp.assignment.topic_partitions
            self.holds = sum(len(t.partitions) for t in self.owned)
            self.changed = True

    def steady_frame(self) -> Frame:
        return request(CONSUMER_HEARTBEAT, CONSUMER_HEARTBEAT_V, group_id=self.group,
                       member_id=self.member_id, member_epoch=self.epoch)


def consumer_heartbeats(client: LoadClient, prefix: str, topic: str) -> list[Frame]:
    """Join MEMBERS KIP-848 members over the client's connections (one member each) and
    heartbeat in rounds until one changes nothing; one steady heartbeat frame per member."""
    if len(client.conns) != MEMBERS:
        raise BenchError(f"a connection per member: {len(client.conns)} for {MEMBERS}")
    members = [ConsumerMember(f"{prefix}-{i // GROUP_SIZE:03d}", topic) for i in range(MEMBERS)]
    due = [True] * MEMBERS

    def next_frame(idx: int) -> Frame | None:
        if not due[idx]:
            return None
        due[idx] = False
        return members[idx].next_frame()

    def on_response(idx: int, frame: Frame, raw: bytes) -> None:
        members[idx].answered(frame.decode_response(raw))

    for _ in range(MAX_JOIN_ROUNDS):  # a round: one heartbeat per member
        for m in members:
            m.changed = False
        due[:] = [True] * MEMBERS
        client.run(next_frame, on_response)
        if not any(m.changed or not m.holds for m in members):
            return [m.steady_frame() for m in members]
    raise BenchError(f"KIP-848 groups still changing after {MAX_JOIN_ROUNDS} rounds")


def storm(client: LoadClient, pid: int, frames: list[Frame], seconds: float) -> StormResult:
    """Every connection sends its member's frame, one in flight, for `seconds`."""
    errors: dict[int, int] = {}

    def next_frame(idx: int) -> Frame:
        return frames[idx]

    def on_response(_idx: int, frame: Frame, raw: bytes) -> None:
        # Both heartbeats answer error_code first in the body (after throttle_time_ms).
        resp = frame.decode_response(raw)
        if resp.error_code:
            errors[resp.error_code] = errors.get(resp.error_code, 0) + 1

    with CpuMeter(pid) as meter:
        result = client.run(next_frame, on_response, duration=seconds, latencies=True)
    sample = meter.sample
    assert sample is not None
    answered = result.requests - sum(errors.values())
    lat = sorted(result.latencies)
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e3 if lat else float("nan")
    return StormResult(answered / result.elapsed, sample.server / max(answered, 1) * 1e6, p99,
                       errors)
