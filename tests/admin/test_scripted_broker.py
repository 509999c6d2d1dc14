"""The admin client against a scripted broker: KIP-709 batching and per-group errors, the
coordinator retry policy (NOT_COORDINATOR once, COORDINATOR_LOAD_IN_PROGRESS, deadlines),
KIP-848 describes, and KIP-1249 calls under configurable wire keys."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest

from kcsim.admin import (
    AdminClient,
    AdminError,
    OffsetAndMetadata,
    TopicPartition,
    TrioAdminClient,
)
from kcsim.protocol.codecs import response_class
from kcsim.protocol.errors import ErrorCode

from .fake_broker import FIND_COORDINATOR, FakeBroker

OFFSET_FETCH, DESCRIBE_GROUPS = 9, 15
OffsetFetchResponse = response_class(OFFSET_FETCH)
DescribeGroupsResponse = response_class(DESCRIBE_GROUPS)

COMMITTED = {"g1": 5, "g2": 7, "g3": 9}


def _partitions_v8(offset: int) -> list[Any]:
    return [OffsetFetchResponse.OffsetFetchResponseTopics(name="t", partitions=[
        OffsetFetchResponse.OffsetFetchResponsePartitions(
            partition_index=0, committed_offset=offset, committed_leader_epoch=-1,
            metadata="", error_code=0)])]


def offset_fetch(failing: dict[str, list[int]] | None = None):  # type: ignore[no-untyped-def]
    """An OffsetFetch handler; `failing[group]` lists error codes to answer first, in turn."""
    failing = {g: list(codes) for g, codes in (failing or {}).items()}

    def handle(version: int, request: Any) -> Any:
        if version >= 8:
            groups = []
            for g in request.groups:
                pending = failing.get(g.group_id)
                code = pending.pop(0) if pending else 0
                groups.append(OffsetFetchResponse.OffsetFetchResponseGroup(
                    group_id=g.group_id, error_code=code,
                    topics=[] if code else _partitions_v8(COMMITTED[g.group_id])))
            return OffsetFetchResponse(groups=groups)
        pending = failing.get(request.group_id)
        code = pending.pop(0) if pending else 0
        topics = [] if code else [OffsetFetchResponse.OffsetFetchResponseTopic(name="t", partitions=[
            OffsetFetchResponse.OffsetFetchResponsePartition(
                partition_index=0, committed_offset=COMMITTED[request.group_id],
                committed_leader_epoch=-1, metadata="", error_code=0)])]
        return OffsetFetchResponse(error_code=code, topics=topics)

    return handle


def expected(group: str) -> dict[TopicPartition, OffsetAndMetadata]:
    return {TopicPartition("t", 0): OffsetAndMetadata(COMMITTED[group])}


def test_offsets_of_many_groups_travel_in_one_request() -> None:
    with FakeBroker({OFFSET_FETCH: offset_fetch()}) as broker, \
            AdminClient(broker.bootstrap, timeout=5) as admin:
        result = admin.list_group_offsets(["g1", "g2", "g3"])
        assert result.all() == {g: expected(g) for g in COMMITTED}
        fetches = broker.calls(OFFSET_FETCH)
        assert len(fetches) == 1
        version, request = fetches[0]
        assert version >= 8 and [g.group_id for g in request.groups] == ["g1", "g2", "g3"]
        assert admin.request_counts()["OffsetFetch"] == 1


def test_a_broker_without_offset_fetch_v8_gets_one_request_per_group() -> None:
    with FakeBroker({OFFSET_FETCH: offset_fetch()}, versions={OFFSET_FETCH: (0, 7)}) as broker, \
            AdminClient(broker.bootstrap, timeout=5) as admin:
        result = admin.list_group_offsets(["g1", "g2", "g3"])
        assert result.all() == {g: expected(g) for g in COMMITTED}
        fetches = broker.calls(OFFSET_FETCH)
        assert sorted(r.group_id for _, r in fetches) == ["g1", "g2", "g3"]
        assert {v for v, _ in fetches} == {7}


def test_each_group_fails_on_its_own() -> None:
    handler = offset_fetch({"g2": [ErrorCode.GROUP_AUTHORIZATION_FAILED]})
    with FakeBroker({OFFSET_FETCH: handler}) as broker, \
            AdminClient(broker.bootstrap, timeout=5) as admin:
        result = admin.list_group_offsets(["g1", "g2", "g3"])
        assert result.succeeded == {"g1": expected("g1"), "g3": expected("g3")}
        error = result.error("g2")
        assert error is not None and error.name == "GROUP_AUTHORIZATION_FAILED"
        assert error.hint
        with pytest.raises(AdminError) as raised:
            result["g2"]
        assert raised.value.name == "GROUP_AUTHORIZATION_FAILED"
        with pytest.raises(AdminError):
            result.all()


def test_not_coordinator_once_sends_the_group_back_to_find_coordinator() -> None:
    handler = offset_fetch({"g1": [ErrorCode.NOT_COORDINATOR]})
    with FakeBroker({OFFSET_FETCH: handler}) as broker, \
            AdminClient(broker.bootstrap, timeout=5, retry_backoff=0.01) as admin:
        assert admin.list_group_offsets("g1")["g1"] == expected("g1")
        assert len(broker.calls(OFFSET_FETCH)) == 2
        assert len(broker.calls(FIND_COORDINATOR)) == 2  # the cached coordinator was dropped


def test_not_coordinator_once_on_a_per_group_broker() -> None:
    handler = offset_fetch({"g2": [ErrorCode.NOT_COORDINATOR]})
    with FakeBroker({OFFSET_FETCH: handler},
                    versions={OFFSET_FETCH: (0, 7), FIND_COORDINATOR: (0, 3)}) as broker, \
            AdminClient(broker.bootstrap, timeout=5, retry_backoff=0.01) as admin:
        assert admin.list_group_offsets(["g1", "g2"]).all() == {
            "g1": expected("g1"), "g2": expected("g2")}
        assert sorted(r.group_id for _, r in broker.calls(OFFSET_FETCH)) == ["g1", "g2", "g2"]


async def test_trio_client_retries_not_coordinator_and_batches() -> None:
    handler = offset_fetch({"g3": [ErrorCode.NOT_COORDINATOR]})
    with FakeBroker({OFFSET_FETCH: handler}) as broker:
        async with TrioAdminClient(broker.bootstrap, timeout=5, retry_backoff=0.01) as admin:
            result = await admin.list_group_offsets(["g1", "g2", "g3"])
            assert result.all() == {g: expected(g) for g in COMMITTED}
        fetches = broker.calls(OFFSET_FETCH)
        assert [len(r.groups) for _, r in fetches] == [3, 1]


def test_coordinator_loading_is_waited_for() -> None:
    loading = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS] * 2

    def describe(version: int, request: Any) -> Any:
        code = loading.pop(0) if loading else 0
        return DescribeGroupsResponse(groups=[DescribeGroupsResponse.DescribedGroup(
            error_code=code, group_id=g, group_state="Empty" if not code else "",
            protocol_type="consumer", protocol_data="", members=[]) for g in request.groups])

    with FakeBroker({DESCRIBE_GROUPS: describe}) as broker, \
            AdminClient(broker.bootstrap, timeout=5, retry_backoff=0.01) as admin:
        description = admin.describe_groups(["g1"])["g1"]
        assert description.state == "Empty" and description.members == ()
        assert len(broker.calls(DESCRIBE_GROUPS)) == 3


def test_a_coordinator_that_keeps_moving_ends_at_the_deadline() -> None:
    handler = offset_fetch({"g1": [ErrorCode.NOT_COORDINATOR] * 1000})
    with FakeBroker({OFFSET_FETCH: handler}) as broker, \
            AdminClient(broker.bootstrap, timeout=0.5, retry_backoff=0.02) as admin:
        started = time.monotonic()
        error = admin.list_group_offsets("g1").error("g1")
        assert time.monotonic() - started < 2
        assert error is not None and error.name == "REQUEST_TIMED_OUT"
        assert "NOT_COORDINATOR" in error.message


def test_no_broker_listening_is_a_network_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with AdminClient(f"127.0.0.1:{port}", timeout=0.3, retry_backoff=0.05) as admin, \
            pytest.raises(AdminError) as raised:
        admin.list_groups()
    assert raised.value.name == "REQUEST_TIMED_OUT"
    assert "NETWORK_EXCEPTION" in raised.value.message
    assert f"127.0.0.1:{port}" in raised.value.hint


CONSUMER_GROUP_DESCRIBE = 69
ConsumerGroupDescribeResponse = response_class(CONSUMER_GROUP_DESCRIBE)


def test_consumer_groups_are_described_with_kip_848_and_classic_ones_classically() -> None:
    import uuid

    def consumer_describe(version: int, request: Any) -> Any:
        cls = ConsumerGroupDescribeResponse
        assignment = cls.Assignment(topic_partitions=[cls.TopicPartitions(
            topic_id=uuid.uuid4(), topic_name="t", partitions=[1, 0])])
        groups = []
        for g in request.group_ids:
            if g != "new":
                groups.append(cls.DescribedGroup(error_code=ErrorCode.GROUP_ID_NOT_FOUND,
                                                 error_message=f"Group {g} not found.", group_id=g))
                continue
            groups.append(cls.DescribedGroup(
                error_code=0, group_id=g, group_state="Reconciling", group_epoch=5,
                assignment_epoch=4, assignor_name="uniform", members=[cls.Member(
                    member_id="m1", member_epoch=4, client_id="c", client_host="/h",
                    subscribed_topic_names=["t"], assignment=assignment,
                    target_assignment=assignment)]))
        return cls(groups=groups)

    def classic_describe(version: int, request: Any) -> Any:
        return DescribeGroupsResponse(groups=[DescribeGroupsResponse.DescribedGroup(
            error_code=0, group_id=g, group_state="Stable", protocol_type="consumer",
            protocol_data="range", members=[]) for g in request.groups])

    handlers = {CONSUMER_GROUP_DESCRIBE: consumer_describe, DESCRIBE_GROUPS: classic_describe}
    with FakeBroker(handlers) as broker, AdminClient(broker.bootstrap, timeout=5) as admin:
        described = admin.describe_groups(["new", "old"]).all()
        assert [v for v, _ in broker.calls(CONSUMER_GROUP_DESCRIBE)] == [1]
        assert [r.groups for _, r in broker.calls(DESCRIBE_GROUPS)] == [["old"]]
    new, old = described["new"], described["old"]
    assert (new.type, new.state, new.group_epoch, new.target_assignment_epoch) == (
        "consumer", "Reconciling", 5, 4)
    assert new.members[0].assignment == (TopicPartition("t", 0), TopicPartition("t", 1))
    assert new.members[0].member_epoch == 4
    assert (old.type, old.state, old.assignment_strategy) == ("classic", "Stable", "range")


def kip_1249_broker(paused: set[TopicPartition]) -> dict[int, Any]:
    """Handlers of a broker that pauses whatever it is asked to, under wire keys 1100-1102."""
    pause, resume, listing = (response_class(k) for k in (1000, 1001, 1002))

    def change(cls: Any, add: bool) -> Any:
        name = cls.__name__.removesuffix("Response")

        def handle(version: int, request: Any) -> Any:
            topic_cls = getattr(cls, f"{name}ResponseTopic")
            part_cls = getattr(cls, f"{name}ResponsePartition")
            topics = []
            for t in request.topics:
                parts = []
                for p in t.partitions:
                    tp = TopicPartition(t.name, p.partition_index)
                    unknown = p.partition_index > 2
                    if not unknown:
                        (paused.add if add else paused.discard)(tp)
                    parts.append(part_cls(partition_index=p.partition_index,
                                          error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                                          if unknown else 0))
                topics.append(topic_cls(topic_name=t.name, partitions=parts))
            return cls(error_code=0, responses=topics)

        return handle

    def list_paused(version: int, request: Any) -> Any:
        if request.group_id != "g":
            return listing(error_code=ErrorCode.GROUP_ID_NOT_FOUND)
        return listing(error_code=0, topics=[listing.ListPausedPartitionsTopic(
            name=tp.topic, partitions=[listing.ListPausedPartitionsPartition(
                partition_index=tp.partition, offset=42)]) for tp in sorted(paused)])

    return {1100: change(pause, True), 1101: change(resume, False), 1102: list_paused}


def test_pause_calls_use_the_wire_keys_the_broker_serves_them_under() -> None:
    from kcsim.admin import PauseApiKeys

    paused: set[TopicPartition] = set()
    aliases = {1100: 1000, 1101: 1001, 1102: 1002}
    t0, t1, t9 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 9)
    with FakeBroker(kip_1249_broker(paused), aliases=aliases) as broker:
        with AdminClient(broker.bootstrap, timeout=5) as default_keys:
            assert not default_keys.supports_pause()
            with pytest.raises(AdminError) as raised:
                default_keys.pause_partitions("g", [t0])
            assert raised.value.name == "UNSUPPORTED_VERSION" and "KIP-1249" in raised.value.message
        keys = PauseApiKeys(1100, 1101, 1102)
        with AdminClient(broker.bootstrap, timeout=5, pause_api_keys=keys) as admin:
            assert admin.supports_pause()
            result = admin.pause_partitions("g", [t0, t1, t9])
            assert result.succeeded == {t0: None, t1: None}
            assert result.error(t9).name == "UNKNOWN_TOPIC_OR_PARTITION"
            assert admin.list_paused_partitions("g") == {t0: 42, t1: 42}
            assert admin.resume_partitions("g", [t1]).all() == {t1: None}
            assert admin.list_paused_partitions("g") == {t0: 42}
            with pytest.raises(AdminError) as missing:
                admin.list_paused_partitions("other")
            assert missing.value.name == "GROUP_ID_NOT_FOUND"
        assert {k for k, _, _ in broker.requests} >= {1100, 1101, 1102}


def test_the_command_takes_the_pause_keys_kcsim_was_started_with() -> None:
    from .helpers import run_cli

    paused: set[TopicPartition] = set()
    aliases = {1100: 1000, 1101: 1001, 1102: 1002}
    with FakeBroker(kip_1249_broker(paused), aliases=aliases) as broker:
        result = run_cli(broker.bootstrap, "--pause", "--group", "g", "--topic", "t:0,1",
                         "--pause-api-keys", "1100,1101,1102")
        assert result.returncode == 0, result.stderr
        assert [line.split() for line in result.stdout.split("\n") if line.strip()][1:] == [
            ["g", "t", "0", "Paused"], ["g", "t", "1", "Paused"]]
        listed = run_cli(broker.bootstrap, "--paused-partitions", "--group", "g", "--output",
                         "csv", "--pause-api-keys", "1100,1101,1102")
        assert listed.stdout.split() == ["group,topic,partition,current_offset", "g,t,0,42",
                                         "g,t,1,42"]
