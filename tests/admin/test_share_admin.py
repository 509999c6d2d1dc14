"""The admin client and share groups (KIP-932): listing and describing them, their start
offsets read, moved and forgotten, with both clients."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import trio

from kcsim.admin import (
    AdminClient,
    AdminError,
    SharePartitionOffset,
    TopicPartition,
    TrioAdminClient,
)
from kcsim.protocol.errors import ErrorCode as E

from ..server.test_share_wire import ACCEPT, GROUP, TOPIC, Member, acquired, produce, world

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["world"]  # the fixture, used by name
TP = TopicPartition(TOPIC, 0)


@pytest.fixture
def admin(kcsim: Any) -> Iterator[AdminClient]:
    with AdminClient(kcsim.bootstrap, timeout=10) as client:
        yield client


def _consumed(wire: Any, tid: Any, member_id: str, produced: int) -> Member:
    m = Member(wire, member_id, tid)
    m.heartbeat()
    m.fetch()
    produce(wire, produced)
    got = acquired(m.fetch(max_records=produced))
    m.ack([(a, b, ACCEPT) for a, b, _ in got])
    return m


def test_list_and_describe_share_groups(admin: AdminClient, world: Any) -> None:
    wire, tid = world
    a = Member(wire, "member-a", tid)
    a.heartbeat()
    [listed] = admin.list_groups(types=["share"])
    assert (listed.group_id, listed.type, listed.state) == (GROUP, "share", "Stable")
    described = admin.describe_share_groups([GROUP, "nobody"])
    d = described[GROUP]
    assert (d.state, d.group_epoch, d.target_assignment_epoch, d.assignor) == (
        "Stable", 1, 1, "simple")
    [m] = d.members
    assert (m.member_id, m.member_epoch, m.subscribed_topics, m.assignment) == (
        "member-a", 1, (TOPIC,), (TP,))
    error = described.error("nobody")
    assert error is not None and error.code == E.GROUP_ID_NOT_FOUND


def test_share_group_offsets_read_moved_and_forgotten(admin: AdminClient, world: Any) -> None:
    wire, tid = world
    a = _consumed(wire, tid, "member-a", 8)
    assert admin.list_share_group_offsets(GROUP)[GROUP] == {TP: SharePartitionOffset(8, 0, 0)}
    with pytest.raises(AdminError) as raised:
        admin.alter_share_group_offsets(GROUP, {TP: 2})
    assert raised.value.code == E.NON_EMPTY_GROUP
    a.heartbeat(epoch=-1)
    outcome = admin.alter_share_group_offsets(GROUP, {TP: 2, TopicPartition("missing", 0): 0})
    assert outcome.error(TP) is None
    missing = outcome.error(TopicPartition("missing", 0))
    assert missing is not None and missing.code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert admin.list_share_group_offsets({GROUP: [TP]})[GROUP] == {
        TP: SharePartitionOffset(2, 0, 6)}
    assert admin.delete_share_group_offsets(GROUP, TOPIC).error(TOPIC) is None
    assert admin.list_share_group_offsets(GROUP)[GROUP] == {}


def test_the_trio_client_has_the_same_share_calls(kcsim: Any, world: Any) -> None:
    wire, tid = world
    _consumed(wire, tid, "member-a", 3).heartbeat(epoch=-1)

    async def main() -> tuple[Any, ...]:
        async with TrioAdminClient(kcsim.bootstrap, timeout=10) as client:
            described = await client.describe_share_groups(GROUP)
            await client.alter_share_group_offsets(GROUP, {TP: 1})
            offsets = await client.list_share_group_offsets(GROUP)
            deleted = await client.delete_share_group_offsets(GROUP, [TOPIC])
            return described[GROUP].state, offsets[GROUP], deleted.error(TOPIC)

    assert trio.run(main) == ("Empty", {TP: SharePartitionOffset(1, 0, 2)}, None)
