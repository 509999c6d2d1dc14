"""ACLs on the wire: CreateAcls, DescribeAcls and DeleteAcls with Kafka's answers, and what
each API answers a principal the ACLs do not allow (per topic, per group, or as a whole),
over a SASL/PLAIN listener so that each connection has its principal."""

from __future__ import annotations

import socket
import struct

import pytest

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode as E

from .fuzz.batches import batch as record_batch
from .rawkafka import decode_response, request_frame
from .saslkit import plain_token
from .test_tls import _read

USERS = "admin:admin-secret,alice:alice-secret"
SECURED = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl_plain_users": USERS,
           "authorizer": "standard", "super_users": "User:admin"}
(PRODUCE, METADATA, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, DESCRIBE_GROUPS,
 LIST_GROUPS, CREATE_TOPICS, INIT_PRODUCER_ID, DESCRIBE_ACLS, CREATE_ACLS,
 DELETE_ACLS) = 0, 3, 8, 9, 10, 15, 16, 19, 22, 29, 30, 31
TOPIC, GROUP, CLUSTER, TXN = 2, 3, 4, 5
LITERAL, PREFIXED, ANY, MATCH = 3, 4, 1, 2
READ, WRITE, DESCRIBE, ALL = 3, 4, 8, 2
DENY, ALLOW = 2, 3


class Session:
    """A connection authenticated as one user."""

    def __init__(self, srv, user: str) -> None:
        host, port = srv.bootstrap_of("SASL_PLAINTEXT").rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        assert self.call(17, 1, mechanism="PLAIN").error_code == 0
        token = plain_token(user, f"{user}-secret")
        assert self.call(36, 2, auth_bytes=token).error_code == 0

    def call(self, api_key: int, version: int, **fields):
        self.sock.sendall(request_frame(api_key, version, 1, request_class(api_key)(**fields)))
        (size,) = struct.unpack(">i", _read(self.sock, 4))
        return decode_response(api_key, version, _read(self.sock, size))[1]

    def create_acls(self, *acls: tuple, version: int = 3):
        kind = request_class(CREATE_ACLS).AclCreation
        return self.call(CREATE_ACLS, version, creations=[
            kind(resource_type=t, resource_name=n, resource_pattern_type=p, principal=who,
                 host="*", operation=op, permission_type=perm)
            for t, n, p, who, op, perm in acls])

    def describe_acls(self, resource_type: int = ANY, name: str | None = None,
                      pattern: int = ANY, principal: str | None = None):
        return self.call(DESCRIBE_ACLS, 3, resource_type_filter=resource_type,
                         resource_name_filter=name, pattern_type_filter=pattern,
                         principal_filter=principal, host_filter=None, operation=1,
                         permission_type=1)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def secured(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**SECURED)
    admin = Session(srv, "admin")
    alice = Session(srv, "alice")
    yield srv, admin, alice
    admin.close()
    alice.close()


def _topics(session: Session, *names: str):
    request = request_class(CREATE_TOPICS)
    return session.call(CREATE_TOPICS, 7, timeout_ms=1000, topics=[
        request.CreatableTopic(name=n, num_partitions=1, replication_factor=-1) for n in names])


def _metadata(session: Session, names=None):
    topic = request_class(METADATA).MetadataRequestTopic
    wanted = None if names is None else [topic(name=n) for n in names]
    answer = session.call(METADATA, 12, topics=wanted, allow_auto_topic_creation=False)
    return {t.name: t.error_code for t in answer.topics}


