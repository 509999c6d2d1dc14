"""The server's record log: every record type it holds, at its stable id, in the
format logs were always written in."""

from __future__ import annotations

import uuid

from kcsim.coordinator.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberKey,
    ConsumerGroupMemberValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    GroupConfigKey,
    GroupConfigValue,
    GroupEventKey,
    GroupEventValue,
    GroupMemberValue,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    PausedTopic,
    PausedTopicPartitionsKey,
    PausedTopicPartitionsValue,
    PendingTxnOffsetKey,
    ProducerIdBlockKey,
    ProducerIdBlockValue,
    TopicPartitions,
    TransactionKey,
    TransactionValue,
    TxnPartitions,
)
from kcsim.server.acl.records import AclKey, AclValue
from kcsim.server.durability import RECORD_TYPES
from kcsim.server.state.config_records import BrokerConfigKey, BrokerConfigValue
from kcsim.server.state.scram_credentials import ScramCredentialKey, ScramCredentialValue
from kcsim.server.state.topic_records import TopicKey, TopicValue
from kcsim.storage import Record, RecordLog
from kcsim.storage.segment import segment_name
from tests.coordinator.test_streams_records import CASES as STREAMS_CASES

TOPIC_ID = bytes(range(16))
STAMP = 1_700_000_000_000


def one_of_each_type() -> list[Record]:
    """Two offset commits (one batch frame), a record of every other type, two tombstones."""
    tps = [TopicPartitions(TOPIC_ID, [0, 1, 2])]
    return [
        Record(OffsetCommitKey("g", "t", 0), OffsetCommitValue(42, 3, "meta", STAMP, -1)),
        Record(OffsetCommitKey("g", "t", 1), OffsetCommitValue(43, -1, None, STAMP, STAMP + 1)),
        Record(GroupMetadataKey("g"), GroupMetadataValue(
            "consumer", 5, "range", "m-1", STAMP,
            [GroupMemberValue("m-1", "i-1", "client", "/127.0.0.1", 30000, 10000, "consumer",
                              [("range", b"\x00\x01sub")], b"\x00assign")])),
        Record(TopicKey("t"), TopicValue(TOPIC_ID, 3, {"cleanup.policy": "compact"})),
        Record(PausedTopicPartitionsKey("g"), PausedTopicPartitionsValue(
            [PausedTopic(TOPIC_ID, "t", [0, 2])])),
        Record(ConsumerGroupMetadataKey("c"), ConsumerGroupMetadataValue(7, 123456789)),
        Record(ConsumerGroupMemberKey("c", "m"), ConsumerGroupMemberValue(
            "inst", "rack", "client", "/10.0.0.1", ["t", "u"], None, "uniform", 45000)),
        Record(ConsumerGroupTargetAssignmentMetadataKey("c"),
               ConsumerGroupTargetAssignmentMetadataValue(7)),
        Record(ConsumerGroupTargetAssignmentMemberKey("c", "m"),
               ConsumerGroupTargetAssignmentMemberValue(tps)),
        Record(ConsumerGroupCurrentMemberAssignmentKey("c", "m"),
               ConsumerGroupCurrentMemberAssignmentValue(7, 6, 0, tps, [])),
        Record(OffsetCommitKey("g", "t", 1), None),
        Record(GroupMetadataKey("g"), None),
    ]


def transaction_records() -> list[Record]:
    """The transaction coordinator's records (written after the format above was fixed)."""
    return [
        Record(PendingTxnOffsetKey("g", 1000, "t", 0), OffsetCommitValue(7, -1, "", STAMP, -1)),
        Record(TransactionKey("tx"), TransactionValue(
            1000, 3, 60000, "Ongoing", [TxnPartitions("t", [0, 2])], ["g"], STAMP, STAMP)),
        Record(ProducerIdBlockKey(), ProducerIdBlockValue(2000)),
    ]


def config_records() -> list[Record]:
    """Dynamic configs of the broker and of a group (written after the format above was fixed)."""
    return [
        Record(BrokerConfigKey(""), BrokerConfigValue({"log.retention.ms": "1000"})),
        Record(GroupConfigKey("g"), GroupConfigValue({"consumer.session.timeout.ms": "50000"})),
    ]


