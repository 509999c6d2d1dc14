"""A streams group made over the wire: members heartbeating a word count (KIP-1071), as
Kafka Streams would, without a JVM.

`StreamsApp(bootstrap, group).settle()` joins the members, then heartbeats each until
every task is owned as the coordinator targets it. The server should assign at once
(`STREAMS_SETTINGS`: no initial delay, no assignment interval).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class
from tests.coordinator.streams_harness import task_ids, tasks_of
from tests.server.durability.wire import OFFSET_COMMIT, Wire, commit_request

if TYPE_CHECKING:
    from collections.abc import Iterable

Heartbeat = request_class(88)
STREAMS_SETTINGS = {"streams_group_initial_rebalance_delay_ms": 0,
                    "streams_group_assignment_interval_ms": 0}
ROUNDS = 6
MEMBER_COMMIT_V = 9  # the first OffsetCommit with member epochs (KIP-848)


class StreamsApp:
    """The members of one streams group, each with the tasks it owns, over one connection."""

    def __init__(self, bootstrap: str, group: str, source: str, partitions: int = 3) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.wire = Wire(host, int(port))
        self.group = group
        self.source = source
        self.wire.create_topic(source, partitions)
        self.epochs: dict[str, int] = {}
        self.owned: dict[str, dict[str, set[tuple[str, int]]]] = {}

    @property
    def repartition(self) -> str:
        return f"{self.group}-count-repartition"

    @property
    def changelog(self) -> str:
        return f"{self.group}-store-changelog"

    def topology(self) -> Any:
        """Words in, repartitioned by word, counted in a store: subtopologies 0 and 1."""
        return Heartbeat.Topology(epoch=0, subtopologies=[
            Heartbeat.Subtopology(subtopology_id="0", source_topics=[self.source],
                                  repartition_sink_topics=[self.repartition]),
            Heartbeat.Subtopology(
                subtopology_id="1",
                repartition_source_topics=[Heartbeat.TopicInfo(name=self.repartition)],
                state_changelog_topics=[Heartbeat.TopicInfo(name=self.changelog)]),
        ])

    def beat(self, member: str) -> Any:
        """One heartbeat of `member` (a join the first time), naming the tasks it owns."""
        epoch = self.epochs.get(member, 0)
        owned = self.owned.setdefault(member, {"active": set(), "standby": set(), "warmup": set()})
        joining = epoch == 0
        answer = self.wire.call(88, 1, Heartbeat(
            group_id=self.group, member_id=member, member_epoch=epoch,
            rebalance_timeout_ms=30000 if joining else -1,
            topology=self.topology() if joining else None,
            process_id=f"process-{member}" if joining else None,
            active_tasks=task_ids(owned["active"]), standby_tasks=task_ids(owned["standby"]),
            warmup_tasks=task_ids(owned["warmup"])))
        assert answer.error_code == 0, answer
        self.epochs[member] = answer.member_epoch
        for kind in owned:
            given = getattr(answer, f"{kind}_tasks")
            if given is not None:
                owned[kind] = tasks_of(given)
        return answer

    def settle(self, members: Iterable[str] = ("a",), rounds: int = ROUNDS) -> StreamsApp:
        """Heartbeat every member a few rounds: joins, revocations and assignments done."""
        members = list(members)
        for _ in range(rounds):
            for member in members:
                self.beat(member)
        return self

    def settle_until_owned(self, members: Iterable[str], tasks: int, timeout: float = 60.0
                           ) -> StreamsApp:
        """Heartbeat the members until `tasks` active tasks are owned among them (a broker that
        creates the internal topics in the background, as Kafka does, takes a while)."""
        members = list(members)
        deadline = time.monotonic() + timeout
        while True:
            self.settle(members, rounds=1)
            owned = [t for m in members for t in self.owned[m]["active"]]
            if len(owned) == tasks and len(set(owned)) == tasks:
                return self.settle(members, rounds=2)
            assert time.monotonic() < deadline, f"tasks owned after {timeout} s: {owned}"
            time.sleep(0.1)

    def commit(self, member: str, offsets: dict[int, int]) -> None:
        """Commit offsets of the source topic as `member` does, at its epoch."""
        request = commit_request(self.group, self.source, offsets)
        request.member_id, request.generation_id_or_member_epoch = member, self.epochs[member]
        answer = self.wire.call(OFFSET_COMMIT, MEMBER_COMMIT_V, request)
        errors = {p.partition_index: p.error_code for t in answer.topics for p in t.partitions}
        assert errors == dict.fromkeys(offsets, 0), f"OffsetCommit answered {errors}"

    def leave(self, member: str) -> None:
        answer = self.wire.call(88, 1, Heartbeat(group_id=self.group, member_id=member,
                                                 member_epoch=-1))
        assert answer.error_code == 0, answer
        self.epochs.pop(member)
        self.owned.pop(member)

    def close(self) -> None:
        self.wire.close()