def test_acls_are_created_described_and_deleted_with_kafkas_answers(secured):
    _srv, admin, alice = secured
    created = admin.create_acls(
        (TOPIC, "orders-", PREFIXED, "User:alice", READ, ALLOW),
        (TOPIC, "orders-", PREFIXED, "User:alice", READ, ALLOW),  # twice: made once
        (GROUP, "g", LITERAL, "User:alice", READ, ALLOW),
        (CLUSTER, "other", LITERAL, "User:alice", DESCRIBE, ALLOW),
        (TOPIC, "x", LITERAL, "alice", READ, ALLOW),
        (TOPIC, "x", MATCH, "User:alice", READ, ALLOW))
    assert [(r.error_code, r.error_message) for r in created.results] == [
        (0, None), (0, None), (0, None),
        (E.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster"),
        (E.INVALID_REQUEST, "Could not parse principal from `alice` (no colon is present "
                            "separating the principal type from the principal name)"),
        (E.INVALID_REQUEST, "Invalid patternType MATCH")]
    described = admin.describe_acls()
    assert described.error_code == 0
    assert [(r.resource_type, r.resource_name, r.pattern_type,
             [(a.principal, a.host, a.operation, a.permission_type) for a in r.acls])
            for r in described.resources] == [
        (TOPIC, "orders-", PREFIXED, [("User:alice", "*", READ, ALLOW)]),
        (GROUP, "g", LITERAL, [("User:alice", "*", READ, ALLOW)])]
    matching = admin.describe_acls(TOPIC, "orders-eu", MATCH)
    assert [r.resource_name for r in matching.resources] == ["orders-"]
    # Alice may neither describe nor change them: it takes the cluster's DESCRIBE / ALTER.
    assert alice.describe_acls().error_code == E.CLUSTER_AUTHORIZATION_FAILED
    assert alice.create_acls((TOPIC, "t", LITERAL, "User:alice", ALL, ALLOW)).results[0] \
        .error_code == E.CLUSTER_AUTHORIZATION_FAILED
    deleted = admin.call(DELETE_ACLS, 3, filters=[request_class(DELETE_ACLS).DeleteAclsFilter(
        resource_type_filter=ANY, resource_name_filter=None, pattern_type_filter=ANY,
        principal_filter="User:alice", host_filter=None, operation=READ, permission_type=1)])
    assert [(m.resource_type, m.resource_name)
            for m in deleted.filter_results[0].matching_acls] == [(TOPIC, "orders-"), (GROUP, "g")]
    assert admin.describe_acls().resources == []


def test_without_an_authorizer_acl_apis_answer_security_disabled(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(listeners="SASL_PLAINTEXT://127.0.0.1:0",
                                 sasl_plain_users=USERS)
    admin = Session(srv, "admin")
    assert admin.describe_acls().error_code == E.SECURITY_DISABLED
    created = admin.create_acls((TOPIC, "t", LITERAL, "User:alice", READ, ALLOW))
    assert created.results[0].error_code == E.SECURITY_DISABLED
    admin.close()


def test_metadata_hides_topics_not_described_and_refuses_those_named(secured):
    _srv, admin, alice = secured
    _topics(admin, "orders-eu", "payments")
    admin.create_acls((TOPIC, "orders-", PREFIXED, "User:alice", WRITE, ALLOW))
    assert _metadata(alice) == {"orders-eu": 0}  # WRITE implies DESCRIBE
    assert _metadata(alice, ["orders-eu", "payments", "nowhere"]) == {
        "orders-eu": 0, "payments": E.TOPIC_AUTHORIZATION_FAILED,
        "nowhere": E.TOPIC_AUTHORIZATION_FAILED}
    assert _metadata(admin) == {"orders-eu": 0, "payments": 0, "__consumer_offsets": 0}


def test_produce_is_answered_per_topic(secured):
    srv, admin, alice = secured
    _topics(admin, "orders-eu", "payments")
    admin.create_acls((TOPIC, "orders-", PREFIXED, "User:alice", WRITE, ALLOW))
    request = request_class(PRODUCE)
    batch = record_batch([b"v"])
    answer = alice.call(PRODUCE, 9, transactional_id=None, acks=-1, timeout_ms=1000,
                        topic_data=[request.TopicProduceData(name=n, partition_data=[
                            request.PartitionProduceData(index=0, records=batch)])
                            for n in ("payments", "orders-eu")])
    assert {t.name: t.partition_responses[0].error_code for t in answer.responses} == {
        "payments": E.TOPIC_AUTHORIZATION_FAILED, "orders-eu": 0}
    assert srv.run_sync(lambda: srv.server.broker.topics.get("payments").partitions[0]
                        .log_end_offset) == 0


def test_group_and_transactional_id_rights(secured):
    _srv, admin, alice = secured
    _topics(admin, "orders")
    admin.create_acls((TOPIC, "orders", LITERAL, "User:alice", READ, ALLOW),
                      (GROUP, "allowed", LITERAL, "User:alice", READ, ALLOW))
    commit = request_class(OFFSET_COMMIT)

    def offset_commit(group: str, topic: str = "orders"):
        return alice.call(OFFSET_COMMIT, 8, group_id=group, generation_id_or_member_epoch=-1,
                          member_id="", group_instance_id=None, topics=[
                              commit.OffsetCommitRequestTopic(name=topic, partitions=[
                                  commit.OffsetCommitRequestPartition(
                                      partition_index=0, committed_offset=0)])])
    refused = offset_commit("g")
    assert refused.topics[0].partitions[0].error_code == E.GROUP_AUTHORIZATION_FAILED
    assert offset_commit("allowed").topics[0].partitions[0].error_code == 0
    unreadable = offset_commit("allowed", "elsewhere")
    assert unreadable.topics[0].partitions[0].error_code == E.TOPIC_AUTHORIZATION_FAILED
    # The groups alice may not describe are not listed, nor described.
    admin.call(OFFSET_COMMIT, 8, group_id="hidden", generation_id_or_member_epoch=-1,
               member_id="", group_instance_id=None, topics=[])
    listed = alice.call(LIST_GROUPS, 4, states_filter=[])
    assert [g.group_id for g in listed.groups] == ["allowed"]
    described = alice.call(DESCRIBE_GROUPS, 5, groups=["allowed", "hidden"],
                           include_authorized_operations=True)
    assert [(g.group_id, g.error_code) for g in described.groups] == [
        ("allowed", 0), ("hidden", E.GROUP_AUTHORIZATION_FAILED)]
    assert described.groups[0].authorized_operations == 1 << READ | 1 << DESCRIBE
    found = alice.call(FIND_COORDINATOR, 3, key="hidden", key_type=0)
    assert found.error_code == E.GROUP_AUTHORIZATION_FAILED
    # A transactional id needs WRITE on it; an idempotent producer WRITE on some topic.
    txn = alice.call(INIT_PRODUCER_ID, 4, transactional_id="tx", transaction_timeout_ms=60000,
                     producer_id=-1, producer_epoch=-1)
    assert txn.error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    idempotent = alice.call(INIT_PRODUCER_ID, 4, transactional_id=None,
                            transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1)
    assert idempotent.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    admin.create_acls((TXN, "tx", LITERAL, "User:alice", WRITE, ALLOW),
                      (TOPIC, "orders", LITERAL, "User:alice", WRITE, ALLOW))
    for tid in ("tx", None):
        assert alice.call(INIT_PRODUCER_ID, 4, transactional_id=tid,
                          transaction_timeout_ms=60000, producer_id=-1,
                          producer_epoch=-1).error_code == 0


def test_acls_outlive_a_restart_and_deny_beats_allow(kcsim_embedded_factory, tmp_path):
    srv = kcsim_embedded_factory(**SECURED, data_dir=str(tmp_path / "data"), in_memory=False)
    admin = Session(srv, "admin")
    _topics(admin, "orders")
    admin.create_acls((TOPIC, "*", LITERAL, "User:*", ALL, ALLOW),
                      (TOPIC, "ord", PREFIXED, "User:alice", READ, DENY))
    admin.close()
    srv.restart()
    alice = Session(srv, "alice")
    # DESCRIBE, from ALL: the DENY of READ does not refuse it; READ is refused.
    assert _metadata(alice, ["orders"]) == {"orders": 0}
    fetch = request_class(1)
    fetched = alice.call(1, 12, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20,
                         isolation_level=0, session_id=0, session_epoch=-1, topics=[
                             fetch.FetchTopic(topic="orders", partitions=[fetch.FetchPartition(
                                 partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])],
                         forgotten_topics_data=[], rack_id="")
    assert fetched.responses[0].partitions[0].error_code == E.TOPIC_AUTHORIZATION_FAILED
    fetch = request_class(OFFSET_FETCH)
    answer = alice.call(OFFSET_FETCH, 7, group_id="g", require_stable=False,
                        topics=[fetch.OffsetFetchRequestTopic(name="orders",
                                                              partition_indexes=[0])])
    assert answer.error_code == E.GROUP_AUTHORIZATION_FAILED  # no ACL on the group
    assert len(srv.acls.list()) == 2
    alice.close()


def test_acls_from_the_test_controls(secured):
    srv, admin, alice = secured
    _topics(admin, "orders")
    assert _metadata(alice) == {}
    assert srv.acls.add("TOPIC", "orders", "User:alice", "describe") == {
        "resource_type": "TOPIC", "name": "orders", "pattern_type": "LITERAL",
        "principal": "User:alice", "host": "*", "operation": "DESCRIBE", "permission": "ALLOW"}
    assert _metadata(alice) == {"orders": 0}
    assert [(r.resource_name, r.acls[0].operation) for r in admin.describe_acls().resources] \
        == [("orders", DESCRIBE)]
    assert srv.acls.remove("TOPIC", "orders", "User:alice", "DESCRIBE")
    assert not srv.acls.remove("TOPIC", "orders", "User:alice", "DESCRIBE")
    assert _metadata(alice) == {}
    with pytest.raises(ValueError, match="operation: expected one of"):
        srv.acls.add("TOPIC", "orders", "User:alice", "peek")


def test_every_api_kcsim_serves_says_what_it_needs():
    from kcsim.server.requests.access import ACCESS
    from kcsim.server.requests.routes import load_handlers

    needs_nothing = {17, 18, 36}  # SaslHandshake, ApiVersions, SaslAuthenticate
    assert set(load_handlers()) - needs_nothing == set(ACCESS)


def test_share_group_offsets_need_rights_on_the_group_and_its_topics(secured):
    """DescribeShareGroupOffsets needs DESCRIBE on each group (and its topics),
    AlterShareGroupOffsets READ on the group, DeleteShareGroupOffsets DELETE."""
    _srv, admin, alice = secured
    _topics(admin, "jobs")
    admin.create_acls((GROUP, "seen", LITERAL, "User:alice", DESCRIBE, ALLOW))
    describe = request_class(90)
    asked = alice.call(90, 1, groups=[
        describe.DescribeShareGroupOffsetsRequestGroup(group_id=g, topics=[
            describe.DescribeShareGroupOffsetsRequestTopic(topic_name="jobs", partitions=[0])])
        for g in ("seen", "hidden")])
    seen, hidden = asked.groups
    assert hidden.error_code == E.GROUP_AUTHORIZATION_FAILED
    # "seen" is no share group; with rights on it, that is what alice learns
    assert seen.error_code == E.GROUP_ID_NOT_FOUND
    alter = request_class(91)
    assert alice.call(91, 0, group_id="seen", topics=[
        alter.AlterShareGroupOffsetsRequestTopic(topic_name="jobs", partitions=[
            alter.AlterShareGroupOffsetsRequestPartition(partition_index=0, start_offset=0)])
    ]).error_code == E.GROUP_AUTHORIZATION_FAILED
    assert alice.call(92, 0, group_id="seen", topics=[]).error_code == (
        E.GROUP_AUTHORIZATION_FAILED)
