"""Several brokers in one kcsim (`--brokers 3`): what the setting costs a commit, and how
long a big group takes to be Stable again after its coordinator moves.

- brokers_commit: OffsetCommit v8 of 10 partitions (simple commits, one connection, one
  in flight) to the group's coordinator, server CPU per request, through a kcsim of
  three brokers against one of one broker (the wrong-node guards are the difference).
- brokers_move: 100 KIP-848 members Stable in one group of an embedded three-broker
  kcsim; its coordinator moves (load time 0); the time until every member heard the
  new coordinator without error and the group is Stable again, the members
  heartbeating as fast as they are answered (FindCoordinator on NOT_COORDINATOR).

kcsim only: the floor has no nodes.
"""

from __future__ import annotations

import time
import uuid

from kcsim.protocol.codecs import request_class

from .. import classic as c
from ..admin import ensure_topic
from ..client import Frame, LoadClient, request
from ..harness import RunContext, Side, figures, outcomes
from ..procstat import cpu_seconds
from ..registry import Figure, workload

COMMITS = 3000
MEMBERS = 100
FIND_COORDINATOR, CONSUMER_GROUP_HEARTBEAT = 10, 68


def _coordinated_by(client: LoadClient, port: int, prefix: str) -> str:
    """A group name coordinated by the node listening on `port`."""
    groups = [f"{prefix}-{i}" for i in range(200)]
    answer = client.call(Frame(FIND_COORDINATOR, 4, request_class(FIND_COORDINATOR)(
        key_type=0, coordinator_keys=groups)))
    return next(k.key for k in answer.coordinators if k.port == port and k.error_code == 0)


def _commit_cpu(side: Side) -> None:
    srv = side.server
    with LoadClient(srv.host, srv.port, 1) as client:
        ensure_topic(client, c.TOPIC, c.PARTITIONS)
        group = _coordinated_by(client, srv.port, "bench-brokers")
        frames = [c.commit_frame(group, n * 1000) for n in range(64)]
        client.call(frames[0])
        before = cpu_seconds(srv.pid)
        for n in range(COMMITS):
            answer = client.call(frames[n % 64])
            if any(p.error_code for t in answer.topics for p in t.partitions):
                raise RuntimeError(f"OffsetCommit answered {answer}")
        side.values["cpu"] = (cpu_seconds(srv.pid) - before) / COMMITS * 1e6


@workload("brokers_commit", "brokers", order=95)
def brokers_commit(ctx: RunContext) -> list[Figure]:
    """Server CPU per OffsetCommit through three brokers against one broker."""
    values = {}
    for brokers in (1, 3):
        ctx.log(f"brokers_commit: --brokers {brokers}")
        with ctx.kcsim(["--brokers", str(brokers), "--fsync", "never"]) as srv:
            side = Side(ctx, "brokers_commit", "kcsim", srv)
            side.attempt(lambda s: s.server.start())
            side.attempt(_commit_cpu)
            side.report_stderr()
            values[brokers] = side
    one, three = values[1].outcome(), values[3].outcome()
    three.values["cpu 1"] = one.values.get("cpu", float("nan"))
    return figures("brokers_commit", {**outcomes([]), "kcsim": three}, [
        ("cpu 1", f"OffsetCommit 10 partitions, 1 broker: server CPU/req ({COMMITS})", "µs",
         None),
        ("cpu", f"OffsetCommit 10 partitions, 3 brokers: server CPU/req ({COMMITS})", "µs",
         None),
    ])


def _heartbeat(group: str, member: str, epoch: int) -> Frame:
    return request(CONSUMER_GROUP_HEARTBEAT, 0, group_id=group, member_id=member,
                   member_epoch=epoch, instance_id=None, rack_id=None,
                   rebalance_timeout_ms=30000, subscribed_topic_names=[c.TOPIC],
                   server_assignor=None, topic_partitions=[])


def _beat(client: LoadClient, group: str, member: str, epoch: int) -> tuple[int, int]:
    answer = client.call(_heartbeat(group, member, epoch))
    return answer.error_code, answer.member_epoch


def _move(side: Side) -> None:
    from kcsim import EmbeddedServer

    with EmbeddedServer(brokers=3) as kcsim:
        ports = {n["node"]: int(n["listeners"]["PLAINTEXT"].rsplit(":", 1)[1])
                 for n in kcsim.nodes.list()}
        clients = {n: LoadClient("127.0.0.1", p, 1) for n, p in ports.items()}
        try:
            group = next(g for g in (f"bench-move-{i}" for i in range(500))
                         if kcsim.nodes.coordinator(g) == 1)
            members = {str(uuid.uuid4()): 0 for _ in range(MEMBERS)}
            while True:  # join, then heartbeat until every member is at the group's epoch
                for m, epoch in members.items():
                    error, members[m] = _beat(clients[1], group, m, epoch)
                    if error:
                        raise RuntimeError(f"heartbeat error {error}")
                view = kcsim.group(group)
                if view is not None and view.state == "Stable" and len(set(members.values())) == 1:
                    break
            t0 = time.perf_counter()
            kcsim.nodes.move_coordinator(group, 2)
            pending = dict(members)
            at: dict[str, int] = dict.fromkeys(members, 1)
            while pending:
                for m in list(pending):
                    error, epoch = _beat(clients[at[m]], group, m, members[m])
                    if error == 16:  # NOT_COORDINATOR: find it again
                        found = clients[at[m]].call(Frame(FIND_COORDINATOR, 4, request_class(
                            FIND_COORDINATOR)(key_type=0, coordinator_keys=[group])))
                        at[m] = found.coordinators[0].node_id
                    elif error == 0:
                        members[m] = epoch
                        del pending[m]
                    else:
                        raise RuntimeError(f"heartbeat error {error} after the move")
            kcsim.wait_for_group(group, "Stable", members=MEMBERS, timeout=30)
            side.values["move"] = (time.perf_counter() - t0) * 1e3
        finally:
            for client in clients.values():
                client.close()


@workload("brokers_move", "brokers", order=96)
def brokers_move(ctx: RunContext) -> list[Figure]:
    """A 100-member KIP-848 group Stable again after its coordinator moves."""
    side = Side(ctx, "brokers_move", "kcsim", None)
    side.attempt(_move)
    return figures("brokers_move", {**outcomes([]), "kcsim": side.outcome()}, [
        ("move", f"{MEMBERS}-member group Stable again after a coordinator move "
                 "(embedded, 3 brokers)", "ms", None),
    ])
