"""Burrow reads kcsim's `__consumer_offsets` and reports each group's lag.

Burrow 1.2 decodes OffsetCommitValue up to version 3 (what Kafka 2.1 to 3.x wrote), so kcsim
runs with `offsets_topic_value_version=3`; with Kafka 4.x's version 4 Burrow drops every
commit, against kcsim as against Kafka 4.x (docs/consumer-offsets-topic.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata

from .burrow import Burrow, ensure_installed
from .ck_members import wait_for

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.timeout(180)

LOG_END = {0: 10, 1: 20, 2: 30}
COMMITTED = {0: 4, 1: 20, 2: 7}


def lag_by_partition(status: Any) -> dict[int, tuple[int, int]]:
    """partition -> (committed offset Burrow last saw, its current lag)."""
    return {p["partition"]: (p["end"]["offset"], p["current_lag"])
            for p in status["status"]["partitions"] if p.get("end")}


def test_burrow_lists_the_group_with_log_end_minus_committed_as_lag(
        kcsim_factory: Callable[..., Any], tmp_path: Path, unique_name: Any) -> None:
    ensure_installed()
    server = kcsim_factory(offsets_topic_value_version=3)
    topic, group = unique_name("watched"), unique_name("lagging")
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
    admin.create_topics([NewTopic(topic, len(LOG_END), 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=server.bootstrap)
    for partition, end in LOG_END.items():
        for i in range(end):
            producer.send(topic, f"{i}".encode(), partition=partition)
    producer.flush()
    producer.close()
    committer = KafkaConsumer(bootstrap_servers=server.bootstrap, group_id=group,
                              enable_auto_commit=False)
    committer.assign([TopicPartition(topic, p) for p in COMMITTED])
    committer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, "", -1)
                      for p, o in COMMITTED.items()})
    committer.close()

    burrow = Burrow(tmp_path, server.bootstrap)
    try:
        burrow.start()
        expected = {p: (COMMITTED[p], LOG_END[p] - COMMITTED[p]) for p in COMMITTED}

        def reported() -> bool:
            listed = burrow.get("/consumer")
            status = burrow.get(f"/consumer/{group}/lag")
            return bool(listed and group in listed.get("consumers", [])
                        and status and not status.get("error")
                        and lag_by_partition(status) == expected)

        try:
            wait_for(reported, "Burrow to report the group's lag", timeout=90)
        except AssertionError:
            print(burrow.logs())
            raise
        status = burrow.get(f"/consumer/{group}/lag")["status"]
        assert status["totallag"] == sum(lag for _, lag in expected.values())
    finally:
        burrow.stop()
