"""ACLs as durable records of the log: one per ACL, the whole ACL its key, so that a
tombstone removes exactly it. CreateAcls and DeleteAcls write them; at start they are
read back through the broker state's one `apply` path into its `AclIndex`.
"""

from __future__ import annotations

from msgspec import Struct

from kcsim.storage.records import Record, RecordType

from .model import AclBinding, Operation, PatternType, Permission, ResourceType


class AclKey(Struct, frozen=True, array_like=True, gc=False):
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int


class AclValue(Struct, array_like=True, gc=False):
    created_ms: int  # when CreateAcls made it (not read back: for readers of the log)


ACL_RECORD_TYPES: tuple[RecordType, ...] = (
    RecordType(41, "acl", AclKey, AclValue),
)


def acl_record(acl: AclBinding, created_ms: int | None) -> Record:
    """The record that makes `acl` (at `created_ms`) or, given None, removes it."""
    return Record(AclKey(*acl), None if created_ms is None else AclValue(created_ms))


def binding_of(key: AclKey) -> AclBinding:
    return AclBinding(ResourceType(key.resource_type), key.resource_name,
                      PatternType(key.pattern_type), key.principal, key.host,
                      Operation(key.operation), Permission(key.permission))
