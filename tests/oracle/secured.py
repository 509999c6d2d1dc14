"""The secured Kafka 4.4 of the oracle tier, and the kafka-acls commands compared on it.

The session's one Kafka (tests/conftest.py `kafka_broker`) serves a PLAINTEXT listener, on
which every other oracle test talks to it as User:ANONYMOUS, and a SASL_SSL listener with
SCRAM-SHA-512, both under the standard authorizer. ANONYMOUS is a super user (so nothing else
sees the authorizer), and so is the SCRAM admin, made at format time. Its server certificate
comes from a CA made with trustme, in one PEM key store that kcsim reads too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .groupcommand import Ran
from .toolcommand import tool

if TYPE_CHECKING:
    from pathlib import Path

    from .harness import Endpoint

ACL_COMMAND = "org.apache.kafka.tools.AclCommand"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
SUPER_USERS = "User:ANONYMOUS;User:admin"  # ANONYMOUS: PLAINTEXT clients and the controller
ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


def key_store(directory: Path) -> tuple[Path, Path]:
    """A CA and one PEM file with a server certificate from it for 127.0.0.1 (its PKCS#8
    key, then its chain), which Kafka's PEM key store and kcsim's both read."""
    import trustme
    from cryptography.hazmat.primitives import serialization

    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    key: Any = serialization.load_pem_private_key(leaf.private_key_pem.bytes(), None)
    pkcs8 = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
    store, ca_file = directory / "server.pem", directory / "ca.pem"
    store.write_bytes(pkcs8 + b"".join(blob.bytes() for blob in leaf.cert_chain_pems))
    ca.cert_pem.write_to_path(str(ca_file))
    return store, ca_file


def secured_broker_args(store: Path) -> dict[str, Any]:
    """KafkaBroker's arguments for the secured listener and the authorizer."""
    return {
        "settings": {"authorizer.class.name": AUTHORIZER, "super.users": SUPER_USERS,
                     "sasl.enabled.mechanisms": "SCRAM-SHA-512",
                     "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config":
                         f"{SCRAM} required;",
                     "ssl.keystore.type": "PEM", "ssl.keystore.location": str(store)},
        "listeners": ("SASL_SSL",),
        "format_args": ("--add-scram", f"SCRAM-SHA-512=[name={ADMIN},password={ADMIN_PASSWORD}]"),
    }


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
