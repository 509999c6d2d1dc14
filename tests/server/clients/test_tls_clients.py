"""Real clients over SSL: confluent-kafka, kafka-python and the Java client (3.9 and 4.x)
trust the CA kcsim made, produce, consume in a group and commit; with a client certificate from the
same CA their requests carry its principal."""

from __future__ import annotations

import json
import uuid

import pytest

from . import javaclient
from .roundtrip import MESSAGES
from .roundtrip import confluent_round_trip as _confluent_round_trip

pytestmark = pytest.mark.kcsim(initial_rebalance_delay_ms=0)


def _confluent_ssl(srv, cert=None) -> dict[str, str]:
    settings = {"bootstrap.servers": srv.bootstrap, "security.protocol": "SSL",
                "ssl.ca.location": srv.ssl_ca_file}
    if cert is not None:
        settings |= {"ssl.certificate.location": cert.cert_file,
                     "ssl.key.location": cert.key_file}
    return settings


def test_confluent_kafka_over_ssl(kcsim_ssl):
    assert _confluent_round_trip(_confluent_ssl(kcsim_ssl), "tls-ck", "tls-ck-group") == MESSAGES
    assert kcsim_ssl.committed("tls-ck-group") == {("tls-ck", 0): MESSAGES}
    assert {r.principal for r in kcsim_ssl.requests()} == {"User:ANONYMOUS"}


def test_confluent_kafka_with_a_client_certificate(kcsim_ssl):
    cert = kcsim_ssl.issue_client_cert("orders-app", "test")
    settings = _confluent_ssl(kcsim_ssl, cert)
    assert _confluent_round_trip(settings, "tls-mtls", "tls-mtls-group") == MESSAGES
    commits = kcsim_ssl.requests("OffsetCommit", group="tls-mtls-group")
    assert commits and {r.principal for r in commits} == {"User:CN=orders-app,O=test"}
    assert {r.principal for r in kcsim_ssl.requests()} == {"User:CN=orders-app,O=test"}


def test_kafka_python_over_ssl(kcsim_ssl):
    kafka = pytest.importorskip("kafka")
    cert = kcsim_ssl.issue_client_cert("kp")
    ssl_settings = {"bootstrap_servers": kcsim_ssl.bootstrap, "security_protocol": "SSL",
                    "ssl_cafile": kcsim_ssl.ssl_ca_file, "ssl_certfile": cert.cert_file,
                    "ssl_keyfile": cert.key_file}
    producer = kafka.KafkaProducer(**ssl_settings)
    for i in range(MESSAGES):
        producer.send("tls-kp", f"v{i}".encode())
    producer.flush(30)
    producer.close()
    consumer = kafka.KafkaConsumer("tls-kp", group_id="tls-kp-group",
                                   auto_offset_reset="earliest", enable_auto_commit=False,
                                   consumer_timeout_ms=20000, **ssl_settings)
    seen = 0
    for _ in consumer:
        seen += 1
        if seen == MESSAGES:
            break
    consumer.commit()
    consumer.close()
    assert seen == MESSAGES
    assert kcsim_ssl.committed("tls-kp-group") == {("tls-kp", 0): MESSAGES}
    assert {r.principal for r in kcsim_ssl.requests("OffsetCommit")} == {"User:CN=kp"}


@pytest.mark.parametrize("version", javaclient.CLIENT_VERSIONS,
                         ids=[f"kafka-clients-{v}" for v in javaclient.CLIENT_VERSIONS])
@pytest.mark.parametrize("mutual", [False, True], ids=["server-auth", "mutual-tls"])
def test_java_client_over_ssl(kcsim_ssl, tmp_path, mutual, version):
    javaclient.skip_without_java()
    lines = ["security.protocol=SSL", "ssl.truststore.type=PEM",
             f"ssl.truststore.location={kcsim_ssl.ssl_ca_file}"]
    principal = "User:ANONYMOUS"
    if mutual:
        cert = kcsim_ssl.issue_client_cert("java-app", "test")
        keystore = tmp_path / "client-keystore.pem"
        with open(cert.key_file) as key, open(cert.cert_file) as chain:
            keystore.write_text(key.read() + chain.read())
        lines += ["ssl.keystore.type=PEM", f"ssl.keystore.location={keystore}"]
        principal = cert.principal
    properties = tmp_path / "client.properties"
    properties.write_text("\n".join(lines) + "\n")
    topic, group = f"tls-java-{uuid.uuid4().hex[:6]}", "tls-java-group"
    proc = javaclient.run("SecureClient", kcsim_ssl.bootstrap, str(properties), topic, group,
                          str(MESSAGES), timeout=120, version=version)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert steps[-1] == {"step": "consume", "seen": MESSAGES, "committed": MESSAGES}
    assert kcsim_ssl.committed(group) == {(topic, 0): MESSAGES}
    assert {r.principal for r in kcsim_ssl.requests("OffsetCommit", group=group)} == {principal}
