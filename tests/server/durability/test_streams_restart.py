"""A streams group is durable: after a SIGKILL and a restart its topology, its internal
topics, its members' epochs and tasks, and the offsets its members committed are all there,
and a member heartbeats on at its epoch as if nothing happened."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from kcsim.protocol.codecs import request_class
from tests.coordinator.streams_harness import task_ids, tasks_of, word_count

from .test_crash import kill
from .wire import Wire

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.timeout(120)

Heartbeat, Describe, Commit, Fetch = (request_class(k) for k in (88, 89, 8, 9))


def beat(wire: Wire, member_id: str, epoch: int, owned: set[Any]) -> Any:
    joining = epoch == 0
    r = wire.call(88, 1, Heartbeat(
        group_id="wc", member_id=member_id, member_epoch=epoch,
        rebalance_timeout_ms=30000 if joining else -1,
        topology=word_count() if joining else None,
        process_id="p1" if joining else None,
        active_tasks=task_ids(owned), standby_tasks=[], warmup_tasks=[]))
    assert r.error_code == 0, r
    return r


def describe(wire: Wire) -> Any:
    group = wire.call(89, 1, Describe(group_ids=["wc"])).groups[0]
    return (group.group_state, group.group_epoch, group.assignment_epoch,
            [(m.member_id, m.member_epoch, tasks_of(m.assignment.active_tasks))
             for m in group.members])


def test_a_streams_group_survives_a_crash(kcsim_factory: Callable[..., Any]) -> None:
    server = kcsim_factory(fsync="always", streams_group_initial_rebalance_delay_ms=0,
                           streams_group_assignment_interval_ms=0)
    with Wire.to(server) as wire:
        wire.create_topic("words", 2)
        joined = beat(wire, "m1", 0, set())
        r = beat(wire, "m1", joined.member_epoch, set())
        owned = tasks_of(r.active_tasks)
        assert len(owned) == 4
        committed = wire.call(8, 9, Commit(
            group_id="wc", member_id="m1", generation_id_or_member_epoch=r.member_epoch,
            topics=[Commit.OffsetCommitRequestTopic(name="words", partitions=[
                Commit.OffsetCommitRequestPartition(partition_index=1, committed_offset=17)])]))
        assert committed.topics[0].partitions[0].error_code == 0
        before = describe(wire)
    assert before[0] == "Stable"
    kill(server)
    server.start()
    with Wire.to(server) as wire:
        assert describe(wire) == before
        again = beat(wire, "m1", r.member_epoch, owned)
        assert (again.member_epoch, again.status) == (r.member_epoch, [])
        fetched = wire.call(9, 9, Fetch(groups=[Fetch.OffsetFetchRequestGroup(
            group_id="wc", member_id="m1", member_epoch=r.member_epoch, topics=None)]))
        offsets = {(t.name, p.partition_index): p.committed_offset
                   for t in fetched.groups[0].topics for p in t.partitions}
        assert offsets == {("words", 1): 17}
