"""Every call of the admin client (blocking and trio) against kcsim, with real clients'
groups; the broker's answers are checked with a real consumer where they change state."""

from __future__ import annotations

from typing import Any

import pytest

from kcsim.admin import (
    AdminClient,
    AdminError,
    OffsetAndMetadata,
    OffsetSpec,
    TopicPartition,
    TrioAdminClient,
)

from .conftest import PARTITIONS, RECORDS, record_timestamp
from .helpers import (
    commit_as_member,
    committed,
    kcsim_serves_consumer_groups,
    needs_pause_api,
    running_group,
)

COMMITTED = {0: 3, 1: 5, 2: 10}


@pytest.fixture
def admin(bootstrap: str) -> Any:
    with AdminClient(bootstrap, timeout=10) as client:
        yield client


def offsets(topic: str, by_partition: dict[int, int]) -> dict[TopicPartition, OffsetAndMetadata]:
    return {TopicPartition(topic, p): OffsetAndMetadata(o) for p, o in by_partition.items()}


def test_api_versions_and_cluster(admin: AdminClient, bootstrap: str) -> None:
    versions = admin.api_versions()
    assert versions[9][1] >= 8  # OffsetFetch with KIP-709 batching
    cluster = admin.describe_cluster()
    host, port = bootstrap.split(":")
    assert [(b.host, b.port) for b in cluster.brokers] == [(host, int(port))]
    assert admin.supports_pause() == all(k in versions for k in (1000, 1001, 1002))


def test_describe_topics(admin: AdminClient, topic: str) -> None:
    result = admin.describe_topics([topic, "no-such-topic"])
    assert [p.partition for p in result[topic].partitions] == [0, 1, 2]
    assert all(p.leader == 1 for p in result[topic].partitions)
    error = result.error("no-such-topic")
    assert error is not None and error.name == "UNKNOWN_TOPIC_OR_PARTITION" and error.not_found


def test_list_offsets(admin: AdminClient, topic: str) -> None:
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    earliest = admin.list_offsets(dict.fromkeys(tps, OffsetSpec.earliest())).all()
    latest = admin.list_offsets(dict.fromkeys(tps, OffsetSpec.latest())).all()
    assert {tp: r.offset for tp, r in earliest.items()} == dict.fromkeys(tps, 0)
    assert {tp: r.offset for tp, r in latest.items()} == dict.fromkeys(tps, RECORDS)
    at = admin.list_offsets({tps[1]: OffsetSpec.for_timestamp(record_timestamp(1, 4))})[tps[1]]
    assert (at.offset, at.timestamp) == (4, record_timestamp(1, 4))
    missing = admin.list_offsets({TopicPartition(topic, 9): OffsetSpec.LATEST})
    assert missing.error(TopicPartition(topic, 9)).name == "UNKNOWN_TOPIC_OR_PARTITION"


def test_list_and_describe_groups(admin: AdminClient, bootstrap: str, topic: str,
                                  unique_name: Any) -> None:
    empty, stable = unique_name("empty"), unique_name("stable")
    commit_as_member(bootstrap, empty, topic, COMMITTED)
    with running_group(bootstrap, stable, topic, COMMITTED):
        listed = {g.group_id: g for g in admin.list_groups()}
        assert listed[empty].state == "Empty" and listed[stable].state == "Stable"
        assert listed[stable].type == "classic" and listed[stable].protocol_type == "consumer"
        only_empty = {g.group_id for g in admin.list_groups(states=["empty"])}
        assert empty in only_empty and stable not in only_empty
        assert stable not in {g.group_id for g in admin.list_groups(types=["consumer"])}

        described = admin.describe_groups([stable, empty, "no-such-group"])
        group = described[stable]
        assert (group.state, group.type, group.assignment_strategy) == ("Stable", "classic", "range")
        (member,) = group.members
        assert member.client_id == "cli-test"
        assert member.assignment == tuple(TopicPartition(topic, p) for p in range(3))
        assert described[empty].state == "Empty" and described[empty].members == ()
        assert described.error("no-such-group").name == "GROUP_ID_NOT_FOUND"


