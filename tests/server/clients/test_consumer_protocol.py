"""Real KIP-848 consumers (group.protocol=consumer) against `kcsim serve`.

Java's KafkaConsumer (3.9 and 4.x) and confluent-kafka join one group, share every
partition of a 6-partition topic across three members, consume what was
produced and commit; then one member leaves and the other two take over its
partitions and consume what is produced next.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from . import javaclient
from .ck_members import QUIET, Member, wait_for

pytestmark = pytest.mark.timeout(180)

PARTITIONS = 6
PER_PHASE = 300


def produce(bootstrap: str, topic: str, start: int, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, **QUIET})
    for i in range(start, start + count):
        producer.produce(topic, f"v{i}".encode(), partition=i % PARTITIONS)
    assert producer.flush(20) == 0


def values(members: list[Member]) -> list[bytes]:
    return [r.value for m in members for r in m.seen() if r.value is not None]


def shares(members: list[Member]) -> list[frozenset[int]]:
    return [m.assignment for m in members]


def shared_by(members: list[Member]) -> bool:
    parts = shares(members)
    union = frozenset().union(*parts)
    return (union == frozenset(range(PARTITIONS)) and all(parts)
            and sum(len(p) for p in parts) == PARTITIONS)


@pytest.mark.java
def test_java_consumers_share_a_topic_and_take_over_from_a_leaver(
    kcsim_server: Any, unique_name: Any, java_version: str
) -> None:
    javaclient.skip_without_java()
    proc = javaclient.run("Consumer848Group", kcsim_server.bootstrap, unique_name("t848"),
                          unique_name("g848"), str(PER_PHASE), timeout=150, version=java_version)
    steps = {s["step"]: s for s in (json.loads(line) for line in proc.stdout.splitlines()
                                     if line.startswith("{"))}
    context = f"\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-4000:]}"
    failed = [s for s in steps.values() if "error" in s]
    assert not failed, f"Java step {failed[0]['step']} failed: {failed[0]['error']}{context}"
    assert proc.returncode == 0, context

    joined = steps["join"]["assignments"]
    assert sorted(p for ps in joined.values() for p in ps) == list(range(PARTITIONS))
    assert all(joined.values())
    first = steps["consume-1"]
    assert (first["distinct"], first["duplicates"], first["errors"]) == (PER_PHASE, 0, [])
    assert steps["describe-1"]["state"] == "Stable"
    assert steps["describe-1"]["members"] == joined
    assert steps["describe-1"]["assignor"] == "uniform"

    after = steps["leave"]["assignments"]
    assert steps["leave"]["left"] == "c0" and steps["leave"]["left_errors"] == []
    assert sorted(p for ps in after.values() for p in ps) == list(range(PARTITIONS))
    assert set(joined["c1"]) <= set(after["c1"]) and set(joined["c2"]) <= set(after["c2"]), \
        "the members that stay keep their partitions"
    second = steps["consume-2"]
    assert (second["distinct"], second["duplicates"], second["errors"]) == (PER_PHASE, 0, [])
    assert all(n > 0 for n in second["per_member"].values())
    assert steps["describe-2"]["state"] == "Stable"
    assert set(steps["describe-2"]["members"]) == {"c1", "c2"}
    assert steps["offsets"]["committed"] == steps["offsets"]["end"]


def test_confluent_kafka_consumers_share_a_topic_and_take_over_from_a_leaver(
    kcsim_server: Any, unique_name: Any
) -> None:
    bootstrap = kcsim_server.bootstrap
    topic, group = unique_name("t848"), unique_name("g848")
    admin = AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(15)
    produce(bootstrap, topic, 0, PER_PHASE)

    members = [Member(bootstrap, group, topic, "consumer", f"ck{i}").start() for i in range(3)]
    try:
        wait_for(lambda: shared_by(members), "three members sharing all six partitions")
        wait_for(lambda: len(set(values(members))) >= PER_PHASE, "the first records")
        # At least once: a partition that moved before anyone committed is read again.
        assert set(values(members)) == {f"v{i}".encode() for i in range(PER_PHASE)}
        for m in members:
            m.commit()

        described = admin.describe_consumer_groups([group])[group].result(15)
        assert str(described.type) == "ConsumerGroupType.CONSUMER"
        assert str(described.state) == "ConsumerGroupState.STABLE"
        assert described.partition_assignor == "uniform"
        assigned = sorted(tp.partition for d in described.members
                          for tp in d.assignment.topic_partitions)
        assert assigned == list(range(PARTITIONS))

        leaver, stayers = members[0], members[1:]
        kept = [set(m.assignment) for m in stayers]
        leaver.close()
        wait_for(lambda: shared_by(stayers), "two members sharing all six partitions")
        assert all(k <= m.assignment for k, m in zip(kept, stayers, strict=True))

        produce(bootstrap, topic, PER_PHASE, PER_PHASE)
        wanted = {f"v{i}".encode() for i in range(PER_PHASE, 2 * PER_PHASE)}
        wait_for(lambda: wanted <= set(values(stayers)), "the second records")
        for m in stayers:
            m.commit()
        assert not [e for m in members for e in m.errors]

        committed = {tp.partition: tp.offset for tp in admin.list_consumer_group_offsets(
            [_offsets_request(group)])[group].result(15).topic_partitions}
        assert committed == dict.fromkeys(range(PARTITIONS), 2 * PER_PHASE // PARTITIONS)
        listed = {g.group_id: g for g in admin.list_consumer_groups().result(15).valid}
        assert str(listed[group].type) == "ConsumerGroupType.CONSUMER"
    finally:
        for m in members:
            m.close()


def _offsets_request(group: str) -> Any:
    from confluent_kafka import ConsumerGroupTopicPartitions

    return ConsumerGroupTopicPartitions(group)


def test_a_classic_group_still_describes_through_the_fallback(
    kcsim: Any, unique_name: Any
) -> None:
    """Admins try ConsumerGroupDescribe first; classic groups must still describe."""
    bootstrap = kcsim.bootstrap
    topic, group = unique_name("tc"), unique_name("gc")
    admin = AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(15)
    member = Member(bootstrap, group, topic, "classic", "classic0").start()
    try:
        wait_for(lambda: member.assignment == frozenset({0, 1}), "the classic member's partitions")
        kcsim.wait_for_group(group, "Stable", members=1)
        described = admin.describe_consumer_groups([group])[group].result(15)
        assert str(described.type) == "ConsumerGroupType.CLASSIC"
        assert str(described.state) == "ConsumerGroupState.STABLE"
        assert [sorted(tp.partition for tp in m.assignment.topic_partitions)
                for m in described.members] == [[0, 1]]
    finally:
        member.close()
