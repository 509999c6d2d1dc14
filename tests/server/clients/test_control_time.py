"""Simulated time with real clients: the test advances kcsim's clock instead of waiting.

Clients keep their own real clocks; only the broker's time jumps. So advancing past a
member's session time-out expires it on the broker at once, while members that keep
heartbeating stay (their sessions restart at every heartbeat), and the group hands the
expired member's partitions to the others. No test here sleeps.
"""

from __future__ import annotations

from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from .ck_members import ChildMember, Member
from .ck_members import wait_for as wait_until
from .groupkit import create_topic, produce, wait_for

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 6
DAY_MS = 24 * 3600 * 1000


def partitions_of(view: Any) -> dict[str, list[int]]:
    """Partitions per member client id, as the broker holds them."""
    return {m.client_id: sorted(p for _, p in m.partitions) for m in view.members}


@pytest.mark.java
def test_a_silent_classic_member_expires_when_the_clock_passes_its_session(
        kcsim: Any, java: Any, unique_name: Any) -> None:
    """Java KafkaConsumers: one (session 10 s) in a JVM that is killed, two (session 30 s)
    in another. 10 s of broker time later it is gone, at once, and the two share its
    partitions."""
    topic, group = unique_name("t"), unique_name("g")
    create_topic(kcsim.bootstrap, topic, PARTITIONS)
    stays, doomed = java(kcsim.bootstrap), java(kcsim.bootstrap)
    members = [stays.consumer(group, topic, name=f"stay{i}", session_ms=30_000) for i in range(2)]
    doomed.consumer(group, topic, name="doomed", session_ms=10_000)
    view = kcsim.wait_for_group(group, "Stable", members=3, timeout=30)
    assert sorted(map(len, partitions_of(view).values())) == [2, 2, 2]
    wait_for(lambda: [m.view().assignment for m in members],
             lambda seen: all(len(a) == 2 for a in seen), "the members' own assignments")

    doomed.proc.kill()  # no LeaveGroup: its session is all that ends it
    doomed.proc.wait(30)
    killed = kcsim.last_request_seq()
    for name in ("stay0", "stay1"):  # both heartbeat (every 200 ms) after the kill
        kcsim.wait_for_request("Heartbeat", client_id=f"kcsim-java-{name}", since=killed)

    kcsim.clock.advance(10_001)
    view = kcsim.group(group)
    assert sorted(partitions_of(view)) == ["kcsim-java-stay0", "kcsim-java-stay1"]
    view = kcsim.wait_for_group(group, "Stable", members=2)
    assert sorted(p for ps in partitions_of(view).values() for p in ps) == list(range(PARTITIONS))
    assert sorted(map(len, partitions_of(view).values())) == [3, 3]
    wait_for(lambda: [m.view().assignment for m in members],
             lambda seen: sorted(p for a in seen for p in a) == list(range(PARTITIONS)),
             "the two members consuming all six partitions")


@pytest.mark.kcsim(consumer_group_heartbeat_interval_ms=500)
def test_a_silent_kip848_member_expires_when_the_clock_passes_its_session(
        kcsim: Any, unique_name: Any) -> None:
    """confluent-kafka KIP-848 members: one in a child process that is killed. Its session
    (group.consumer.session.timeout.ms, 45 s) ends when the clock passes its last heartbeat
    by 45 s; the others heartbeated since, so theirs do not, and they take its partitions."""
    topic, group = unique_name("t"), unique_name("g")
    create_topic(kcsim.bootstrap, topic, PARTITIONS)
    members = [Member(kcsim.bootstrap, group, topic, "consumer", f"stay{i}").start()
               for i in range(2)]
    doomed = ChildMember(kcsim.bootstrap, group, topic, "consumer", "doomed")
    try:
        view = kcsim.wait_for_group(group, "Stable", members=3, timeout=30)
        assert sorted(map(len, partitions_of(view).values())) == [2, 2, 2]

        doomed.kill()
        last = kcsim.requests("ConsumerGroupHeartbeat", client_id="doomed")[-1]
        for member in members:  # a heartbeat of each after the doomed one's last, by 2 ms
            since = last.seq
            while True:
                beat = kcsim.wait_for_request("ConsumerGroupHeartbeat", client_id=member.name,
                                              since=since)[0]
                if beat.received_ms >= last.received_ms + 2:
                    break
                since = beat.seq
        session_ms = kcsim.config.consumer_group_session_timeout_ms
        kcsim.clock.advance(last.received_ms + session_ms + 1 - kcsim.clock.now_ms())

        view = kcsim.group(group)
        assert sorted(partitions_of(view)) == ["stay0", "stay1"]
        view = kcsim.wait_for_group(group, "Stable", members=2)
        assert sorted(p for ps in partitions_of(view).values() for p in ps) == list(range(PARTITIONS))
        wait_until(lambda: sorted(p for m in members for p in m.assignment) == list(range(PARTITIONS)),
                   "the two members consuming all six partitions")
    finally:
        doomed.kill()
        for member in members:
            member.close()


def test_offsets_of_an_empty_group_expire_seven_days_on(kcsim: Any, unique_name: Any) -> None:
    """kafka-python commits and leaves; a week of broker time later (offsets.retention.minutes)
    plus one retention check, the offsets and the group are gone."""
    topic, group = unique_name("t"), unique_name("g")
    create_topic(kcsim.bootstrap, topic, 2)
    produce(kcsim.bootstrap, topic, range(2), 3)
    consumer = KafkaConsumer(topic, bootstrap_servers=kcsim.bootstrap, group_id=group,
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             metadata_max_age_ms=1000)  # rejoins soon if it joined too early
    try:
        for _ in range(100):  # the consumer joins in its own poll loop
            if consumer.assignment():
                break
            consumer.poll(timeout_ms=200)
        assert kcsim.group(group).state == "Stable"
        consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(3, "", -1) for p in range(2)})
    finally:
        consumer.close()
    kcsim.wait_for_group(group, "Empty")
    admin = KafkaAdminClient(bootstrap_servers=kcsim.bootstrap, request_timeout_ms=5000)
    try:
        def committed() -> dict[int, int]:
            found = admin.list_group_offsets(group)[group]
            return {tp.partition: om.offset for tp, om in found.items()}

        assert committed() == {0: 3, 1: 3}
        retention = kcsim.config.offsets_retention_ms
        check = kcsim.config.offsets_retention_check_interval_ms
        assert retention == 7 * DAY_MS
        kcsim.clock.advance(retention - check)
        assert committed() == {0: 3, 1: 3}  # not a week yet
        kcsim.clock.advance(2 * check)
        assert kcsim.committed(group) == {}
        assert committed() == {}
        assert group not in {g["group_id"] for g in admin.list_groups()}
    finally:
        admin.close()
