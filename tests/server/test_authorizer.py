"""The authorizer decides as Kafka's StandardAuthorizer: implications, patterns, deny
before allow, super users, the default when no ACL applies."""

from __future__ import annotations

import itertools

import pytest

from kcsim.server.acl.authorizer import Authorizer
from kcsim.server.acl.index import AclIndex
from kcsim.server.acl.model import (
    AclBinding,
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
    binding_problem,
)

TOPIC, GROUP, CLUSTER, TXN = (ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER,
                              ResourceType.TRANSACTIONAL_ID)
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = Permission.ALLOW, Permission.DENY
OPS = [op for op in Operation if op not in (Operation.UNKNOWN, Operation.ANY)]
ALICE, HOST = "User:alice", "10.0.0.1"


def acl(name: str = "orders", operation: Operation = Operation.READ,
        permission: Permission = ALLOW, pattern: PatternType = LITERAL,
        principal: str = ALICE, host: str = "*", kind: ResourceType = TOPIC) -> AclBinding:
    return AclBinding(kind, name, pattern, principal, host, operation, permission)


def authorizer(*acls: AclBinding, super_users: frozenset[str] = frozenset(),
               allow_if_no_acl: bool = False) -> Authorizer:
    index = AclIndex()
    for a in acls:
        index.add(a)
    return Authorizer(index, super_users, allow_if_no_acl)


# What an ALLOW of the first operation allows, for every operation asked: Kafka's table.
IMPLIED = {
    Operation.READ: {Operation.READ, Operation.DESCRIBE},
    Operation.WRITE: {Operation.WRITE, Operation.DESCRIBE},
    Operation.DELETE: {Operation.DELETE, Operation.DESCRIBE},
    Operation.ALTER: {Operation.ALTER, Operation.DESCRIBE},
    Operation.ALTER_CONFIGS: {Operation.ALTER_CONFIGS, Operation.DESCRIBE_CONFIGS},
    Operation.ALL: set(OPS),
}


@pytest.mark.parametrize(("granted", "asked"), list(itertools.product(OPS, OPS)))
def test_an_allow_grants_its_operation_and_what_it_implies(granted: Operation,
                                                           asked: Operation) -> None:
    auth = authorizer(acl(operation=granted))
    expected = asked in IMPLIED.get(granted, {granted})
    assert auth.authorize(ALICE, HOST, asked, TOPIC, "orders") is expected


@pytest.mark.parametrize(("denied", "asked"), list(itertools.product(OPS, OPS)))
def test_a_deny_refuses_only_its_operation_or_all(denied: Operation, asked: Operation) -> None:
    auth = authorizer(acl(operation=Operation.ALL), acl(operation=denied, permission=DENY))
    refused = denied in (asked, Operation.ALL)
    assert auth.authorize(ALICE, HOST, asked, TOPIC, "orders") is not refused


@pytest.mark.parametrize(("pattern", "name", "resource", "matches"), [
    (LITERAL, "orders", "orders", True),
    (LITERAL, "orders", "orders-eu", False),
    (LITERAL, "orders", "order", False),
    (LITERAL, "*", "anything", True),
    (PREFIXED, "orders", "orders", True),
    (PREFIXED, "orders", "orders-eu", True),
    (PREFIXED, "orders-", "orders-eu", True),
    (PREFIXED, "orders-", "orders", False),
    (PREFIXED, "*", "anything", False),  # a prefix, not a wildcard
    (PREFIXED, "*", "*x", True),
])
def test_patterns(pattern: PatternType, name: str, resource: str, matches: bool) -> None:
    auth = authorizer(acl(name=name, pattern=pattern))
    assert auth.authorize(ALICE, HOST, Operation.READ, TOPIC, resource) is matches


def test_a_deny_beats_an_allow_wherever_each_comes_from() -> None:
    auth = authorizer(acl(name="*"), acl(name="ord", pattern=PREFIXED, permission=DENY))
    assert not auth.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")
    assert auth.authorize(ALICE, HOST, Operation.READ, TOPIC, "payments")
    auth = authorizer(acl(name="ord", pattern=PREFIXED), acl(name="*", permission=DENY))
    assert not auth.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")


def test_principals_and_hosts() -> None:
    auth = authorizer(acl(principal="User:*"), acl(name="x", host="10.0.0.2"))
    assert auth.authorize("User:bob", HOST, Operation.READ, TOPIC, "orders")
    assert not auth.authorize(ALICE, HOST, Operation.READ, TOPIC, "x")
    assert auth.authorize(ALICE, "10.0.0.2", Operation.READ, TOPIC, "x")
    # Another resource type is another resource.
    assert not auth.authorize(ALICE, HOST, Operation.READ, GROUP, "orders")