def acl_records() -> list[Record]:
    """An ACL: a prefixed READ on topics for alice."""
    return [Record(AclKey(2, "orders-", 4, "User:alice", "*", 3, 3), AclValue(STAMP))]


def event_records() -> list[Record]:
    """A group event: a member left its group when its session expired."""
    return [Record(GroupEventKey(7), GroupEventValue(7, STAMP, "g", "consumer", "member-left",
                                                      "session-timeout", "m1", {"epoch": 3}))]


def scram_records() -> list[Record]:
    """A SCRAM credential (written after the format above was fixed)."""
    return [Record(ScramCredentialKey("alice", 2),
                   ScramCredentialValue(b"salt", b"stored", b"server", 4096))]


def streams_records() -> list[Record]:
    """A streams group's records (KIP-1071, written after the format above was fixed)."""
    return [record for record, *_ in STREAMS_CASES]


def share_records() -> list[Record]:
    """A share group's records and its partition's written state (KIP-932)."""
    from kcsim.coordinator import records as r
    from kcsim.coordinator.share.model import ShareMember, member_records, target_records
    from kcsim.coordinator.share.partition import StateBatch, Update
    from kcsim.coordinator.share.persisted import (
        PersistedShare,
        ShareKey,
        initial_snapshot,
        record_for,
    )
    from kcsim.coordinator.share.rules import RecordState

    topic = uuid.UUID(int=7)
    key = ShareKey("g", topic.bytes, 0)
    snapshot = initial_snapshot(key, 5, 1000)
    update = record_for(key, PersistedShare(snapshot.value), Update(6, (StateBatch(6, 8, RecordState.ARCHIVED, 2),)), 1001)
    member = ShareMember("m", None, "c", "/1.2.3.4", frozenset({"t"}), 2, 1, {topic: frozenset({0})})
    return [snapshot, update, *member_records("g", member), *target_records("g", 2, {"m": member.assigned}, 9)] + [
        Record(r.ShareGroupMetadataKey("g"), r.ShareGroupMetadataValue(2, 77)),
        Record(
            r.ShareGroupStatePartitionMetadataKey("g"),
            r.ShareGroupStatePartitionMetadataValue([], [r.ShareTopicPartitionsInfo(topic.bytes, "t", [0])], []),
        ),
    ]


def write(path, records: list[Record]) -> None:
    """The first two records in one append (a batch frame), the rest one append each."""
    with RecordLog.open(path, types=RECORD_TYPES) as log:
        log.append(records[:2], timestamp_ms=STAMP)
        for record in records[2:]:
            log.append([record], timestamp_ms=STAMP + 1)
        log.sync()


# The segment write() made of one_of_each_type() when storage still declared the
# records itself: the on-disk format this log has to go on reading and writing.
WRITTEN_BEFORE = bytes.fromhex(
    "4b43534c01000000000000000000000000000000000000007f0b774900000000490000000ada7e5bc5020000"
    "0068e5cf8b010000020000000100929293a167a17400952a03a46d657461cf0000018bcfe56800ff9293a167"
    "a17401952bffc0cf0000018bcfe56800cf0000018bcfe5680176000000d23470cec50000000168e5cf8b0100"
    "0003000000020091a16796a8636f6e73756d657205a572616e6765a36d2d31cf0000018bcfe568009199a36d"
    "2d31a3692d31a6636c69656e74aa2f3132372e302e302e31cd7530cd2710a8636f6e73756d65729192a57261"
    "6e6765c4050001737562c4070061737369676e410000008d81c795c50000000168e5cf8b0100000300000003"
    "0091a17493c410000102030405060708090a0b0c0d0e0f0381ae636c65616e75702e706f6c696379a7636f6d"
    "706163742f000000c9209425c50000000168e5cf8b01000003000000040091a167919193c410000102030405"
    "060708090a0b0c0d0e0fa1749200021c00000035b36738c50000000168e5cf8b01000003000000050091a163"
    "9207ce075bcd15440000001d86216fc50000000168e5cf8b01000005000000060092a163a16d98a4696e7374"
    "a47261636ba6636c69656e74a92f31302e302e302e3192a174a175c0a7756e69666f726dcdafc8170000001f"
    "ff5ca6c50000000168e5cf8b01000003000000070091a163910730000000686c69c2c50000000168e5cf8b01"
    "000005000000080092a163a16d919192c410000102030405060708090a0b0c0d0e0f93000102340000001e9f"
    "ab41c50000000168e5cf8b01000005000000090092a163a16d950706009192c410000102030405060708090a"
    "0b0c0d0e0f930001029018000000bd100b66c50100000168e5cf8b01000006000000010093a167a174011500"
    "0000eb1b1404c50100000168e5cf8b01000003000000020091a167"
)


