"""Fault rules with real clients: what the client sees, what it does about it, and the
request log showing it.

Java KafkaConsumer and Admin (kafka-clients 3.9, through the Java driver), confluent-kafka
and kafka-python, each against the in-process broker (the `kcsim` fixture).
"""

from __future__ import annotations

from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition

from kcsim.admin import AdminClient
from kcsim.admin import TopicPartition as KcsimTopicPartition

from .ck_members import Member
from .ck_members import wait_for as wait_until
from .groupkit import create_topic, produce, wait_for

pytestmark = pytest.mark.timeout(120)


@pytest.mark.java
def test_a_commit_answered_not_coordinator_twice_is_retried_and_lands(
        kcsim: Any, java: Any, unique_name: Any) -> None:
    """KafkaConsumer.commitSync gets NOT_COORDINATOR twice: it looks the coordinator up
    again, retries, and the third commit is served."""
    topic, group = unique_name("t"), unique_name("g")
    create_topic(kcsim.bootstrap, topic, 2)
    client = java(kcsim.bootstrap)
    member = client.consumer(group, topic, name="committer")
    kcsim.wait_for_group(group, "Stable", members=1, timeout=30)
    since = kcsim.last_request_seq()
    rule = kcsim.faults.add(api="OffsetCommit", group=group, error="NOT_COORDINATOR", times=2)

    member.commit({0: (5, "five"), 1: (6, "six")})

    assert kcsim.faults.get(rule).fired == 2
    mine = [r for r in kcsim.requests(client_id="kcsim-java-committer", since=since)
            if r.api in ("OffsetCommit", "FindCoordinator")]
    commits = [r for r in mine if r.api == "OffsetCommit"]
    assert [r.errors for r in commits] == [["NOT_COORDINATOR"], ["NOT_COORDINATOR"], []]
    assert [r.fault for r in commits] == [rule, rule, None]
    found_again = [r for r in mine if r.api == "FindCoordinator"]
    assert found_again and found_again[0].seq > commits[0].seq, \
        "the consumer looks the coordinator up again after NOT_COORDINATOR"
    assert client.offsets(group) == {(topic, 0): (5, "five"), (topic, 1): (6, "six")}
    assert kcsim.committed(group) == {(topic, 0): 5, (topic, 1): 6}
    member.close()


def test_a_consumer_waits_out_a_loading_coordinator_then_resumes_from_its_offsets(
        kcsim: Any, unique_name: Any) -> None:
    """confluent-kafka: OffsetFetch answers COORDINATOR_LOAD_IN_PROGRESS three times; the
    consumer asks again until it is served and starts at the committed offsets."""
    topic, group = unique_name("t"), unique_name("g")
    create_topic(kcsim.bootstrap, topic, 2)
    produce(kcsim.bootstrap, topic, range(2), 10)
    with AdminClient(kcsim.bootstrap, timeout=10) as admin:
        admin.alter_group_offsets(group, {KcsimTopicPartition(topic, 0): 4,
                                          KcsimTopicPartition(topic, 1): 7}).all()
    rule = kcsim.faults.add(api="OffsetFetch", group=group, error="COORDINATOR_LOAD_IN_PROGRESS",
                            times=3)
    member = Member(kcsim.bootstrap, group, topic, "classic", "loader").start()
    try:
        wait_until(lambda: {r.partition for r in member.seen()} == {0, 1}, "records of both")
        first = {p: min(r.offset for r in member.seen() if r.partition == p) for p in (0, 1)}
        assert first == {0: 4, 1: 7}
    finally:
        member.close()
    fetches = kcsim.requests("OffsetFetch", client_id="loader")
    assert [r.errors for r in fetches[:4]] == [["COORDINATOR_LOAD_IN_PROGRESS"]] * 3 + [[]]
    assert kcsim.faults.get(rule).fired == 3


def test_fetch_latency_shows_in_the_clients_fetch_round_trip(kcsim: Any, unique_name: Any) -> None:
    """kafka-python's own fetch-latency metric rises by the 200 ms a rule adds to Fetch and
    falls back once the rule is removed."""
    topic = unique_name("t")
    create_topic(kcsim.bootstrap, topic, 1)
    produce(kcsim.bootstrap, topic, [0], 5)
    consumer = KafkaConsumer(bootstrap_servers=kcsim.bootstrap, fetch_max_wait_ms=10,
                             metrics_sample_window_ms=500, metrics_num_samples=2)
    consumer.assign([TopicPartition(topic, 0)])

    def latency_ms() -> float:
        consumer.poll(timeout_ms=100)  # the client fetches meanwhile, on its own schedule
        return float(consumer.metrics()["consumer-fetch-manager-metrics"]["fetch-latency-avg"])

    try:
        before = wait_for(latency_ms, lambda ms: 0 < ms < 100, "fetches without latency",
                          interval=0)
        rule = kcsim.faults.add(api="Fetch", latency_ms=200, times=None)
        slow = wait_for(latency_ms, lambda ms: ms >= 200, "fetches 200 ms slower", interval=0)
        assert kcsim.faults.get(rule).fired >= 2
        slowest = kcsim.requests("Fetch", since=kcsim.requests("Fetch")[-1].seq - 1)[-1]
        assert slowest.answered_ms - slowest.received_ms >= 200
        kcsim.faults.remove(rule)
        after = wait_for(latency_ms, lambda ms: ms < 100, "fetches fast again", interval=0)
    finally:
        consumer.close()
    assert before < 100 <= 200 <= slow and after < 100


