"""A streams group's records in Kafka's `__consumer_offsets` format (KIP-1071).

Each record's key starts with Kafka 4.4's record type, and its value (version 0) reads
back through the schema Kafka declares for it with the fields kcsim wrote.
"""

from __future__ import annotations

from typing import Any

import pytest

from kcsim.coordinator.kafka_format import kafka_record
from kcsim.coordinator.records import (
    StreamsCopartitionGroup,
    StreamsGroupCurrentMemberAssignmentKey,
    StreamsGroupCurrentMemberAssignmentValue,
    StreamsGroupMemberKey,
    StreamsGroupMemberValue,
    StreamsGroupMetadataKey,
    StreamsGroupMetadataValue,
    StreamsGroupTargetAssignmentMemberKey,
    StreamsGroupTargetAssignmentMemberValue,
    StreamsGroupTargetAssignmentMetadataKey,
    StreamsGroupTargetAssignmentMetadataValue,
    StreamsGroupTopologyKey,
    StreamsGroupTopologyValue,
    StreamsSubtopology,
    StreamsTaskIds,
    StreamsTopicInfo,
)
from kcsim.protocol.codecs import data_codec
from kcsim.storage.records import Record

TASKS = [StreamsTaskIds("0", [0, 2]), StreamsTaskIds("1", [1])]
TOPOLOGY = StreamsGroupTopologyValue(3, [
    StreamsSubtopology("0", ["words"], [], [], ["app-repartition"], [],
                       [StreamsCopartitionGroup([0], [], [])]),
    StreamsSubtopology("1", [], [], [StreamsTopicInfo("app-changelog", 0, 0,
                                                      [("cleanup.policy", "compact")])],
                       [], [StreamsTopicInfo("app-repartition", 4, 0, [])], []),
])

# (record, Kafka's record type, Kafka's schema name, the fields its value reads back with)
CASES: list[tuple[Record, int, str, dict[str, Any]]] = [
    (Record(StreamsGroupMetadataKey("app"), StreamsGroupMetadataValue(5, 77, 3)),
     17, "StreamsGroupMetadata",
     {"epoch": 5, "metadata_hash": 77, "validated_topology_epoch": 3}),
    (Record(StreamsGroupTopologyKey("app"), TOPOLOGY), 23, "StreamsGroupTopology",
     {"epoch": 3}),
    (Record(StreamsGroupMemberKey("app", "m1"), StreamsGroupMemberValue(
        "i1", None, "client", "/10.0.0.1", 30000, 3, "proc-1", ("localhost", 8080),
        [("zone", "a")])),
     19, "StreamsGroupMemberMetadata",
     {"instance_id": "i1", "rack_id": None, "client_id": "client", "rebalance_timeout_ms": 30000,
      "topology_epoch": 3, "process_id": "proc-1"}),
    (Record(StreamsGroupTargetAssignmentMetadataKey("app"),
            StreamsGroupTargetAssignmentMetadataValue(5, 1234)),
     20, "StreamsGroupTargetAssignmentMetadata",
     {"assignment_epoch": 5, "assignment_timestamp": 1234}),
    (Record(StreamsGroupTargetAssignmentMemberKey("app", "m1"),
            StreamsGroupTargetAssignmentMemberValue(TASKS, [], [])),
     21, "StreamsGroupTargetAssignmentMember", {}),
    (Record(StreamsGroupCurrentMemberAssignmentKey("app", "m1"),
            StreamsGroupCurrentMemberAssignmentValue(5, 4, 0, TASKS, [], [], [], [], [])),
     22, "StreamsGroupCurrentMemberAssignment",
     {"member_epoch": 5, "previous_member_epoch": 4, "state": 0}),
]


@pytest.mark.parametrize(("record", "type_id", "schema", "fields"), CASES,
                         ids=[c[2] for c in CASES])
def test_a_streams_record_is_written_in_kafkas_format(
        record: Record, type_id: int, schema: str, fields: dict[str, Any]) -> None:
    group, key, value = kafka_record(record)  # type: ignore[misc]
    assert group == "app"
    assert key[:2] == type_id.to_bytes(2, "big")
    decoded_key, _ = data_codec(f"{schema}Key").decoder(0)(memoryview(key), 2)
    assert decoded_key.group_id == "app"
    assert value is not None and value[:2] == b"\x00\x00"
    decoded, end = data_codec(f"{schema}Value").decoder(0)(memoryview(value), 2)
    assert end == len(value)
    for name, expected in fields.items():
        assert getattr(decoded, name) == expected
    assert kafka_record(Record(record.key, None))[2] is None  # type: ignore[index]


def test_tasks_and_topology_read_back_in_kafkas_schema() -> None:
    _, _, value = kafka_record(CASES[-1][0])  # type: ignore[misc]
    decoded, _ = data_codec("StreamsGroupCurrentMemberAssignmentValue").decoder(0)(
        memoryview(value), 2)
    assert [(t.subtopology_id, t.partitions) for t in decoded.active_tasks] == [
        ("0", [0, 2]), ("1", [1])]
    assert all(t.assignment_epochs is None for t in decoded.active_tasks)
    _, _, value = kafka_record(CASES[1][0])  # type: ignore[misc]
    topology, _ = data_codec("StreamsGroupTopologyValue").decoder(0)(memoryview(value), 2)
    first, second = topology.subtopologies
    assert first.source_topics == ["words"] and first.repartition_sink_topics == ["app-repartition"]
    assert first.copartition_groups[0].source_topics == [0]
    changelog = second.state_changelog_topics[0]
    assert (changelog.name, [(c.key, c.value) for c in changelog.topic_configs]) == (
        "app-changelog", [("cleanup.policy", "compact")])
    assert second.repartition_source_topics[0].partitions == 4