def test_super_users_may_do_everything_even_denied() -> None:
    auth = authorizer(acl(operation=Operation.ALL, permission=DENY, principal="User:*"),
                      super_users=frozenset({"User:admin"}))
    assert auth.authorize("User:admin", HOST, Operation.WRITE, TOPIC, "orders")
    assert auth.authorize("User:admin", HOST, Operation.ALTER, CLUSTER, "kafka-cluster")
    assert not auth.authorize(ALICE, HOST, Operation.WRITE, TOPIC, "orders")


@pytest.mark.parametrize("allow_if_no_acl", [False, True])
def test_allow_everyone_if_no_acl_found(allow_if_no_acl: bool) -> None:
    # An ACL on the resource for someone else: the default no longer applies.
    auth = authorizer(acl(principal="User:bob"), allow_if_no_acl=allow_if_no_acl)
    assert auth.authorize(ALICE, HOST, Operation.READ, TOPIC, "payments") is allow_if_no_acl
    assert not auth.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders")


def test_decisions_follow_acls_added_and_removed() -> None:
    auth = authorizer()
    grant = acl(name="orders-", pattern=PREFIXED)
    assert not auth.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders-eu")
    auth.acls.add(grant)
    assert auth.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders-eu")
    assert auth.acls.remove(grant)
    assert not auth.acls.remove(grant)
    assert not auth.authorize(ALICE, HOST, Operation.READ, TOPIC, "orders-eu")


def test_a_check_among_a_thousand_acls_reads_only_those_that_apply() -> None:
    acls = [acl(name=f"topic-{i}", pattern=PREFIXED if i % 2 else LITERAL,
                principal=f"User:u{i}") for i in range(1000)]
    auth = authorizer(*acls, acl(name="topic-99", pattern=PREFIXED))
    assert auth.authorize(ALICE, HOST, Operation.READ, TOPIC, "topic-999")
    assert not auth.authorize(ALICE, HOST, Operation.READ, TOPIC, "topic-1")
    assert len(auth.acls.applying_to(TOPIC, "topic-999")) == 3  # topic-9 and -99, -999


def test_by_resource_type_as_kafka() -> None:
    write = Operation.WRITE
    assert not authorizer().authorize_by_resource_type(ALICE, HOST, write, TOPIC)
    assert authorizer(acl(operation=write)).authorize_by_resource_type(ALICE, HOST, write, TOPIC)
    denied = authorizer(acl(name="orders-eu", operation=write),
                        acl(name="orders", pattern=PREFIXED, operation=write, permission=DENY))
    assert not denied.authorize_by_resource_type(ALICE, HOST, write, TOPIC)


def test_authorized_operations_bitfield() -> None:
    auth = authorizer(acl(operation=Operation.WRITE))
    assert auth.authorized_operations(ALICE, HOST, TOPIC, "orders") == (
        1 << Operation.WRITE | 1 << Operation.DESCRIBE)


def test_filters() -> None:
    literal, prefixed = acl(), acl(name="ord", pattern=PREFIXED, operation=Operation.WRITE)
    match = AclFilter(ResourceType.ANY, "orders", PatternType.MATCH, None, None,
                      Operation.ANY, Permission.ANY)
    assert match.matches(literal) and match.matches(prefixed)
    exact = match._replace(pattern_type=PatternType.ANY, name="ord")
    assert not exact.matches(literal) and exact.matches(prefixed)
    assert not match._replace(operation=Operation.READ).matches(prefixed)


@pytest.mark.parametrize(("binding", "message"), [
    (acl(name="other", kind=CLUSTER), "The only valid name for the CLUSTER resource is "
                                      "kafka-cluster"),
    (acl(name=""), "Invalid empty resource name"),
    (acl(kind=ResourceType.ANY), "Invalid resourceType ANY"),
    (acl(pattern=PatternType.MATCH), "Invalid patternType MATCH"),
    (acl(operation=Operation.ANY), "Invalid operation ANY"),
    (acl(permission=Permission.ANY), "Invalid permissionType ANY"),
    (acl(principal="alice"), "Could not parse principal from `alice` (no colon is present "
                             "separating the principal type from the principal name)"),
    (acl(), None),
])
def test_what_create_acls_refuses(binding: AclBinding, message: str | None) -> None:
    assert binding_problem(binding) == message
