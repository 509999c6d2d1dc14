"""Real clients with OAUTHBEARER (unsecured JWTs) and re-authentication (KIP-368): the Java
client 4.x with Kafka's OAuthBearerUnsecuredLoginCallbackHandler and confluent-kafka with
librdkafka's unsecured JWT produce, consume in a group and commit over SASL_SSL as the
token's subject; the Java client keeps a connection across several expired sessions by
re-authenticating on it."""

from __future__ import annotations

import collections
import json
import uuid

import pytest

from . import javaclient
from .roundtrip import MESSAGES
from .roundtrip import confluent_round_trip as _confluent_round_trip

OAUTH = {"listeners": "SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,"
                      "PLAINTEXT://127.0.0.1:0",
         "sasl_enabled_mechanisms": "PLAIN,SCRAM-SHA-512,OAUTHBEARER",
         "sasl_plain_users": "alice:alice-secret", "initial_rebalance_delay_ms": 0}


def _principals_of(srv, group: str) -> set[str]:
    commits = srv.requests("OffsetCommit", group=group)
    assert commits
    return {r.principal for r in commits}


def _java(srv, tmp_path, main: str, listener: str, lines: list[str], *args: str):
    if listener == "SASL_SSL":
        lines = [*lines, "ssl.truststore.type=PEM",
                 f"ssl.truststore.location={srv.ssl_ca_file}"]
    properties = tmp_path / "client.properties"
    properties.write_text("\n".join([f"security.protocol={listener}", *lines]) + "\n")
    return javaclient.run(main, srv.bootstrap_of(listener), str(properties), *args,
                          timeout=180, class_path=javaclient.oauth_classpath())


def _json_lines(proc) -> list[dict]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


JAVA_OAUTH = ["sasl.mechanism=OAUTHBEARER",
              "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer."
              'OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="orders-app" '
              'unsecuredLoginListClaim_scope=",kafka,orders";']


def test_java_client_4x_with_oauthbearer(kcsim_embedded_factory, tmp_path):
    javaclient.skip_without_java()
    srv = kcsim_embedded_factory(**OAUTH, sasl_oauthbearer_required_scope="kafka")
    topic, group = f"oauth-java-{uuid.uuid4().hex[:6]}", "oauth-java"
    proc = _java(srv, tmp_path, "SecureClient", "SASL_SSL", JAVA_OAUTH, topic, group,
                 str(MESSAGES))
    assert _json_lines(proc)[-1] == {"step": "consume", "seen": MESSAGES,
                                     "committed": MESSAGES}
    assert _principals_of(srv, group) == {"User:orders-app"}


def test_java_client_4x_is_refused_a_scope_it_lacks(kcsim_embedded_factory, tmp_path):
    javaclient.skip_without_java()
    srv = kcsim_embedded_factory(**OAUTH, sasl_oauthbearer_required_scope="admin")
    proc = _java(srv, tmp_path, "SecureClient", "SASL_SSL", JAVA_OAUTH, "oauth-refused", "g",
                 "1")
    assert proc.returncode == 1
    assert '{\\"status\\":\\"insufficient_scope\\", \\"scope\\":\\"[admin]\\"}' in proc.stdout


def test_confluent_kafka_with_oauthbearer(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**OAUTH)
    settings = {"bootstrap.servers": srv.bootstrap_of("SASL_SSL"), "security.protocol": "SASL_SSL",
                "ssl.ca.location": srv.ssl_ca_file, "sasl.mechanism": "OAUTHBEARER",
                "enable.sasl.oauthbearer.unsecure.jwt": True,
                "sasl.oauthbearer.config": "principal=billing scope=kafka"}
    assert _confluent_round_trip(settings, "oauth-ck", "oauth-ck") == MESSAGES
    assert _principals_of(srv, "oauth-ck") == {"User:billing"}


@pytest.mark.parametrize(("mechanism", "login"), [
    ("PLAIN", 'org.apache.kafka.common.security.plain.PlainLoginModule required '
              'username="alice" password="alice-secret";'),
    ("OAUTHBEARER", JAVA_OAUTH[1].partition("=")[2])])
def test_java_client_re_authenticates_on_its_connection(kcsim_embedded_factory, tmp_path,
                                                        mechanism, login):
    javaclient.skip_without_java()
    srv = kcsim_embedded_factory(**OAUTH, connections_max_reauth_ms=2000)
    proc = _java(srv, tmp_path, "LongSession", "SASL_PLAINTEXT",
                 [f"sasl.mechanism={mechanism}", f"sasl.jaas.config={login}"],
                 f"reauth-{mechanism}", "8")
    assert _json_lines(proc)[-1]["sent"] > 20
    handshakes = collections.Counter(r.connection for r in srv.requests("SaslHandshake"))
    # Sessions of 2 s over 8 s: the producer's connection to the broker re-authenticated
    # on itself (the client does so at 85-95% of the session) instead of being closed.
    assert max(handshakes.values()) >= 3, handshakes
    produces = {r.connection for r in srv.requests("Produce")}
    assert len(produces) == 1