def test_a_connection_closed_after_join_group_is_reopened_and_the_group_forms(
        kcsim: Any, unique_name: Any) -> None:
    """confluent-kafka: the broker closes the connection right after answering a member's
    first JoinGroup; the client reconnects and joins again, and the group forms."""
    topic, group = unique_name("t"), unique_name("g")
    create_topic(kcsim.bootstrap, topic, 4)
    rule = kcsim.faults.add(api="JoinGroup", client_id="cut", close="after")
    members = [Member(kcsim.bootstrap, group, topic, "classic", name).start()
               for name in ("cut", "whole")]
    try:
        view = kcsim.wait_for_group(group, "Stable", members=2, timeout=30)
        assert sorted(p for m in view.members for _, p in m.partitions) == [0, 1, 2, 3]
        wait_until(lambda: sorted(p for m in members for p in m.assignment) == [0, 1, 2, 3],
                   "both members with their partitions")
    finally:
        for member in members:
            member.close()
    assert kcsim.faults.get(rule).fired == 1
    joins = kcsim.requests("JoinGroup", client_id="cut")
    assert joins[0].fault == rule and joins[0].answered
    assert len({r.connection for r in joins}) >= 2, "the member joined again on a new connection"


@pytest.mark.kcsim(initial_rebalance_delay_ms=3000)
def test_members_get_their_assignment_only_once_a_held_sync_group_is_released(
        kcsim: Any, unique_name: Any) -> None:
    """confluent-kafka: both members' SyncGroup requests are held; the group waits in
    CompletingRebalance without assignments until the test releases them."""
    topic, group = unique_name("t"), unique_name("g")
    create_topic(kcsim.bootstrap, topic, 4)
    rule = kcsim.faults.add(api="SyncGroup", group=group, hold=True, times=2)
    members = [Member(kcsim.bootstrap, group, topic, "classic", f"m{i}").start() for i in range(2)]
    try:
        kcsim.wait_for_group(group, "PreparingRebalance", members=2, timeout=30)
        # The initial rebalance delay, without waiting for it: 3 s, then 3 s more for the
        # member that joined during the first 3 s (as Kafka extends it).
        kcsim.clock.advance(6000)
        kcsim.wait_for_fault(rule, held=2, timeout=1)
        assert kcsim.group(group).state == "CompletingRebalance"
        assert kcsim.requests("SyncGroup") == []
        assert all(not m.assignment for m in members)

        assert kcsim.faults.release(rule) == 2
        view = kcsim.wait_for_group(group, "Stable", members=2)
        assert sorted(p for m in view.members for _, p in m.partitions) == [0, 1, 2, 3]
        wait_until(lambda: sorted(p for m in members for p in m.assignment) == [0, 1, 2, 3],
                   "both members with their partitions")
    finally:
        for member in members:
            member.close()
    syncs = kcsim.requests("SyncGroup")
    assert [r.fault for r in syncs[:2]] == [rule, rule]
    assert all(r.answered_ms >= r.received_ms for r in syncs)


@pytest.mark.java
def test_the_java_admin_fetches_offsets_of_three_groups_in_one_request(
        kcsim: Any, java: Any, unique_name: Any) -> None:
    """Admin.listConsumerGroupOffsets of three groups is one OffsetFetch v8+ naming all
    three (KIP-709), as the request log shows."""
    topic = unique_name("t")
    create_topic(kcsim.bootstrap, topic, 1)
    client = java(kcsim.bootstrap)
    groups = [unique_name(f"g{i}") for i in range(3)]
    for i, group in enumerate(groups):
        assert client.alter_offsets(group, topic, {0: i + 1}) == {0: None}
    since = kcsim.last_request_seq()
    found = client.offsets_many(groups)
    assert found == {g: {(topic, 0): (i + 1, "")} for i, g in enumerate(groups)}
    (fetch,) = kcsim.requests("OffsetFetch", since=since)
    assert fetch.version >= 8
    assert sorted(fetch.groups) == sorted(groups)
    assert fetch.client_id == "kcsim-java-group-admin"


def test_bad_input_to_the_controls_is_refused_naming_the_field(kcsim: Any) -> None:
    """From the test's thread as from inside the broker's run."""
    with pytest.raises(ValueError, match=r"^api: unknown API 'OffsetComit' \(did you mean OffsetCommit\?\)"):
        kcsim.faults.add(api="OffsetComit", error="NOT_COORDINATOR")
    with pytest.raises(ValueError, match=r"^error: unknown Kafka error"):
        kcsim.faults.add(api="OffsetCommit", error="NOT_COORD")
    with pytest.raises(ValueError, match=r"^api: the ElectLeaders API is not served"):
        kcsim.faults.add(api="ElectLeaders", error="NOT_COORDINATOR")
    with pytest.raises(ValueError, match=r"^times: "):
        kcsim.faults.add(api="OffsetCommit", error="NOT_COORDINATOR", times=-1)
    with pytest.raises(ValueError, match=r"^ms: "):
        kcsim.clock.advance(-5)
    assert kcsim.faults.list() == []
