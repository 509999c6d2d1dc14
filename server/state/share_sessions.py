"""Share sessions (KIP-932): the partitions a member's ShareFetches cover, and their epochs.

Soft state, as Kafka's share session cache: gone at a restart. A session is keyed by
(group, member); epoch 0 opens it (a session already there is replaced), -1 closes it
after its request, any other epoch must be the one the session expects next
(INVALID_SHARE_SESSION_EPOCH), and a session that does not exist answers
SHARE_SESSION_NOT_FOUND. Requests add partitions to the session; ForgottenTopicsData
removes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from kcsim.protocol.errors import ErrorCode

if TYPE_CHECKING:
    import uuid

INITIAL_EPOCH, FINAL_EPOCH = 0, -1
DEFAULT_MAX_SESSIONS = 2000  # Kafka's group.share.max.share.sessions


class SessionPartition(NamedTuple):
    topic_id: uuid.UUID
    partition: int


class ShareSession:
    __slots__ = ("epoch", "partitions")

    def __init__(self) -> None:
        self.epoch = 1  # the epoch the next request must carry
        self.partitions: dict[SessionPartition, None] = {}  # an ordered set


class ShareSessionCache:
    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[tuple[str, str, int], ShareSession] = {}

    def open(self, group: str, member: str, epoch: int,
             node: int = 0) -> tuple[ErrorCode, ShareSession | None]:
        """The session a request with `epoch` goes on (its epoch moved on), or its error;
        each node of a several-broker kcsim keeps its own, as each Kafka broker does."""
        key = (group, member, node)
        if epoch == INITIAL_EPOCH:
            if key not in self.sessions and len(self.sessions) >= self.max_sessions:
                return ErrorCode.SHARE_SESSION_LIMIT_REACHED, None
            fresh = self.sessions[key] = ShareSession()
            return ErrorCode.NONE, fresh
        session = self.sessions.get(key)
        if session is None:
            return ErrorCode.SHARE_SESSION_NOT_FOUND, None
        if epoch == FINAL_EPOCH:
            return ErrorCode.NONE, session
        if epoch != session.epoch:
            return ErrorCode.INVALID_SHARE_SESSION_EPOCH, None
        session.epoch = epoch + 1 if epoch < 2**31 - 1 else 1
        return ErrorCode.NONE, session

    def close(self, group: str, member: str, node: int = 0) -> None:
        self.sessions.pop((group, member, node), None)
