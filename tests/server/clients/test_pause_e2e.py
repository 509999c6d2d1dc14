"""KIP-1249 end to end: pause partitions of a consuming group, reset them, restart, resume.

A group of three confluent-kafka consumers reads a topic a producer keeps
writing to. Two partitions are paused over the wire (kcsim's admin client);
within one heartbeat interval nobody receives from them while the other
partitions keep flowing; their offsets are reset while the group runs; kcsim
restarts and the pause still holds; on resume the partitions are consumed again
from the reset offsets. The same for a KIP-848 group and for a classic group
(classic pausing is a kcsim extension).

The broker runs in-process with its state on disk (`kcsim_persistent`), so the
test waits on its request log instead of sleeping: a member's second Fetch after
a point in time was sent after the first was answered, so once each member that
owns partitions made two, nothing it fetched before that point is still on its
way (a member that owns none fetches nothing, and is given no records).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient as KafkaAdmin
from confluent_kafka.admin import NewTopic

from kcsim.admin import AdminClient, AdminError, TopicPartition

from .ck_members import QUIET, Member, Seen, SteadyProducer, wait_for

pytestmark = pytest.mark.timeout(240)

PARTITIONS = 6
PAUSED = (0, 1)
RESET = {0: 0, 1: 5}
# How long members may take to notice: kcsim's consumer-group heartbeat interval
# (group.consumer.heartbeat.interval.ms, 5 s) and librdkafka's classic heartbeat (3 s).
HEARTBEAT_S = {"consumer": 5.0, "classic": 3.0}
DELIVERY_S = 2.0  # how much later a record fetched before a member let go may reach it


def fetched_twice_since(kcsim: Any, members: list[Member], since: int) -> None:
    """Return once every member that owns partitions had two Fetch requests answered after
    request `since`."""
    for member in members:
        if member.assignment:
            kcsim.wait_for_request("Fetch", client_id=member.name, since=since, count=2)


def records(members: list[Member], since: float = 0.0) -> list[Seen]:
    return [r for m in members for r in m.seen() if r.at > since]


def owners(members: list[Member]) -> set[int]:
    return set().union(*(m.assignment for m in members))


@pytest.mark.parametrize("protocol", ["consumer", "classic"])
def test_pause_reset_restart_resume_while_the_group_consumes(
    kcsim_persistent: Any, unique_name: Any, protocol: str
) -> None:
    bootstrap = kcsim_persistent.bootstrap
    topic, group = unique_name("tp"), unique_name("gp")
    kafka_admin = KafkaAdmin({"bootstrap.servers": bootstrap, **QUIET})
    kafka_admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(15)
    producer = SteadyProducer(bootstrap, topic, PARTITIONS).start()
    members = [Member(bootstrap, group, topic, protocol, f"{protocol}-{i}",
                      commit_every_s=0.5).start() for i in range(3)]
    tps = [TopicPartition(topic, p) for p in PAUSED]
    try:
        wait_for(lambda: owners(members) == set(range(PARTITIONS)) and all(
            m.assignment for m in members), "three members sharing the topic")
        wait_for(lambda: {r.partition for r in records(members)} == set(range(PARTITIONS)),
                 "records from every partition")

        with AdminClient(bootstrap, timeout=15) as admin:
            paused_at = time.monotonic()
            assert admin.pause_partitions(group, tps).all() == dict.fromkeys(tps)
            wait_for(lambda: not owners(members) & set(PAUSED), "members to let go",
                     timeout=HEARTBEAT_S[protocol] + 5)
            fetched_twice_since(kcsim_persistent, members, kcsim_persistent.last_request_seq())
            quiet_from = time.monotonic()
            last = max(r.at for r in records(members) if r.partition in PAUSED)
            assert last - paused_at <= HEARTBEAT_S[protocol] + DELIVERY_S, \
                f"records from paused partitions {last - paused_at:.1f}s after the pause"
            # A partition the assignor moves for balance is unowned between two heartbeats.
            others = set(range(PARTITIONS)) - set(PAUSED)
            wait_for(lambda: {r.partition for r in records(members, quiet_from)} >= others,
                     "the other partitions to keep flowing", timeout=2 * HEARTBEAT_S[protocol] + 5)
            assert not [r for r in records(members, quiet_from) if r.partition in PAUSED]

            reset = {TopicPartition(topic, p): o for p, o in RESET.items()}
            assert admin.alter_group_offsets(group, reset).all() == dict.fromkeys(reset)
            with pytest.raises(AdminError) as refused:
                admin.alter_group_offsets(group, {TopicPartition(topic, 2): 0})
            assert refused.value.name == "UNKNOWN_MEMBER_ID", "only paused partitions may be reset"
            assert admin.list_paused_partitions(group) == reset

        kcsim_persistent.restart()
        restarted_at = time.monotonic()
        with AdminClient(bootstrap, timeout=15) as admin:
            assert admin.list_paused_partitions(group) == reset, "the pause survives a restart"
            wait_for(lambda: {r.partition for r in records(members, restarted_at)}
                     >= set(range(PARTITIONS)) - set(PAUSED), "consumption after the restart")
            kcsim_persistent.wait_for_group(group, "Stable", members=3, timeout=30)
            fetched_twice_since(kcsim_persistent, members, kcsim_persistent.last_request_seq())
            assert not [r for r in records(members, restarted_at) if r.partition in PAUSED]
            assert not owners(members) & set(PAUSED)

            resumed_at = time.monotonic()
            assert admin.resume_partitions(group, tps).all() == dict.fromkeys(tps)
            wait_for(lambda: {r.partition for r in records(members, resumed_at)} >= set(PAUSED),
                     "records from the resumed partitions", timeout=HEARTBEAT_S[protocol] + 20)
            assert admin.list_paused_partitions(group) == {}
        for p, offset in RESET.items():
            first = min(r.offset for r in records(members, resumed_at) if r.partition == p)
            assert first == offset, f"partition {p} resumed at {first}, not at its reset {offset}"
        # A commit racing the heartbeat that moves a member to the pause's new epoch is
        # STALE_MEMBER_EPOCH on kcsim, as on Kafka before KIP-1251 (docs/kafka-differences.md).
        assert not [e for m in members for e in m.errors
                    if "commit" in e and "STALE_MEMBER_EPOCH" not in e]
    finally:
        for m in members:
            m.close()
        producer.close()


def test_deleting_the_topic_or_the_group_clears_the_pause(
    kcsim_persistent: Any, unique_name: Any
) -> None:
    bootstrap = kcsim_persistent.bootstrap
    kafka_admin = KafkaAdmin({"bootstrap.servers": bootstrap, **QUIET})
    gone, kept, group = unique_name("gone"), unique_name("kept"), unique_name("g")
    for topic in (gone, kept):
        kafka_admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(15)
    with AdminClient(bootstrap, timeout=15) as admin:
        admin.alter_group_offsets(group, {TopicPartition(kept, 0): 3})  # an Empty group
        paused = [TopicPartition(gone, 0), TopicPartition(kept, 1)]
        assert admin.pause_partitions(group, paused).all() == dict.fromkeys(paused)

        kafka_admin.delete_topics([gone])[gone].result(15)
        assert admin.list_paused_partitions(group) == {TopicPartition(kept, 1): None}
        kafka_admin.create_topics([NewTopic(gone, 2, 1)])[gone].result(15)
        assert admin.list_paused_partitions(group) == {TopicPartition(kept, 1): None}

        kcsim_persistent.restart()
        assert admin.list_paused_partitions(group) == {TopicPartition(kept, 1): None}
        assert admin.delete_groups(group).all() == {group: None}
        with pytest.raises(AdminError) as missing:
            admin.list_paused_partitions(group)
        assert missing.value.name == "GROUP_ID_NOT_FOUND"
        admin.alter_group_offsets(group, {TopicPartition(kept, 0): 3})
        assert admin.list_paused_partitions(group) == {}, "a new group of the same id is not paused"