def test_offsets_of_many_groups_in_one_request(bootstrap: str, topic: str,
                                               unique_name: Any) -> None:
    groups = [unique_name(f"g{i}") for i in range(5)]
    for i, g in enumerate(groups):
        commit_as_member(bootstrap, g, topic, {0: i, 2: 10 - i})
    with AdminClient(bootstrap, timeout=10) as admin:
        result = admin.list_group_offsets(groups + ["never-committed"])
        assert admin.request_counts()["OffsetFetch"] == 1
    for i, g in enumerate(groups):
        assert result[g] == offsets(topic, {0: i, 2: 10 - i})
    assert result["never-committed"] == {}

    with AdminClient(bootstrap, timeout=10) as admin:
        some = admin.list_group_offsets({groups[1]: [TopicPartition(topic, 2)], groups[2]: None})
    assert some[groups[1]] == offsets(topic, {2: 9})
    assert some[groups[2]] == offsets(topic, {0: 2, 2: 8})


def test_alter_offsets_of_an_empty_group(admin: AdminClient, bootstrap: str, topic: str,
                                         unique_name: Any) -> None:
    group = unique_name("g")
    commit_as_member(bootstrap, group, topic, COMMITTED)
    result = admin.alter_group_offsets(group, {TopicPartition(topic, 0): 7,
                                               TopicPartition(topic, 1): OffsetAndMetadata(1, "m")})
    assert result.all() == {TopicPartition(topic, 0): None, TopicPartition(topic, 1): None}
    assert committed(bootstrap, group, topic) == {0: 7, 1: 1, 2: 10}
    assert admin.list_group_offsets(group)[group][TopicPartition(topic, 1)].metadata == "m"


def test_alter_offsets_of_an_active_group_fails_for_the_group(
    admin: AdminClient, bootstrap: str, topic: str, unique_name: Any
) -> None:
    group = unique_name("g")
    with running_group(bootstrap, group, topic, COMMITTED):
        with pytest.raises(AdminError) as raised:
            admin.alter_group_offsets(group, {TopicPartition(topic, 0): 0})
        assert raised.value.name in {"UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION"}
        assert raised.value.hint
        assert committed(bootstrap, group, topic) == COMMITTED


def test_delete_offsets(admin: AdminClient, bootstrap: str, topic: str, unique_name: Any) -> None:
    empty, stable = unique_name("empty"), unique_name("stable")
    commit_as_member(bootstrap, empty, topic, COMMITTED)
    result = admin.delete_group_offsets(empty, [TopicPartition(topic, 1)])
    assert result.all() == {TopicPartition(topic, 1): None}
    assert committed(bootstrap, empty, topic) == {0: 3, 1: None, 2: 10}
    with running_group(bootstrap, stable, topic, COMMITTED):
        busy = admin.delete_group_offsets(stable, [TopicPartition(topic, 0)])
        assert busy.error(TopicPartition(topic, 0)).name == "GROUP_SUBSCRIBED_TO_TOPIC"
    with pytest.raises(AdminError) as raised:
        admin.delete_group_offsets("no-such-group", [TopicPartition(topic, 0)])
    assert raised.value.name == "GROUP_ID_NOT_FOUND"


def test_delete_groups(admin: AdminClient, bootstrap: str, topic: str, unique_name: Any) -> None:
    empty, stable = unique_name("empty"), unique_name("stable")
    commit_as_member(bootstrap, empty, topic, COMMITTED)
    with running_group(bootstrap, stable, topic, COMMITTED):
        result = admin.delete_groups([empty, stable, "no-such-group"])
        assert result[empty] is None
        assert result.error(stable).name == "NON_EMPTY_GROUP"
        assert result.error("no-such-group").name == "GROUP_ID_NOT_FOUND"
    assert empty not in {g.group_id for g in admin.list_groups()}
    assert committed(bootstrap, empty, topic) == {0: None, 1: None, 2: None}


