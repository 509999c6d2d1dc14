"""A KIP-848 group (confluent-kafka, group.protocol=consumer) with a paused partition
(KIP-1249, through kcsim's admin client) survives a move of its coordinator: the members
go on with the other partitions, the pause is still in force, and ListPausedPartitions
is answered by the new coordinator."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest
from confluent_kafka.admin import AdminClient as KafkaAdmin
from confluent_kafka.admin import NewTopic

from kcsim.admin import AdminClient, TopicPartition

from .brokerkit import group_coordinated_by
from .ck_members import QUIET, Member, SteadyProducer, wait_for

if TYPE_CHECKING:
    from kcsim import EmbeddedServer

pytestmark = [pytest.mark.timeout(180), pytest.mark.kcsim(brokers=3)]

PARTITIONS, PAUSED = 6, 0
HEARTBEAT_S = 5.0  # group.consumer.heartbeat.interval.ms


def test_a_paused_partition_stays_paused_through_a_coordinator_move(
        kcsim: EmbeddedServer) -> None:
    topic, group = "paused-move", group_coordinated_by(kcsim, 1, "pm")
    kafka_admin = KafkaAdmin({"bootstrap.servers": kcsim.bootstrap, **QUIET})
    kafka_admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(15)
    producer = SteadyProducer(kcsim.bootstrap, topic, PARTITIONS).start()
    members = [Member(kcsim.bootstrap, group, topic, "consumer", f"pm-{i}",
                      commit_every_s=0.5).start() for i in range(3)]

    def owned() -> set[int]:
        return set().union(*(m.assignment for m in members))

    def partitions_since(at: float) -> set[int]:
        return {r.partition for m in members for r in m.seen() if r.at > at}

    paused = TopicPartition(topic, PAUSED)
    try:
        wait_for(lambda: owned() == set(range(PARTITIONS)) and all(m.assignment for m in members),
                 "three members sharing the topic")
        with AdminClient(kcsim.bootstrap, timeout=15) as admin:
            assert admin.pause_partitions(group, [paused]).all() == {paused: None}
            wait_for(lambda: PAUSED not in owned(), "members to let go", timeout=HEARTBEAT_S + 5)
            before = kcsim.group(group)
            assert before is not None
            since = kcsim.last_request_seq()
            kcsim.nodes.move_coordinator(group, 3, load_ms=300)
            # A heartbeat or a commit at the old coordinator first: the members re-find it.
            kcsim.wait_for_request(group=group, error="NOT_COORDINATOR", since=since, timeout=30)
            kcsim.wait_for_group(group, "Stable", members=3, timeout=30)
            moved_at = time.monotonic()
            others = set(range(PARTITIONS)) - {PAUSED}
            wait_for(lambda: partitions_since(moved_at) >= others,
                     "the other partitions to keep flowing", timeout=2 * HEARTBEAT_S + 5)
            assert PAUSED not in partitions_since(moved_at) and PAUSED not in owned()
            listed_since = kcsim.last_request_seq()
            assert set(admin.list_paused_partitions(group)) == {paused}
        answered = kcsim.requests("ListPausedPartitions", since=listed_since)
        assert answered and answered[-1].errors == []
        assert kcsim.nodes.coordinator(group) == 3
        # The members went on with their epochs: the same members, the group epoch kept.
        after = kcsim.group(group)
        assert after is not None and after.generation >= before.generation
        assert {m.member_id for m in after.members} == {m.member_id for m in before.members}
    finally:
        for m in members:
            m.close()
        producer.close()
