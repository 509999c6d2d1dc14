"""The authorizer: may a principal, from a host, do an operation on a resource?

Kafka's StandardAuthorizer, decision for decision:

- a super user (`--super-users User:a;User:b`) may do everything;
- otherwise the ACLs that apply to the resource (`AclIndex.applying_to`) are read: an
  ACL counts when its principal is the request's or `User:*`, its host the client's or
  `*`, and its operation the one asked, or ALL, or (for ALLOW ACLs only) one that implies
  it (READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS);
- a DENY that counts refuses, whatever allows; else an ALLOW that counts allows;
- when no ACL applies to the resource at all (whoever it names), the answer is
  `allow.everyone.if.no.acl.found` (false unless set), else it is a refusal.

Decisions are cached until the ACLs change, so the check a request makes costs a few dict
lookups however many ACLs there are: per (principal, host) a `Decisions` table, in it one
dict per right (operation and resource type, as one small int: `right`) of names decided,
each decided on its first use. A request's checks take their asker's table once
(`decisions`) and then index it, building nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import (
    IMPLIED_BY,
    OPERATIONS_OF,
    WILDCARD,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)

if TYPE_CHECKING:
    from .index import AclIndex

ANY_PRINCIPAL = "User:*"
_CACHE_ENTRIES = 100_000  # decisions kept before the cache starts again


def right(operation: Operation, resource_type: ResourceType) -> int:
    """An operation on a resource type as one int (a key of `Decisions`)."""
    return operation << 3 | resource_type


class _Named(dict[str, bool]):
    """One asker's decisions on one right, by resource name; decided on first use."""

    __slots__ = ("authorizer", "host", "operation", "principal", "resource_type")

    def __init__(self, authorizer: Authorizer, principal: str, host: str,
                 operation: Operation, resource_type: ResourceType) -> None:
        super().__init__()
        self.authorizer, self.principal, self.host = authorizer, principal, host
        self.operation, self.resource_type = operation, resource_type

    def __missing__(self, name: str) -> bool:
        authorizer = self.authorizer
        decided = self[name] = authorizer.decide(self.principal, self.host, self.operation,
                                                 self.resource_type, name)
        authorizer.count_decision()
        return decided


class Decisions(dict[int, _Named]):
    """One asker's (principal and host) decisions: `decisions[right(op, type)][name]`."""

    __slots__ = ("authorizer", "host", "principal")

    def __init__(self, authorizer: Authorizer, principal: str, host: str) -> None:
        super().__init__()
        self.authorizer, self.principal, self.host = authorizer, principal, host

    def __missing__(self, code: int) -> _Named:
        named = self[code] = _Named(self.authorizer, self.principal, self.host,
                                    Operation(code >> 3), ResourceType(code & 7))
        return named


class Authorizer:
    """Decides with the ACLs of `acls`, the super users and the default for no ACL."""

    def __init__(self, acls: AclIndex, super_users: frozenset[str] = frozenset(),
                 allow_if_no_acl: bool = False) -> None:
        self.acls = acls
        self.super_users = super_users
        self.allow_if_no_acl = allow_if_no_acl
        self._askers: dict[tuple[str, str], Decisions] = {}
        self._cache_version = acls.version
        self._cached = 0

    def decisions(self, principal: str, host: str) -> Decisions:
        """The asker's table of decisions, valid while the ACLs stay as they are."""
        if self._cache_version != self.acls.version:
            self._askers, self._cached = {}, 0
            self._cache_version = self.acls.version
        asker = (principal, host)
        table = self._askers.get(asker)
        if table is None:
            table = self._askers[asker] = Decisions(self, principal, host)
        return table

    def count_decision(self) -> None:
        """One more decision cached; past `_CACHE_ENTRIES` the cache starts again."""
        self._cached += 1
        if self._cached >= _CACHE_ENTRIES:
            self._askers, self._cached = {}, 0

    def authorize(self, principal: str, host: str, operation: Operation,
                  resource_type: ResourceType, name: str) -> bool:
        table = self._askers.get((principal, host))
        if table is None or self._cache_version != self.acls.version:
            table = self.decisions(principal, host)
        return table[operation << 3 | resource_type][name]

    def decide(self, principal: str, host: str, operation: Operation,
               resource_type: ResourceType, name: str) -> bool:
        """`authorize` without its cache."""
        if principal in self.super_users:
            return True
        applying = self.acls.applying_to(resource_type, name)
        if not applying:
            return self.allow_if_no_acl
        implied = IMPLIED_BY.get(operation)
        allowed = False
        for acls in applying:
            for acl in acls:
                if acl.principal != principal and acl.principal != ANY_PRINCIPAL:
                    continue
                if acl.host != WILDCARD and acl.host != host:
                    continue
                deny = acl.permission == Permission.DENY
                if acl.operation != Operation.ALL and acl.operation != operation and (
                        deny or implied is None or acl.operation not in implied):
                    continue
                if deny:
                    return False
                allowed = True
        return allowed

    def authorize_by_resource_type(self, principal: str, host: str, operation: Operation,
                                   resource_type: ResourceType) -> bool:
        """Whether the principal may do `operation` on some resource of the type (Kafka's
        Authorizer.authorizeByResourceType): an ALLOW for it not covered by a DENY."""
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        denied: dict[PatternType, set[str]] = {PatternType.LITERAL: set(),
                                               PatternType.PREFIXED: set()}
        allowed: dict[PatternType, set[str]] = {PatternType.LITERAL: set(),
                                                PatternType.PREFIXED: set()}
        for acl in self.acls.of_type(resource_type):
            if acl.host != host and acl.host != WILDCARD:
                continue
            if acl.principal != principal and acl.principal != ANY_PRINCIPAL:
                continue
            if acl.operation != operation and acl.operation != Operation.ALL:
                continue
            if acl.permission == Permission.DENY:
                if acl.pattern_type == PatternType.LITERAL and acl.name == WILDCARD:
                    return False
                denied[acl.pattern_type].add(acl.name)
            elif acl.pattern_type == PatternType.LITERAL and acl.name == WILDCARD:
                return True
            else:
                allowed[acl.pattern_type].add(acl.name)
        for pattern, names in allowed.items():
            for name in names:
                if pattern == PatternType.LITERAL and name in denied[PatternType.LITERAL]:
                    continue
                if not any(name[:i] in denied[PatternType.PREFIXED]
                           for i in range(1, len(name) + 1)):
                    return True
        return False

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType,
                              name: str) -> int:
        """The bitfield of the operations allowed on a resource (bit `1 << code`), as
        Metadata and DescribeGroups answer `authorized_operations`."""
        bits = 0
        for operation in OPERATIONS_OF.get(resource_type, ()):
            if self.authorize(principal, host, operation, resource_type, name):
                bits |= 1 << operation
        return bits
