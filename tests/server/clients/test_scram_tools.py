"""Kafka's own kafka-configs (kafka-tools 4.4) manages SCRAM users against kcsim as against
Kafka: `--alter --add-config 'SCRAM-SHA-512=[password=...]' --entity-type users` (through
AlterUserScramCredentials, with a salted password the tool computes) and `--delete-config`,
here over SASL_SSL as a SCRAM admin with `--command-config`. (Its `--describe` of users
also asks for client quotas, DescribeClientQuotas, which kcsim does not serve.)"""

from __future__ import annotations

from types import SimpleNamespace

from kcsim.protocol.errors import ErrorCode
from tests.oracle.toolcommand import tool

from ..test_sasl import _scram_login

CONFIG_COMMAND = "org.apache.kafka.tools.ConfigCommand"
SASL_SSL = {"listeners": "SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"}


def test_kafka_configs_adds_describes_and_deletes_scram_users(kcsim_embedded_factory,
                                                               tmp_path):
    srv = kcsim_embedded_factory(**SASL_SSL)
    srv.add_user("admin", "admin-secret")
    host, port = srv.bootstrap_of("SASL_SSL").rsplit(":", 1)
    broker = SimpleNamespace(host=host, port=int(port))  # all `tool` reads of a broker
    config = tmp_path / "admin.properties"
    config.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="admin" password="admin-secret";\n'
        f"ssl.truststore.type=PEM\nssl.truststore.location={srv.ssl_ca_file}\n")

    def configs(*args: str):
        return tool(broker, CONFIG_COMMAND, "--command-config", str(config), *args,
                    "--entity-type", "users", cwd=tmp_path)

    added = configs("--alter", "--add-config",
                    "SCRAM-SHA-512=[iterations=8192,password=orders-secret]",
                    "--entity-name", "orders")
    assert added.code == 0, added
    assert added.out == ("Completed updating config for user orders.",)
    assert _scram_login(srv, "orders", "orders-secret") == 0
    assert srv.users() == {"admin": ["SCRAM-SHA-512"], "orders": ["SCRAM-SHA-512"]}
    deleted = configs("--alter", "--delete-config", "SCRAM-SHA-512", "--entity-name", "orders")
    assert deleted.code == 0, deleted
    assert _scram_login(srv, "orders", "orders-secret") == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert srv.users() == {"admin": ["SCRAM-SHA-512"]}
