"""1,000 consumers on 1,000 connections of one broker, every answer checked against a model.

100 classic groups of 10 members, each member a raw client on its own connection (one
process, trio): all join at once (the rebalance waits on each group's members while the
other connections go on), sync, then run rounds of pipelined requests, four in one write:
Heartbeat, OffsetCommit of the member's own partition at the round's offset, OffsetFetch
of the group and Heartbeat again. The model of each connection says what each answer
must be: the heartbeats accepted, the commit accepted, and the fetch showing this
member's commit of this round (its requests are served in order) beside what the other
members of its group committed no later than this round. Answers come back in the order
sent (correlation ids). Run with connections served in passes (the reactor) and each in
its own task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import trio

from kcsim.protocol.codecs import request_class

from .rawgroup import HEARTBEAT, OFFSET_COMMIT, OFFSET_FETCH, RawMember, connect
from .rawkafka import raise_open_file_limit

if TYPE_CHECKING:
    from collections.abc import Callable

GROUPS, GROUP_SIZE = 100, 10
TOPIC = "many-connections"
ROUNDS = 5

pytestmark = pytest.mark.timeout(300)


def _round_requests(member: RawMember, partition: int, offset: int) -> list[tuple[int, int, Any]]:
    hb, oc, of = request_class(HEARTBEAT), request_class(OFFSET_COMMIT), request_class(OFFSET_FETCH)
    heartbeat = (HEARTBEAT, 3, hb(group_id=member.group, generation_id=member.generation,
                                  member_id=member.member_id, group_instance_id=None))
    commit = (OFFSET_COMMIT, 7, oc(
        group_id=member.group, generation_id_or_member_epoch=member.generation,
        member_id=member.member_id, group_instance_id=None, topics=[oc.OffsetCommitRequestTopic(
            name=TOPIC, partitions=[oc.OffsetCommitRequestPartition(
                partition_index=partition, committed_offset=offset, committed_metadata="")])]))
    fetch = (OFFSET_FETCH, 7, of(group_id=member.group, topics=[of.OffsetFetchRequestTopic(
        name=TOPIC, partition_indexes=list(range(GROUP_SIZE)))]))
    return [heartbeat, commit, fetch, heartbeat]


@pytest.mark.parametrize("batch_connections", [True, False], ids=["passes", "tasks"])
def test_a_thousand_connections_get_every_answer_right_and_in_order(
    kcsim_factory: Callable[..., Any], batch_connections: bool
) -> None:
    raise_open_file_limit(GROUPS * GROUP_SIZE + 200)
    server = kcsim_factory(fsync="never", initial_rebalance_delay_ms=1000,
                           batch_connections=batch_connections)

    async def main() -> None:
        setup = await connect(server.port)
        await setup.call(19, 4, _create_topic())
        members = [RawMember(await connect(server.port), f"many-{g:03d}", TOPIC,
                             session_ms=60_000, rebalance_ms=60_000)
                   for g in range(GROUPS) for _ in range(GROUP_SIZE)]
        assigned: dict[int, list[int]] = {}

        async def join_and_sync(i: int, member: RawMember) -> None:
            assert await member.join() == 0, f"member {i} could not join"
            error, partitions = await member.sync(GROUP_SIZE)
            assert error == 0, f"member {i}: SyncGroup answered {error}"
            assigned[i] = partitions

        async with trio.open_nursery() as nursery:
            for i, member in enumerate(members):
                nursery.start_soon(join_and_sync, i, member)
        for g in range(GROUPS):  # one generation of all ten, each member one partition
            group = members[g * GROUP_SIZE:(g + 1) * GROUP_SIZE]
            assert {m.generation for m in group} == {group[0].generation}, f"group {g}"
            owned = sorted(p for i in range(g * GROUP_SIZE, (g + 1) * GROUP_SIZE)
                           for p in assigned[i])
            assert owned == list(range(GROUP_SIZE)), f"group {g} owns {owned}"

        committed: dict[tuple[int, int], int] = {}  # (group, partition) -> offset

        async def one_round(i: int, member: RawMember, offset: int) -> None:
            (partition,) = assigned[i]
            before = dict(committed)
            beat, commit, fetch, beat_again = await member.wire.pipeline(
                _round_requests(member, partition, offset))
            assert beat.error_code == 0 and beat_again.error_code == 0, f"member {i}"
            assert [p.error_code for t in commit.topics for p in t.partitions] == [0]
            seen = {p.partition_index: p.committed_offset for t in fetch.topics
                    for p in t.partitions}
            assert fetch.error_code == 0 and seen[partition] == offset, (
                f"member {i} round offset {offset}: fetched {seen[partition]}")
            g = i // GROUP_SIZE
            for p, got in seen.items():  # the others: this round's or the last round's
                if p != partition:
                    last = before.get((g, p), -1)
                    assert got in (last, offset), f"member {i} saw {got} for partition {p}"
            committed[(g, partition)] = offset

        for r in range(ROUNDS):
            async with trio.open_nursery() as nursery:
                for i, member in enumerate(members):
                    nursery.start_soon(one_round, i, member, 100 * (r + 1))
        for member in members:
            await member.wire.stream.aclose()
        await setup.stream.aclose()

    trio.run(main)


def _create_topic() -> Any:
    R = request_class(19)
    return R(topics=[R.CreatableTopic(name=TOPIC, num_partitions=GROUP_SIZE,
                                      replication_factor=1, assignments=[], configs=[])],
             timeout_ms=10_000, validate_only=False)
