"""What an admin operation asks of the network, so that one implementation serves both clients.

Operations are generators (`Step`s): they yield an effect and receive its result
(or have its AdminError raised into them). The blocking client and the trio client
differ only in how they perform `Send`, `Sleep` and `Gather`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from .results import Node

T = TypeVar("T")

Step = Generator[Any, Any, T]


@dataclass(frozen=True)
class Send:
    """Send one request and answer its `Reply`.

    `node` None means any broker (the bootstrap connection). The driver picks the
    highest version in `versions` the broker serves and calls `build(version)` for
    the body. `wire_key` is the key on the wire when it differs from the declared
    `api_key` (KIP-1249's extension keys are configurable).
    """

    node: Node | None
    api_key: int
    build: Callable[[int], Any]
    versions: tuple[int, int]
    deadline: float
    wire_key: int | None = None


@dataclass(frozen=True)
class Reply:
    version: int
    body: Any


@dataclass(frozen=True)
class ServedVersions:
    """The broker's ApiVersions table: {api_key: (min, max)}."""

    node: Node | None
    deadline: float


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Gather:
    """Run steps (concurrently when the driver can); answers their results in order,
    an AdminError in place of the result of a step that raised one."""

    steps: tuple[Step[Any], ...]
