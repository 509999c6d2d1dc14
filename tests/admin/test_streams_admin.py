"""The admin client and streams groups: StreamsGroupDescribe, and the calls every group kind
shares (listing by type, offsets, deletion, KIP-1249's pause) used on a streams group."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from kcsim.admin import AdminClient, TaskIds, TopicPartition, TrioAdminClient
from kcsim.server.embedded import EmbeddedServer

from .helpers import commit_as_member
from .streams_app import STREAMS_SETTINGS, StreamsApp

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def app(streams_server: Any, unique_name: Any) -> Iterator[StreamsApp]:
    running = StreamsApp(streams_server.bootstrap, unique_name("wc"),
                         unique_name("words")).settle(["a", "b"])
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
def admin(streams_server: Any) -> Iterator[AdminClient]:
    with AdminClient(streams_server.bootstrap, timeout=10) as client:
        yield client


def _active(app: StreamsApp, member: str) -> tuple[TaskIds, ...]:
    by_sub: dict[str, list[int]] = {}
    for sub, p in sorted(app.owned[member]["active"]):
        by_sub.setdefault(sub, []).append(p)
    return tuple(TaskIds(s, tuple(ps)) for s, ps in by_sub.items())


def test_describe_a_streams_group(admin: AdminClient, app: StreamsApp) -> None:
    desc = admin.describe_streams_groups(app.group)[app.group]
    assert (desc.state, desc.group_epoch, desc.target_assignment_epoch) == ("Stable", 2, 2)
    assert desc.assignor == "sticky" and desc.topology_epoch == 0
    assert [s.subtopology_id for s in desc.subtopologies] == ["0", "1"]
    assert desc.subtopologies[0].source_topics == (app.source,)
    assert desc.subtopologies[1].repartition_source_topics == {app.repartition: 3}
    assert desc.subtopologies[1].state_changelog_topics == {app.changelog: 3}
    assert desc.source_topics == {app.source}
    members = {m.member_id: m for m in desc.members}
    assert set(members) == {"a", "b"}
    for name, m in members.items():
        assert (m.process_id, m.member_epoch, m.is_classic) == (f"process-{name}", 2, False)
        assert m.assignment.active == _active(app, name) == m.target_assignment.active
        assert m.assignment.standby == () and m.assignment.warmup == ()
    # A task reads its subtopology's input at its partition.
    a_reads = desc.partitions_of(members["a"].assignment.active)
    b_reads = desc.partitions_of(members["b"].assignment.active)
    assert a_reads.isdisjoint(b_reads)
    assert {tp for tp in a_reads | b_reads if tp.topic == app.source} == \
        {TopicPartition(app.source, p) for p in range(3)}


def test_describe_tells_missing_groups_and_groups_of_other_kinds(
        admin: AdminClient, app: StreamsApp, unique_name: Any, streams_server: Any) -> None:
    consumer_group = unique_name("plain")
    commit_as_member(streams_server.bootstrap, consumer_group, app.source, {0: 1})
    found = admin.describe_streams_groups([app.group, consumer_group, app.group + "-none"])
    assert found.error(app.group) is None
    for other in (consumer_group, app.group + "-none"):
        error = found.error(other)
        assert error is not None and error.name == "GROUP_ID_NOT_FOUND"


def test_standby_tasks_are_described() -> None:
    with EmbeddedServer(**STREAMS_SETTINGS, streams_group_num_standby_replicas=1) as server, \
            AdminClient(server.bootstrap, timeout=10) as admin:
        app = StreamsApp(server.bootstrap, "standby-app", "words").settle(["a", "b"])
        desc = admin.describe_streams_groups("standby-app")["standby-app"]
        app.close()
    standby = {m.member_id: {(t.subtopology_id, p) for t in m.assignment.standby
                             for p in t.partitions} for m in desc.members}
    active = {m.member_id: {(t.subtopology_id, p) for t in m.assignment.active
                            for p in t.partitions} for m in desc.members}
    # Only subtopology 1 has state; each of its tasks has a standby on the other member.
    assert standby["a"] | standby["b"] == {("1", p) for p in range(3)}
    assert standby["a"].isdisjoint(active["a"]) and standby["b"].isdisjoint(active["b"])


def test_list_offsets_delete_and_pause_a_streams_group(
        admin: AdminClient, app: StreamsApp) -> None:
    listed = {g.group_id: g for g in admin.list_groups(types=["streams"])}
    assert (listed[app.group].type, listed[app.group].state) == ("streams", "Stable")
    assert app.group in {g.group_id for g in admin.list_groups(states=["Stable"],
                                                               types=["streams"])}
    assert app.group not in {g.group_id for g in admin.list_groups(types=["consumer"])}

    words0 = TopicPartition(app.source, 0)
    assert admin.pause_partitions(app.group, [words0]).all() == {words0: None}
    assert list(admin.list_paused_partitions(app.group)) == [words0]
    assert admin.alter_group_offsets(app.group, {words0: 2}).all() == {words0: None}
    assert admin.list_group_offsets(app.group)[app.group][words0].offset == 2
    assert admin.resume_partitions(app.group, [words0]).all() == {words0: None}
    assert admin.list_paused_partitions(app.group) == {}

    refused = admin.delete_groups(app.group)
    assert refused.error(app.group) is not None and refused.error(app.group).name == "NON_EMPTY_GROUP"
    app.leave("a")
    app.leave("b")
    assert admin.delete_group_offsets(app.group, [words0]).all() == {words0: None}
    assert admin.delete_groups(app.group).all() == {app.group: None}
    assert admin.describe_streams_groups(app.group).error(app.group).name == "GROUP_ID_NOT_FOUND"


async def test_trio_client_describes_streams_groups(streams_server: Any, app: StreamsApp) -> None:
    async with TrioAdminClient(streams_server.bootstrap, timeout=10) as admin:
        found = await admin.describe_streams_groups([app.group])
    assert {m.member_id for m in found[app.group].members} == {"a", "b"}
