"""Kafka's own tools over SASL_SSL with SCRAM-SHA-512 print the same against kcsim as against
Kafka 4.4, each serving a SASL_SSL listener with the standard authorizer: kafka-acls,
kafka-configs making and deleting a SCRAM user, kafka-topics and kafka-consumer-groups, each
run with `--command-config` holding the client's SASL_SSL settings.

One difference is expected: a request refused for want of a right on the cluster is answered
by Kafka with its internal description of the request (`Request Request(processor=...,
connectionId=..., session=...@1fff3fa9, ...) needs DESCRIBE permission.`), by kcsim without
a message, so the tool prints the client's own, `Cluster authorization failed.`

Kafka is the session's one broker, on its SASL_SSL listener (tests/oracle/secured.py). Both
brokers serve the same server certificate (one CA made with trustme) and know the same
SCRAM admin, a super user: Kafka's made at format time (`kafka-storage format --add-scram`),
kcsim's through its test controls. A user the tool makes logs in at once, on both.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.server.embedded import EmbeddedServer

from .groupcommand import MAIN as CONSUMER_GROUP_COMMAND
from .groupcommand import Ran
from .secured import ACL_COMMAND, ADMIN, ADMIN_PASSWORD, COMMANDS, SCRAM, SUPER_USERS, kafka_acls
from .toolcommand import differences, tool

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

CONFIG_COMMAND = "org.apache.kafka.tools.ConfigCommand"
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
_KAFKA_REQUEST_TEXT = re.compile(r"Request Request\(.*\) needs [A-Z_]+ permission\.")


@pytest.fixture
def key_store(kafka_broker: Any) -> tuple[Path, Path]:
    """The session Kafka's key store and CA (tests/oracle/secured.py)."""
    return kafka_broker.key_store, kafka_broker.ca_file


@pytest.fixture
def secured_kafka(kafka_broker: Any) -> SimpleNamespace:
    return SimpleNamespace(name=f"kafka {kafka_broker.version}", host=kafka_broker.host,
                           port=kafka_broker.ports["SASL_SSL"])  # all `tool` reads of a broker


@pytest.fixture
def secured_twin(key_store: tuple[Path, Path]) -> Iterator[SimpleNamespace]:
    server = EmbeddedServer(listeners="SASL_SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
                            ssl_keystore_location=str(key_store[0]),
                            sasl_enabled_mechanisms="SCRAM-SHA-512", authorizer="standard",
                            super_users=SUPER_USERS).start()
    try:
        server.add_user(ADMIN, ADMIN_PASSWORD)
        host, port = server.bootstrap_of("SASL_SSL").rsplit(":", 1)
        yield SimpleNamespace(name="kcsim", host=host, port=int(port))
    finally:
        server.stop()


def _command_config(directory: Path, ca_file: Path, user: str, password: str) -> str:
    path = directory / f"{user}.properties"
    path.write_text("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
                    f'sasl.jaas.config={SCRAM} required username="{user}" password="{password}";\n'
                    f"ssl.truststore.type=PEM\nssl.truststore.location={ca_file}\n")
    return str(path)


def _runs(broker: SimpleNamespace, admin: str, orders: str, cwd: Path) -> dict[str, Ran]:
    """Each tool's commands against `broker`, in order: as the admin, then as `orders`, a
    user kafka-configs made, who may do nothing but what the ACLs given to it allow."""
    def as_admin(main: str, *args: str) -> Ran:
        return tool(broker, main, "--command-config", admin, *args, cwd=cwd)

    def as_orders(main: str, *args: str) -> Ran:
        return tool(broker, main, "--command-config", orders, *args, cwd=cwd)

    runs = {f"acls {name}": kafka_acls(broker, "--command-config", admin, *args, cwd=cwd)
            for name, args in COMMANDS}
    users = ("--entity-type", "users", "--entity-name", "orders")
    runs["configs add-scram"] = as_admin(
        CONFIG_COMMAND, "--alter", "--add-config",
        "SCRAM-SHA-512=[iterations=8192,password=orders-secret]", *users)
    runs["topics create"] = as_admin(TOPIC_COMMAND, "--create", "--topic", "orders",
                                     "--partitions", "2", "--replication-factor", "1")
    group = ("--group", "orders-app")
    runs["groups reset"] = as_admin(CONSUMER_GROUP_COMMAND, "--reset-offsets", *group,
                                    "--topic", "orders", "--to-earliest", "--execute")
    runs["groups list"] = as_admin(CONSUMER_GROUP_COMMAND, "--list")
    runs["groups describe"] = as_admin(CONSUMER_GROUP_COMMAND, "--describe", *group)
    runs["orders groups list, no ACL"] = as_orders(CONSUMER_GROUP_COMMAND, "--list")
    runs["orders groups describe, no ACL"] = as_orders(CONSUMER_GROUP_COMMAND, "--describe",
                                                       *group)
    runs["orders acls list, no ACL"] = as_orders(ACL_COMMAND, "--list")
    runs["acls grant orders"] = as_admin(ACL_COMMAND, "--add", "--allow-principal",
                                         "User:orders", "--operation", "Describe", *group,
                                         "--topic", "orders")
    runs["orders groups list"] = as_orders(CONSUMER_GROUP_COMMAND, "--list")
    runs["orders groups describe"] = as_orders(CONSUMER_GROUP_COMMAND, "--describe", *group)
    runs["configs delete-scram"] = as_admin(CONFIG_COMMAND, "--alter", "--delete-config",
                                            "SCRAM-SHA-512", *users)
    runs["orders after delete"] = as_orders(CONSUMER_GROUP_COMMAND, "--list", "--timeout",
                                            "5000")
    return {name: _own_groups(ran) if "groups list" in name else ran
            for name, ran in runs.items()}


def _own_groups(ran: Ran) -> Ran:
    """A group listing without the groups of other tests (the session's Kafka is shared)."""
    return Ran(ran.code, tuple(line for line in ran.out if "orders" in line), ran.err)


def _without_request_text(ran: Ran) -> Ran:
    """Kafka's output with its description of a refused request replaced by the message a
    client prints when the answer has none (kcsim's)."""
    def plain(lines: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_KAFKA_REQUEST_TEXT.sub("Cluster authorization failed.", line)
                     for line in lines)
    return Ran(ran.code, plain(ran.out), plain(ran.err))


def test_kafka_tools_over_sasl_ssl_print_the_same_against_kcsim(
        secured_twin: SimpleNamespace, secured_kafka: SimpleNamespace,
        key_store: tuple[Path, Path], tmp_path: Path) -> None:
    admin = _command_config(tmp_path, key_store[1], ADMIN, ADMIN_PASSWORD)
    orders = _command_config(tmp_path, key_store[1], "orders", "orders-secret")
    runs = {broker.name: _runs(broker, admin, orders, tmp_path)
            for broker in (secured_twin, secured_kafka)}
    ours = runs[secured_twin.name]
    theirs = {name: _without_request_text(ran) for name, ran in runs[secured_kafka.name].items()}
    assert ours["configs add-scram"].out == ("Completed updating config for user orders.",)
    assert ours["groups describe"].code == 0 and any(
        "orders-app orders" in line for line in ours["groups describe"].out), ours
    assert ours["orders acls list, no ACL"].code == 1
    assert theirs["orders acls list, no ACL"] != runs[secured_kafka.name]["orders acls list, no ACL"]
    found = differences(ours, theirs)
    assert not found, "\n\n".join(found)
