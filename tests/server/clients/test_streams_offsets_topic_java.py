"""Kafka's own record classes read a streams group in kcsim's `__consumer_offsets`.

Two members heartbeat a word-count topology to a stable split; then a Java consumer reads
the topic and decodes every record with `GroupCoordinatorRecordSerde` from
kafka-group-coordinator 4.4 (tests/server/clients/offsets_topic_scenario.py): each of the
six StreamsGroup* record types is there, decoded, in the group's partition, holding what
the broker says the group holds.
"""

from __future__ import annotations

from typing import Any

import pytest

from kcsim.coordinator.kafka_format import partition_for
from kcsim.protocol.codecs import request_class
from tests.coordinator.streams_harness import task_ids, tasks_of, word_count

from ..durability.wire import Wire
from . import javaclient
from .offsets_topic_scenario import read_with_kafka_serde

pytestmark = [pytest.mark.java, pytest.mark.timeout(240)]

Heartbeat = request_class(88)
STREAMS_TYPES = {17: "StreamsGroupMetadataKey", 19: "StreamsGroupMemberMetadataKey",
                 20: "StreamsGroupTargetAssignmentMetadataKey",
                 21: "StreamsGroupTargetAssignmentMemberKey",
                 22: "StreamsGroupCurrentMemberAssignmentKey", 23: "StreamsGroupTopologyKey"}


def settle(wire: Wire) -> dict[str, set[Any]]:
    epochs = {"a": 0, "b": 0}
    owned: dict[str, set[Any]] = {"a": set(), "b": set()}
    for _ in range(5):
        for m in epochs:
            joining = epochs[m] == 0
            r = wire.call(88, 1, Heartbeat(
                group_id="wc", member_id=m, member_epoch=epochs[m],
                rebalance_timeout_ms=30000 if joining else -1,
                topology=word_count() if joining else None,
                process_id=f"p-{m}" if joining else None,
                active_tasks=task_ids(owned[m]), standby_tasks=[], warmup_tasks=[]))
            assert r.error_code == 0, r
            epochs[m] = r.member_epoch
            if r.active_tasks is not None:
                owned[m] = tasks_of(r.active_tasks)
    return owned


@pytest.mark.kcsim(streams_group_initial_rebalance_delay_ms=0, streams_group_assignment_interval_ms=0)
def test_kafka_serde_decodes_a_streams_groups_records(kcsim: Any) -> None:
    javaclient.skip_without_java()
    host, port = kcsim.bootstrap.rsplit(":", 1)
    with Wire(host, int(port)) as wire:
        wire.create_topic("words", 4)
        owned = settle(wire)
    lines, _summary = read_with_kafka_serde(kcsim.bootstrap)
    streams = [line for line in lines if line["type"] in STREAMS_TYPES]
    assert {line["type"] for line in streams} == set(STREAMS_TYPES)
    for line in streams:
        assert line["key_type"] == STREAMS_TYPES[line["type"]]
        assert line["key"]["groupId"] == "wc"
        assert line["partition"] == partition_for("wc", 50)
    newest = {}
    for line in streams:
        newest[(line["type"], line["key"].get("memberId"))] = line["value"]
    topology = newest[(23, None)]
    assert [s["subtopologyId"] for s in topology["subtopologies"]] == ["0", "1"]
    for member, tasks in owned.items():
        current = newest[(22, member)]
        held = {(t["subtopologyId"], p) for t in current["activeTasks"] for p in t["partitions"]}
        assert held == tasks
    assert owned["a"] | owned["b"] == {(s, p) for s in "01" for p in range(4)}
