"""Kafka's own kafka-acls (AclCommand, kafka-tools 4.4) adds, lists and removes ACLs with the
same output against kcsim as against Kafka 4.4, each started with the standard authorizer
(the tool connects over PLAINTEXT as User:ANONYMOUS, a super user of both).

`kafka-tools` is fetched with Maven into `<repo>/.cache/kafka-tools/<version>` once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from kcsim.server.embedded import EmbeddedServer

from .groupcommand import Ran
from .harness import Endpoint
from .kafka import KafkaBroker, KafkaUnavailable
from .toolcommand import differences, tool

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

ACL_COMMAND = "org.apache.kafka.tools.AclCommand"
SUPER_USER = "User:ANONYMOUS"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


@pytest.fixture(scope="module")
def secured_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    broker = KafkaBroker(tmp_path_factory.mktemp("kafka-acls"),
                         {"authorizer.class.name": AUTHORIZER, "super.users": SUPER_USER})
    try:
        broker.start()
    except KafkaUnavailable as exc:
        pytest.skip(f"Kafka with the standard authorizer did not start: {exc}")
    try:
        yield Endpoint(f"kafka {broker.version}", broker.host, broker.port)
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def secured_twin() -> Iterator[Endpoint]:
    server = EmbeddedServer(host="127.0.0.1", authorizer="standard",
                            super_users=SUPER_USER).start()
    try:
        assert server.port is not None
        yield Endpoint("kcsim", "127.0.0.1", server.port)
    finally:
        server.stop()


COMMANDS: list[tuple[str, list[str]]] = [
    ("list-empty", ["--list"]),
    ("add-read", ["--add", "--allow-principal", "User:alice", "--operation", "Read",
                  "--topic", "orders"]),
    ("add-prefixed", ["--add", "--allow-principal", "User:alice", "--operation", "Write",
                      "--topic", "family-", "--resource-pattern-type", "prefixed"]),
    ("add-deny", ["--add", "--deny-principal", "User:mallory", "--deny-host", "10.0.0.9",
                  "--operation", "All", "--topic", "orders"]),
    ("add-consumer", ["--add", "--allow-principal", "User:bob", "--consumer",
                      "--topic", "payments", "--group", "payments-app"]),
    ("add-producer", ["--add", "--allow-principal", "User:carol", "--producer",
                      "--topic", "payments", "--transactional-id", "payments-tx"]),
    ("add-cluster", ["--add", "--allow-principal", "User:ops", "--operation", "Describe",
                     "--cluster"]),
    ("list-topic", ["--list", "--topic", "orders"]),
    ("list-principal", ["--list", "--principal", "User:alice"]),
    ("list-group", ["--list", "--group", "payments-app"]),
    ("list-prefixed", ["--list", "--topic", "family-", "--resource-pattern-type", "prefixed"]),
    ("list-match", ["--list", "--topic", "family-eu", "--resource-pattern-type", "match"]),
    ("remove-read", ["--remove", "--allow-principal", "User:alice", "--operation", "Read",
                     "--topic", "orders", "--force"]),
    ("remove-consumer", ["--remove", "--allow-principal", "User:bob", "--consumer",
                         "--topic", "payments", "--group", "payments-app", "--force"]),
    ("list-after", ["--list", "--topic", "orders"]),
    ("remove-all-of-a-topic", ["--remove", "--topic", "payments", "--force"]),
    ("list-left", ["--list", "--principal", "User:carol"]),
]


def kafka_acls(broker: Endpoint, *args: str, cwd: Path) -> Ran:
    ran = tool(broker, ACL_COMMAND, *args, cwd=cwd)
    # The tool prints the ACLs of a resource, and the resources, in hash order: sorted.
    return Ran(ran.code, tuple(sorted(line.strip() for line in ran.out if line.strip())),
               ran.err)


def test_kafka_acls_output_is_the_same_against_kcsim(secured_twin: Endpoint,
                                                     secured_kafka: Endpoint,
                                                     tmp_path: Path) -> None:
    runs = {broker.name: {name: kafka_acls(broker, *args, cwd=tmp_path)
                          for name, args in COMMANDS}
            for broker in (secured_twin, secured_kafka)}
    ours = runs[secured_twin.name]
    assert ours["add-read"].code == 0 and any("orders" in line for line in ours["list-topic"].out)
    found = differences(ours, runs[secured_kafka.name])
    assert not found, "\n\n".join(found)