def test_every_record_type_is_declared_at_its_stable_id():
    assert [(t.id, t.name, t.version) for t in sorted(RECORD_TYPES, key=lambda t: t.id)] == [
        (1, "offset_commit", 0),
        (2, "group_metadata", 0),
        (3, "topic", 0),
        (4, "paused_topic_partitions", 0),
        (5, "consumer_group_metadata", 0),
        (6, "consumer_group_member", 0),
        (7, "consumer_group_target_assignment_metadata", 0),
        (8, "consumer_group_target_assignment_member", 0),
        (9, "consumer_group_current_member_assignment", 0),
        (10, "pending_txn_offset", 0),
        (11, "transaction", 0),
        (12, "producer_id_block", 0),
        (20, "broker_config", 0),
        (21, "group_config", 0),
        (22, "streams_group_metadata", 0),
        (23, "streams_group_topology", 0),
        (24, "streams_group_member", 0),
        (25, "streams_group_target_assignment_metadata", 0),
        (26, "streams_group_target_assignment_member", 0),
        (27, "streams_group_current_member_assignment", 0),
        (30, "share_snapshot", 0),
        (31, "share_update", 0),
        (32, "share_group_metadata", 0),
        (33, "share_group_member", 0),
        (34, "share_group_target_assignment_metadata", 0),
        (35, "share_group_target_assignment_member", 0),
        (36, "share_group_current_member_assignment", 0),
        (37, "share_group_state_partition_metadata", 0),
        (40, "scram_credential", 0),
        (41, "acl", 0),
        (50, "group_event", 0),
    ]
    records = one_of_each_type() + transaction_records() + config_records() + streams_records()
    records += scram_records() + acl_records() + share_records() + event_records()
    assert {RECORD_TYPES.of(r).name for r in records} == {t.name for t in RECORD_TYPES}


def test_every_record_type_and_its_tombstone_round_trips(tmp_path):
    records = one_of_each_type() + transaction_records() + config_records() + streams_records()
    records += scram_records() + acl_records() + share_records() + event_records()
    records += [Record(r.key, None) for r in records]
    with RecordLog.open(tmp_path, types=RECORD_TYPES) as log:
        for record in records:
            log.append([record])
        log.sync()
    with RecordLog.open(tmp_path, types=RECORD_TYPES) as log:
        assert list(log.replay()) == records


# The same since the target epoch record carries when its target was computed (Kafka
# 4.3+'s assignment interval): that frame's value is [7, 0] where it was [7].
WRITTEN_NOW = WRITTEN_BEFORE.replace(
    bytes.fromhex("170000001fff5ca6c50000000168e5cf8b01000003000000070091a1639107"),
    bytes.fromhex("180000009634b8f6c50000000168e5cf8b01000003000000070091a163920700"))


def test_records_are_written_byte_for_byte_as_before(tmp_path):
    write(tmp_path, one_of_each_type())
    assert (tmp_path / segment_name(0)).read_bytes() == WRITTEN_NOW


def test_a_log_written_before_replays(tmp_path):
    (tmp_path / segment_name(0)).write_bytes(WRITTEN_BEFORE)
    with RecordLog.open(tmp_path, types=RECORD_TYPES) as log:
        assert list(log.replay()) == one_of_each_type()