async def test_trio_client(bootstrap: str, topic: str, unique_name: Any) -> None:
    groups = [unique_name(f"g{i}") for i in range(3)]
    for g in groups:
        commit_as_member(bootstrap, g, topic, COMMITTED)
    async with TrioAdminClient(bootstrap, timeout=10) as admin:
        listed = {g.group_id for g in await admin.list_groups(states=["Empty"])}
        assert set(groups) <= listed
        described = await admin.describe_groups(groups)
        assert {d.state for d in described.all().values()} == {"Empty"}
        fetched = await admin.list_group_offsets(groups)
        assert fetched.all() == dict.fromkeys(groups, offsets(topic, COMMITTED))
        assert admin.request_counts()["OffsetFetch"] == 1
        await admin.alter_group_offsets(groups[0], {TopicPartition(topic, 2): 4})
        await admin.delete_group_offsets(groups[1], [TopicPartition(topic, 0)])
        ends = await admin.list_offsets({TopicPartition(topic, 0): OffsetSpec.LATEST})
        assert ends[TopicPartition(topic, 0)].offset == RECORDS
        assert (await admin.describe_topics(topic))[topic].name == topic
        assert (await admin.delete_groups([groups[2]])).all() == {groups[2]: None}
        assert (await admin.describe_cluster()).brokers
        served = await admin.api_versions()
        assert await admin.supports_pause() == all(k in served for k in (1000, 1001, 1002))
    assert committed(bootstrap, groups[0], topic)[2] == 4
    assert committed(bootstrap, groups[1], topic)[0] is None


@needs_pause_api
async def test_pause_resume_and_list_paused(bootstrap: str, topic: str, unique_name: Any) -> None:
    group = unique_name("g")
    protocol = "consumer" if kcsim_serves_consumer_groups() else "classic"
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    with running_group(bootstrap, group, topic, COMMITTED, protocol=protocol):
        with AdminClient(bootstrap, timeout=10) as admin:
            assert admin.pause_partitions(group, [tp0, tp1]).all() == {tp0: None, tp1: None}
            assert set(admin.list_paused_partitions(group)) == {tp0, tp1}
            assert admin.alter_group_offsets(group, {tp0: 1}).all() == {tp0: None}
            assert admin.resume_partitions(group, [tp1]).all() == {tp1: None}
        async with TrioAdminClient(bootstrap, timeout=10) as aio:
            assert set(await aio.list_paused_partitions(group)) == {tp0}
            assert (await aio.resume_partitions(group, [tp0])).all() == {tp0: None}
            assert await aio.list_paused_partitions(group) == {}
        assert committed(bootstrap, group, topic)[0] == 1


@pytest.mark.skipif(not kcsim_serves_consumer_groups(),
                    reason="kcsim does not serve ConsumerGroupHeartbeat (KIP-848) yet")
def test_describe_a_kip_848_consumer_group(admin: AdminClient, bootstrap: str, topic: str,
                                           unique_name: Any) -> None:
    group = unique_name("g")
    with running_group(bootstrap, group, topic, COMMITTED, protocol="consumer"):
        listed = {g.group_id: g for g in admin.list_groups(types=["consumer"])}
        assert listed[group].type == "consumer"
        described = admin.describe_groups(group)[group]
        assert (described.type, described.state) == ("consumer", "Stable")
        assert described.group_epoch is not None and described.group_epoch >= 1
        (member,) = described.members
        assert member.assignment == tuple(TopicPartition(topic, p) for p in range(3))
        assert member.member_epoch is not None and member.client_id == "cli-test"
        assert admin.list_group_offsets(group)[group] == offsets(topic, COMMITTED)
