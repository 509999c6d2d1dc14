"""KIP-848 consumer groups: 100 members to Stable, and a pause until fully revoked.

Each member is its own connection sending raw ConsumerGroupHeartbeat v1
requests: it joins with epoch 0, then heartbeats back to back (no heartbeat
interval), always reporting the partitions it was last given, the way a client
that has finished its rebalance callbacks does. A round is one heartbeat from
every member, sent concurrently; after each round a ConsumerGroupDescribe asks
whether the group is Stable. So the figures are the coordinator's cost of
converging, not the clients' timers (real clients add up to one heartbeat
interval, 5 s by default, per step), nor Kafka 4.3+'s assignment interval (kcsim
runs with it at 0: a target in the heartbeat that changes the group). The floor
has no group coordinator: these figures are kcsim's alone.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..admin import ensure_topic
from ..client import BenchError, Frame, LoadClient, message_class, request
from ..harness import RunContext, Side, figures, outcomes
from ..measure import CpuMeter
from ..registry import Figure, at_most, workload

HEARTBEAT, DESCRIBE, PAUSE = 68, 69, 1000
HEARTBEAT_V = 1
DESCRIBE_V = 1
MEMBERS = 100
PARTITIONS = 200
PAUSED_EVERY = 10  # pause every 10th partition
MAX_ROUNDS = 50
STABLE_TARGET_MS = 1000.0
TOPIC = "bench-consumer-groups"
GROUP = "bench-848"


class BenchMember:
    __slots__ = ("epoch", "member_id", "owned")

    def __init__(self) -> None:
        self.member_id = uuid.uuid4().hex
        self.epoch = 0
        self.owned: dict[uuid.UUID, list[int]] = {}

    def frame(self) -> Frame:
        tps = message_class(HEARTBEAT, "request").TopicPartitions
        joining = self.epoch == 0
        return request(
            HEARTBEAT, HEARTBEAT_V, group_id=GROUP, member_id=self.member_id,
            member_epoch=self.epoch, instance_id=None, rack_id=None,
            rebalance_timeout_ms=30000 if joining else -1,
            subscribed_topic_names=[TOPIC] if joining else None, subscribed_topic_regex=None,
            server_assignor=None,
            topic_partitions=[tps(topic_id=t, partitions=ps) for t, ps in self.owned.items()])

    def answer(self, response: Any) -> None:
        if response.error_code != 0:
            raise BenchError(f"ConsumerGroupHeartbeat of {self.member_id} answered error "
                             f"{response.error_code} ({response.error_message})")
        self.epoch = response.member_epoch
        if response.assignment is not None:
            self.owned = {tp.topic_id: list(tp.partitions)
                          for tp in response.assignment.topic_partitions if tp.partitions}


def heartbeat_round(client: LoadClient, members: list[BenchMember]) -> None:
    sent: set[int] = set()

    def next_frame(idx: int) -> Frame | None:
        if idx in sent:
            return None
        sent.add(idx)
        return members[idx].frame()

    def on_response(idx: int, frame: Frame, raw: bytes) -> None:
        members[idx].answer(frame.decode_response(raw))

    client.run(next_frame, on_response, in_flight=1)


def describe(client: LoadClient) -> Any:
    resp = client.call(request(DESCRIBE, DESCRIBE_V, group_ids=[GROUP],
                               include_authorized_operations=False), conn=0)
    group = resp.groups[0]
    if group.error_code != 0:
        raise BenchError(f"ConsumerGroupDescribe answered error {group.error_code}")
    return group


def until_stable(client: LoadClient, members: list[BenchMember], paused: set[int]) -> int:
    """Heartbeat rounds until the group is Stable and owns no paused partition; returns rounds."""
    for rounds in range(1, MAX_ROUNDS + 1):
        heartbeat_round(client, members)
        group = describe(client)
        if group.group_state == "Stable":
            held = {p for m in group.members for tp in m.assignment.topic_partitions
                    for p in tp.partitions}
            if not held & paused:
                return rounds
    raise BenchError(f"the group was not Stable after {MAX_ROUNDS} heartbeat rounds")


def pause_frame(partitions: list[int]) -> Frame:
    cls = message_class(PAUSE, "request")
    return request(PAUSE, 0, group_id=GROUP, topics=[cls.PausePartitionsRequestTopic(
        name=TOPIC, partitions=[cls.PausePartitionsRequestPartition(partition_index=p)
                                for p in partitions])])


def _measure(side: Side) -> None:
    srv = side.server
    members = [BenchMember() for _ in range(MEMBERS)]
    with LoadClient(srv.host, srv.port, connections=MEMBERS) as client:
        ensure_topic(client, TOPIC, PARTITIONS)
        with CpuMeter(srv.pid) as joined:
            rounds = until_stable(client, members, set())
        assert joined.sample is not None
        side.values["stable"] = joined.sample.wall * 1e3
        side.values["stable cpu"] = joined.sample.server * 1e3
        side.extra["stable"] = {"members": MEMBERS, "partitions": PARTITIONS,
                                "heartbeat_rounds": rounds,
                                "server_cpu_ms": round(joined.sample.server * 1e3, 1),
                                "client_cpu_ms": round(joined.sample.client * 1e3, 1)}

        paused = list(range(0, PARTITIONS, PAUSED_EVERY))
        with CpuMeter(srv.pid) as revoked:
            resp = client.call(pause_frame(paused), conn=0)
            if resp.error_code != 0:
                raise BenchError(f"PausePartitions answered error {resp.error_code}")
            rounds = until_stable(client, members, set(paused))
        assert revoked.sample is not None
        side.values["revoked"] = revoked.sample.wall * 1e3
        side.values["revoked cpu"] = revoked.sample.server * 1e3
        side.extra["revoked"] = {"paused": len(paused), "heartbeat_rounds": rounds,
                                 "server_cpu_ms": round(revoked.sample.server * 1e3, 1)}


@workload("consumer_groups", "groups", order=50)
def consumer_groups(ctx: RunContext) -> list[Figure]:
    """100 KIP-848 members to Stable; PausePartitions to full revocation (kcsim only)."""
    sides = []
    if "kcsim" in ctx.sides:
        ctx.log(f"consumer_groups: kcsim, {MEMBERS} members, {PARTITIONS} partitions")
        with ctx.kcsim(["--consumer-group-assignment-interval-ms", "0"]) as srv:
            side = Side(ctx, "consumer_groups", "kcsim", srv)
            side.attempt(lambda s: s.server.start())
            side.attempt(_measure)
        side.report_stderr()
        sides.append(side)
    return figures("consumer_groups", outcomes(sides), [
        ("stable", f"{MEMBERS} members join to Stable (wall)", "ms",
         at_most(STABLE_TARGET_MS, "ms")),
        ("stable cpu", f"{MEMBERS} members join to Stable (server CPU)", "ms",
         at_most(STABLE_TARGET_MS, "ms")),
        ("revoked", f"pause {PARTITIONS // PAUSED_EVERY} partitions to full revocation (wall)",
         "ms", None),
        ("revoked cpu", "pause to full revocation (server CPU)", "ms", None),
    ])
