"""What an ACL is made of, with Kafka's codes (org.apache.kafka.common.acl and
.resource): a resource pattern (type, name, pattern type) and an entry (principal, host,
operation, permission). Filters, as DescribeAcls and DeleteAcls send them, match bindings.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

WILDCARD = "*"  # a LITERAL resource name, principal (`User:*`) or host matching any


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class Operation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class Permission(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


CLUSTER_NAME = "kafka-cluster"  # the one CLUSTER resource's name

# What an ALLOW of an operation also allows (only ALLOW ACLs imply; ALL covers everything).
IMPLIED_BY: dict[Operation, frozenset[Operation]] = {
    Operation.DESCRIBE: frozenset({Operation.DESCRIBE, Operation.READ, Operation.WRITE,
                                   Operation.DELETE, Operation.ALTER}),
    Operation.DESCRIBE_CONFIGS: frozenset({Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS}),
}

# The operations each resource type has (what `authorized_operations` bitfields list).
OPERATIONS_OF: dict[ResourceType, tuple[Operation, ...]] = {
    ResourceType.TOPIC: (Operation.READ, Operation.WRITE, Operation.CREATE, Operation.DELETE,
                         Operation.ALTER, Operation.DESCRIBE, Operation.DESCRIBE_CONFIGS,
                         Operation.ALTER_CONFIGS),
    ResourceType.GROUP: (Operation.READ, Operation.DELETE, Operation.DESCRIBE,
                         Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS),
    ResourceType.CLUSTER: (Operation.CREATE, Operation.ALTER, Operation.DESCRIBE,
                           Operation.CLUSTER_ACTION, Operation.DESCRIBE_CONFIGS,
                           Operation.ALTER_CONFIGS, Operation.IDEMPOTENT_WRITE),
    ResourceType.TRANSACTIONAL_ID: (Operation.DESCRIBE, Operation.WRITE,
                                    Operation.TWO_PHASE_COMMIT),
}


class AclBinding(NamedTuple):
    """One ACL: who (principal, host) may or may not (permission) do what (operation) to
    which resources (type, name, pattern type)."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: Operation
    permission: Permission


class AclFilter(NamedTuple):
    """What DescribeAcls and DeleteAcls select by: None (or ANY) matches anything; a MATCH
    pattern type matches the ACLs that would apply to the named resource."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: Operation
    permission: Permission

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != acl.resource_type:
            return False
        if not self._matches_pattern(acl):
            return False
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        if self.operation != Operation.ANY and self.operation != acl.operation:
            return False
        return self.permission == Permission.ANY or self.permission == acl.permission

    def _matches_pattern(self, acl: AclBinding) -> bool:
        pattern = self.pattern_type
        if pattern == PatternType.MATCH:
            name = self.name
            if name is None:
                return True
            if acl.pattern_type == PatternType.LITERAL:
                return acl.name == name or acl.name == WILDCARD
            return acl.pattern_type == PatternType.PREFIXED and name.startswith(acl.name)
        if pattern != PatternType.ANY and pattern != acl.pattern_type:
            return False
        return self.name is None or self.name == acl.name


def binding_problem(acl: AclBinding) -> str | None:
    """Why CreateAcls refuses an ACL (Kafka's InvalidRequestException message), or None."""
    if acl.resource_type == ResourceType.CLUSTER and acl.name != CLUSTER_NAME:
        return "The only valid name for the CLUSTER resource is " + CLUSTER_NAME
    if not acl.name:
        return "Invalid empty resource name"
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {acl.resource_type.name}"
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {acl.pattern_type.name}"
    if acl.operation in (Operation.UNKNOWN, Operation.ANY):
        return f"Invalid operation {acl.operation.name}"
    if acl.permission not in (Permission.ALLOW, Permission.DENY):
        return f"Invalid permissionType {acl.permission.name}"
    if ":" not in acl.principal:
        return (f"Could not parse principal from `{acl.principal}` (no colon is present "
                "separating the principal type from the principal name)")
    return None


def enum_or_unknown(enum: type[IntEnum], code: int) -> IntEnum:
    """`enum(code)`, or its UNKNOWN (0) for a code it does not have, as Kafka reads them."""
    try:
        return enum(code)
    except ValueError:
        return enum(0)
