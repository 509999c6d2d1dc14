"""ACLs a test adds and removes (`srv.acls`, `POST /acls`, `DELETE /acls`), as CreateAcls
and DeleteAcls would: durable records, applied at once (the authorizer's next check sees
them) and handed to the writer. Fields are Kafka's names, as `kafka-acls` spells them:

    srv.acls.add("TOPIC", "orders", "User:alice", "READ")
    srv.acls.add("GROUP", "orders-", "User:alice", "READ", pattern_type="PREFIXED")
    srv.acls.add("TOPIC", "orders", "User:mallory", "ALL", permission="DENY")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..acl.model import (
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourceType,
    binding_problem,
)
from ..acl.records import acl_record

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..shell.server import Server
    from .handles import Runner

ACL_FIELDS = ("resource_type", "name", "principal", "operation", "permission", "pattern_type",
              "host")


def _code(enum: Any, field: str, value: Any) -> Any:
    try:
        return enum[str(value).upper()]
    except KeyError:
        names = ", ".join(m.name for m in enum if m.name not in ("UNKNOWN", "ANY", "MATCH"))
        raise ValueError(f"{field}: expected one of {names}, got {value!r}") from None


def acl_of(resource_type: str, name: str, principal: str, operation: str,
           permission: str = "ALLOW", pattern_type: str = "LITERAL", host: str = "*") -> AclBinding:
    """The ACL these names make, refused with Kafka's message when CreateAcls would be."""
    acl = AclBinding(_code(ResourceType, "resource_type", resource_type), name,
                     _code(PatternType, "pattern_type", pattern_type), principal, host,
                     _code(Operation, "operation", operation),
                     _code(Permission, "permission", permission))
    problem = binding_problem(acl)
    if problem is not None:
        raise ValueError(problem)
    return acl


def acl_view(acl: AclBinding) -> dict[str, str]:
    return {"resource_type": acl.resource_type.name, "name": acl.name,
            "pattern_type": acl.pattern_type.name, "principal": acl.principal,
            "host": acl.host, "operation": acl.operation.name,
            "permission": acl.permission.name}


class AclControl:
    """The broker's ACLs: list, add, remove."""

    def __init__(self, run: Runner, server: Callable[[], Server]) -> None:
        self._call = run
        self._server = server

    def list(self) -> list[dict[str, str]]:
        return self._call(lambda: [acl_view(a) for a in self._server().state.acls])

    def add(self, resource_type: str, name: str, principal: str, operation: str,
            permission: str = "ALLOW", pattern_type: str = "LITERAL",
            host: str = "*") -> dict[str, str]:
        """Add one ACL (nothing changes if it is there); returns it."""
        acl = acl_of(resource_type, name, principal, operation, permission, pattern_type, host)
        return self._call(lambda: self._change(acl, present=True))

    def remove(self, resource_type: str, name: str, principal: str, operation: str,
               permission: str = "ALLOW", pattern_type: str = "LITERAL",
               host: str = "*") -> bool:
        """Remove one ACL, named exactly; False when there was none."""
        acl = acl_of(resource_type, name, principal, operation, permission, pattern_type, host)
        return bool(self._call(lambda: self._change(acl, present=False)))

    def _change(self, acl: AclBinding, present: bool) -> Any:
        server = self._server()
        state = server.state
        if (acl in state.acls) != present:
            server.record([acl_record(acl, server.now_ms() if present else None)])
            return acl_view(acl) if present else True
        return acl_view(acl) if present else False
