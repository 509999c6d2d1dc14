"""The ACLs of a broker, kept by resource so that a check reads only those that may apply.

A resource (type, name) is matched by the LITERAL ACLs of its name and of `*`, and by the
PREFIXED ACLs whose name starts it. Literal ACLs sit in a dict by (type, name); prefixed
ones in a dict by (type, prefix), with the distinct prefix lengths of each type kept
sorted, so a check looks up one key per length (not per ACL): cheap with thousands of ACLs.
`version` moves with every change (what cached decisions are checked against).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

from .model import WILDCARD, AclBinding, PatternType, ResourceType

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .model import AclFilter

_Key = tuple[ResourceType, str]


class AclIndex:
    """Every ACL, in the order it was made, and its place in the lookup tables."""

    def __init__(self) -> None:
        self._all: dict[AclBinding, None] = {}
        self._literal: dict[_Key, list[AclBinding]] = {}
        self._prefixed: dict[_Key, list[AclBinding]] = {}
        self._lengths: dict[ResourceType, list[int]] = {}  # prefix lengths, sorted, distinct
        self._prefixes_of_length: dict[tuple[ResourceType, int], int] = {}
        self.version = 0

    def __len__(self) -> int:
        return len(self._all)

    def __contains__(self, acl: AclBinding) -> bool:
        return acl in self._all

    def __iter__(self) -> Iterator[AclBinding]:
        return iter(self._all)

    def add(self, acl: AclBinding) -> bool:
        """Keep `acl`; False when it was already there."""
        if acl in self._all:
            return False
        self._all[acl] = None
        key = (acl.resource_type, acl.name)
        if acl.pattern_type == PatternType.PREFIXED:
            if key not in self._prefixed:
                of_length = (acl.resource_type, len(acl.name))
                count = self._prefixes_of_length.get(of_length, 0)
                if not count:
                    bisect.insort(self._lengths.setdefault(acl.resource_type, []), len(acl.name))
                self._prefixes_of_length[of_length] = count + 1
            self._prefixed.setdefault(key, []).append(acl)
        else:
            self._literal.setdefault(key, []).append(acl)
        self.version += 1
        return True

    def remove(self, acl: AclBinding) -> bool:
        """Forget `acl`; False when it was not there."""
        if self._all.pop(acl, 0) is not None:
            return False
        key = (acl.resource_type, acl.name)
        table = self._prefixed if acl.pattern_type == PatternType.PREFIXED else self._literal
        acls = table[key]
        acls.remove(acl)
        if not acls:
            del table[key]
            if table is self._prefixed:
                of_length = (acl.resource_type, len(acl.name))
                self._prefixes_of_length[of_length] -= 1
                if not self._prefixes_of_length[of_length]:
                    del self._prefixes_of_length[of_length]
                    self._lengths[acl.resource_type].remove(len(acl.name))
        self.version += 1
        return True

    def applying_to(self, resource_type: ResourceType, name: str) -> list[list[AclBinding]]:
        """The ACLs that apply to one resource, in lists (no copies)."""
        found = []
        literal = self._literal
        acls = literal.get((resource_type, name))
        if acls is not None:
            found.append(acls)
        if name != WILDCARD:
            acls = literal.get((resource_type, WILDCARD))
            if acls is not None:
                found.append(acls)
        lengths = self._lengths.get(resource_type)
        if lengths:
            prefixed = self._prefixed
            size = len(name)
            for length in lengths:
                if length > size:
                    break
                acls = prefixed.get((resource_type, name[:length]))
                if acls is not None:
                    found.append(acls)
        return found

    def of_type(self, resource_type: ResourceType) -> Iterator[AclBinding]:
        return (acl for acl in self._all if acl.resource_type == resource_type)

    def select(self, selector: AclFilter) -> list[AclBinding]:
        """The ACLs a DescribeAcls or DeleteAcls filter selects, in the order they were made."""
        return [acl for acl in self._all if selector.matches(acl)]
