"""Member ids: random version-4 UUIDs from a generator the OS seeds once.

A member id only has to be unique in its group, as Kafka's are; `uuid.uuid4`
asks the kernel for fresh bytes on every call, a system call for each member
that joins.
"""

from __future__ import annotations

import random
import uuid

_rng = random.Random()  # seeded from the OS's randomness
_VERSION_BITS = (0x4 << 76) | (0b10 << 62)  # version 4, RFC 4122 variant
_KEEP_BITS = ((1 << 128) - 1) ^ ((0xF << 76) | (0b11 << 62))


def random_uuid() -> uuid.UUID:
    """A random version-4 UUID, as `uuid.uuid4` makes, without a system call."""
    return uuid.UUID(int=(_rng.getrandbits(128) & _KEEP_BITS) | _VERSION_BITS)
