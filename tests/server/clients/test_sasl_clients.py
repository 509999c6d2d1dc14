"""Real clients over SASL: kafka-python, confluent-kafka and the Java client 4.x authenticate with PLAIN over
SASL_PLAINTEXT and with SCRAM-SHA-512 over SASL_PLAINTEXT and SASL_SSL (the SCRAM user made
through their own admin clients, AlterUserScramCredentials), produce, consume in a group and
commit; the broker's request log names the user each request came from."""

from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from . import javaclient
from .roundtrip import MESSAGES
from .roundtrip import confluent_round_trip as _confluent_round_trip

pytestmark = pytest.mark.kcsim(initial_rebalance_delay_ms=0)


def _confluent(srv, listener: str, mechanism: str, user: str, password: str) -> dict[str, str]:
    settings = {"bootstrap.servers": srv.bootstrap_of(listener), "security.protocol": listener,
                "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password}
    if listener == "SASL_SSL":
        settings["ssl.ca.location"] = srv.ssl_ca_file
    return settings


def _confluent_scram_user(srv, user: str, password: str) -> None:
    admin = AdminClient({"bootstrap.servers": srv.bootstrap_of("PLAINTEXT")})
    upsert = UserScramCredentialUpsertion(
        user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), password.encode())
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(timeout=30)


def _principals_of(srv, group: str) -> set[str]:
    commits = srv.requests("OffsetCommit", group=group)
    assert commits
    return {r.principal for r in commits}


def test_confluent_kafka_with_plain_over_sasl_plaintext(kcsim_sasl):
    settings = _confluent(kcsim_sasl, "SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret")
    assert _confluent_round_trip(settings, "sasl-ck-plain", "ck-plain") == MESSAGES
    assert _principals_of(kcsim_sasl, "ck-plain") == {"User:alice"}


@pytest.mark.parametrize("listener", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_confluent_kafka_with_scram_sha_512(kcsim_sasl, listener):
    _confluent_scram_user(kcsim_sasl, "carol", "carol-secret")
    settings = _confluent(kcsim_sasl, listener, "SCRAM-SHA-512", "carol", "carol-secret")
    group = f"ck-scram-{listener}"
    assert _confluent_round_trip(settings, f"sasl-ck-{listener}", group) == MESSAGES
    assert _principals_of(kcsim_sasl, group) == {"User:carol"}


def test_confluent_kafka_with_a_wrong_password_is_told_so(kcsim_sasl):
    errors = []
    settings = _confluent(kcsim_sasl, "SASL_PLAINTEXT", "PLAIN", "alice", "wrong")
    producer = Producer({**settings, "error_cb": errors.append})
    for _ in range(100):
        producer.poll(0.1)
        if errors:
            break
    assert errors, "no error reported"
    assert errors[0].code() == KafkaError._AUTHENTICATION
    assert "Authentication failed: Invalid username or password" in errors[0].str()


def _kafka_python(srv, listener: str, mechanism: str, user: str, password: str):
    settings = {"bootstrap_servers": srv.bootstrap_of(listener), "security_protocol": listener,
                "sasl_mechanism": mechanism, "sasl_plain_username": user,
                "sasl_plain_password": password}
    if listener == "SASL_SSL":
        settings["ssl_cafile"] = srv.ssl_ca_file
    return settings


def _kafka_python_round_trip(kafka, settings, topic: str, group: str) -> int:
    producer = kafka.KafkaProducer(**settings)
    for i in range(MESSAGES):
        producer.send(topic, f"v{i}".encode())
    producer.flush(30)
    producer.close()
    consumer = kafka.KafkaConsumer(topic, group_id=group, auto_offset_reset="earliest",
                                   enable_auto_commit=False, consumer_timeout_ms=20000,
                                   **settings)
    try:
        seen = 0
        for _ in consumer:
            seen += 1
            if seen == MESSAGES:
                break
        assert seen == MESSAGES
        consumer.commit()
        return int(consumer.committed(kafka.TopicPartition(topic, 0)))
    finally:
        consumer.close()


def test_kafka_python_with_plain_over_sasl_plaintext(kcsim_sasl):
    kafka = pytest.importorskip("kafka")
    settings = _kafka_python(kcsim_sasl, "SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret")
    assert _kafka_python_round_trip(kafka, settings, "sasl-kp-plain", "kp-plain") == MESSAGES
    assert _principals_of(kcsim_sasl, "kp-plain") == {"User:alice"}


@pytest.mark.parametrize("listener", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_kafka_python_with_scram_sha_512(kcsim_sasl, listener):
    kafka = pytest.importorskip("kafka")
    from kafka.admin import KafkaAdminClient, UserScramCredentialUpsertion

    admin = KafkaAdminClient(bootstrap_servers=kcsim_sasl.bootstrap_of("PLAINTEXT"))
    try:
        result = admin.alter_user_scram_credentials(
            [UserScramCredentialUpsertion("dave", "SCRAM-SHA-512", "dave-secret")])
    finally:
        admin.close()
    assert result == {"dave": None}
    settings = _kafka_python(kcsim_sasl, listener, "SCRAM-SHA-512", "dave", "dave-secret")
    group = f"kp-scram-{listener}"
    assert _kafka_python_round_trip(kafka, settings, f"sasl-kp-{listener}", group) == MESSAGES
    assert _principals_of(kcsim_sasl, group) == {"User:dave"}


@pytest.mark.parametrize(("listener", "mechanism", "user"), [
    ("SASL_PLAINTEXT", "PLAIN", "alice"), ("SASL_PLAINTEXT", "SCRAM-SHA-512", "erin"),
    ("SASL_SSL", "SCRAM-SHA-512", "erin")])
def test_java_client_4x(kcsim_sasl, tmp_path, listener, mechanism, user):
    javaclient.skip_without_java()
    password = f"{user}-secret"
    if mechanism != "PLAIN":
        _confluent_scram_user(kcsim_sasl, user, password)
    module = ("plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule")
    lines = [f"security.protocol={listener}", f"sasl.mechanism={mechanism}",
             f"sasl.jaas.config=org.apache.kafka.common.security.{module} required "
             f'username="{user}" password="{password}";']
    if listener == "SASL_SSL":
        lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={kcsim_sasl.ssl_ca_file}"]
    properties = tmp_path / "client.properties"
    properties.write_text("\n".join(lines) + "\n")
    topic, group = f"sasl-java-{uuid.uuid4().hex[:6]}", f"sasl-java-{listener}-{mechanism}"
    proc = javaclient.run("SecureClient", kcsim_sasl.bootstrap_of(listener), str(properties),
                          topic, group, str(MESSAGES), timeout=180,
                          version=javaclient.MAVEN_CLIENT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert steps[-1] == {"step": "consume", "seen": MESSAGES, "committed": MESSAGES}
    assert kcsim_sasl.committed(group) == {(topic, 0): MESSAGES}
    assert _principals_of(kcsim_sasl, group) == {f"User:{user}"}
