"""ACLs with real clients over SASL_PLAINTEXT: confluent-kafka and the Java client 4.x, as a
user whom a super user grants rights through the Admin API (CreateAcls). A consumer without
READ on its group is refused, then consumes once it has it; a producer without WRITE on its
topic, and a transactional one without WRITE on its transactional id, are refused; a
prefixed ACL grants a family of topics; a DENY beats an ALLOW."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from . import javaclient
from .roundtrip import MESSAGES

SECURED = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0",
           "sasl_plain_users": "admin:admin-secret,alice:alice-secret",
           "authorizer": "standard", "super_users": "User:admin",
           "initial_rebalance_delay_ms": 0}
TOPICS = ("orders", "family-a", "family-b", "elsewhere")


def _settings(srv, user: str) -> dict[str, str]:
    return {"bootstrap.servers": srv.bootstrap_of("SASL_PLAINTEXT"),
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.username": user, "sasl.password": f"{user}-secret"}


@pytest.fixture
def secured(kcsim_embedded_factory):
    """The broker, its topics, MESSAGES in `orders`, and what alice starts with: READ on
    `orders` (not its group) and WRITE on `elsewhere` (so that she may be idempotent)."""
    srv = kcsim_embedded_factory(**SECURED)
    admin = AdminClient(_settings(srv, "admin"))
    for future in admin.create_topics([NewTopic(t, 1) for t in TOPICS]).values():
        future.result(timeout=30)
    producer = Producer(_settings(srv, "admin"))
    for i in range(MESSAGES):
        producer.produce("orders", f"v{i}".encode())
    assert producer.flush(30) == 0
    srv.acls.add("TOPIC", "orders", "User:alice", "READ")
    srv.acls.add("TOPIC", "elsewhere", "User:alice", "WRITE")
    return srv, admin


def _grant(admin: AdminClient, kind: ResourceType, name: str, operation: AclOperation,
           pattern: ResourcePatternType = ResourcePatternType.LITERAL,
           permission: AclPermissionType = AclPermissionType.ALLOW) -> None:
    binding = AclBinding(kind, name, pattern, "User:alice", "*", operation, permission)
    for future in admin.create_acls([binding]).values():
        assert future.result(timeout=30) is None


def _consume(srv, group: str) -> int | KafkaError:
    """What alice's consumer in `group` reads of `orders` (committing it), or its error."""
    consumer = Consumer({**_settings(srv, "alice"), "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe(["orders"])
        seen = 0
        for _ in range(200):
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error() is not None:
                return msg.error()
            seen += 1
            if seen == MESSAGES:
                consumer.commit(asynchronous=False)
                return seen
        return seen
    finally:
        consumer.close()


def _produce(srv, topic: str) -> KafkaError | None:
    """The delivery report of one message alice's (new) producer sends to `topic`."""
    reports: list[KafkaError | None] = []
    producer = Producer({**_settings(srv, "alice"), "message.timeout.ms": 10000})
    try:
        producer.produce(topic, b"v", on_delivery=lambda err, msg: reports.append(err))
    except KafkaException as exc:
        return exc.args[0]
    producer.flush(30)
    return reports[0]


def _code(outcome: KafkaError | None) -> int | None:
    return None if outcome is None else outcome.code()


def test_confluent_kafka(secured):
    srv, admin = secured
    refused = _consume(srv, "orders-app")
    assert isinstance(refused, KafkaError)
    assert refused.code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    _grant(admin, ResourceType.GROUP, "orders-app", AclOperation.READ)
    assert _consume(srv, "orders-app") == MESSAGES
    assert srv.committed("orders-app") == {("orders", 0): MESSAGES}

    assert _code(_produce(srv, "orders")) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    transactional = Producer({**_settings(srv, "alice"), "transactional.id": "acl-txn"})
    with pytest.raises(KafkaException) as raised:
        transactional.init_transactions(30)
    assert raised.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED

    _grant(admin, ResourceType.TOPIC, "family-", AclOperation.WRITE,
           ResourcePatternType.PREFIXED)
    assert _produce(srv, "family-a") is None
    assert _produce(srv, "family-b") is None
    _grant(admin, ResourceType.TOPIC, "family-b", AclOperation.WRITE,
           permission=AclPermissionType.DENY)
    assert _code(_produce(srv, "family-b")) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert _produce(srv, "family-a") is None


def test_java_client_4x(secured, tmp_path):
    javaclient.skip_without_java()
    srv, _ = secured
    files = []
    for user in ("admin", "alice"):
        properties = tmp_path / f"{user}.properties"
        properties.write_text(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="{user}" password="{user}-secret";\n')
        files.append(str(properties))
    proc = javaclient.run("AclScenario", srv.bootstrap_of("SASL_PLAINTEXT"), *files, "alice",
                          "orders", "java-orders-app", str(MESSAGES), timeout=240,
                          version=javaclient.MAVEN_CLIENT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [(s["step"], s["outcome"]) for s in steps] == [
        ("consume-without-group-read", "GroupAuthorizationException"),
        ("grant ALLOW READ GROUP java-orders-app", "ok"),
        ("consume-with-group-read", "ok"),
        ("produce-without-write", "TopicAuthorizationException"),
        ("transactional-without-write-on-id", "TransactionalIdAuthorizationException"),
        ("grant ALLOW WRITE TOPIC family-", "ok"),
        ("produce-prefixed-a", "ok"),
        ("produce-prefixed-b", "ok"),
        ("grant DENY WRITE TOPIC family-b", "ok"),
        ("produce-denied-b", "TopicAuthorizationException"),
        ("produce-still-a", "ok"),
    ], proc.stderr
    assert srv.committed("java-orders-app") == {("orders", 0): MESSAGES}


def test_acls_through_the_http_control_api(kcsim_factory):
    """`kcsim serve --authorizer standard`: a PLAINTEXT client (User:ANONYMOUS) may produce
    once an ACL added with POST /acls lets it, and no longer once DELETE /acls removed it."""
    from .test_control_http import HttpFailed, start

    bootstrap, control = start(kcsim_factory, authorizer="standard")
    grant = {"resource_type": "TOPIC", "name": "open-", "pattern_type": "PREFIXED",
             "principal": "User:ANONYMOUS", "operation": "ALL"}

    def produce() -> int | None:
        reports: list[KafkaError | None] = []
        producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 10000,
                             "enable.idempotence": False})
        producer.produce("open-orders", b"v", on_delivery=lambda err, msg: reports.append(err))
        producer.flush(30)
        return _code(reports[0])

    assert produce() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert control("POST", "/acls", grant) == {**grant, "host": "*", "permission": "ALLOW"}
    assert control("GET", "/acls") == {"acls": [{**grant, "host": "*", "permission": "ALLOW"}]}
    assert produce() is None
    assert control("DELETE", "/acls", grant) == {"removed": True}
    assert produce() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    with pytest.raises(HttpFailed) as refused:
        control("POST", "/acls", {**grant, "operation": "peek"})
    assert refused.value.status == 400 and "operation" in str(refused.value.body)
