"""One call's budget: its deadline, its back-off, and the state its client shares across calls."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kcsim.protocol.apis.pause_partitions import (
    LIST_PAUSED_PARTITIONS_KEY,
    PAUSE_PARTITIONS_KEY,
    RESUME_PARTITIONS_KEY,
)

from .effects import Send, ServedVersions, Sleep, Step, T
from .errors import AdminError, timed_out
from .results import Node

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass(frozen=True)
class PauseApiKeys:
    """The wire keys a broker serves KIP-1249 under (kcsim's defaults; its server can move them)."""

    pause: int = PAUSE_PARTITIONS_KEY
    resume: int = RESUME_PARTITIONS_KEY
    list: int = LIST_PAUSED_PARTITIONS_KEY

    @classmethod
    def parse(cls, text: str) -> PauseApiKeys:
        """'1000,1001,1002' as pause, resume, list."""
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ValueError(f"expected three API keys 'pause,resume,list', got {text!r}")
        return cls(*(int(p) for p in parts))

    def all(self) -> tuple[int, int, int]:
        return (self.pause, self.resume, self.list)


@dataclass
class ClientState:
    """Settings and caches every call of one client shares."""

    timeout: float = 30.0
    retry_backoff: float = 0.1
    retry_backoff_max: float = 1.0
    pause_keys: PauseApiKeys = field(default_factory=PauseApiKeys)
    coordinators: dict[str, Node] = field(default_factory=dict)


class Call:
    """The deadline and back-off of one public call; operations build their effects from it."""

    def __init__(self, state: ClientState, timeout: float | None = None) -> None:
        self.state = state
        self.timeout = state.timeout if timeout is None else timeout
        self.deadline = time.monotonic() + self.timeout
        self._delay = state.retry_backoff

    def next_delay(self) -> float | None:
        """How long to back off before the next attempt, or None when the deadline leaves no room."""
        delay = self._delay
        if time.monotonic() + delay >= self.deadline:
            return None
        self._delay = min(self._delay * 2, self.state.retry_backoff_max)
        return delay

    def send(
        self, node: Node | None, api_key: int, build: Callable[[int], Any],
        versions: tuple[int, int], wire_key: int | None = None,
    ) -> Send:
        return Send(node, api_key, build, versions, self.deadline, wire_key)

    def served(self, node: Node | None = None) -> ServedVersions:
        return ServedVersions(node, self.deadline)

    def retrying(self, attempt: Callable[[], Step[T]]) -> Step[T]:
        """Run `attempt` again after retriable errors, with back-off, until the deadline."""
        last: AdminError | None = None
        while True:
            try:
                return (yield from attempt())
            except AdminError as exc:
                if not should_retry(exc):
                    raise
                last = exc
            delay = self.next_delay()
            if delay is None:
                raise timed_out(self.timeout, last)
            yield Sleep(delay)


def should_retry(error: AdminError) -> bool:
    """Retriable in Kafka's sense, except "does not exist", which an admin reports at once."""
    return error.retriable and not error.not_found
