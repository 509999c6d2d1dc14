"""AdminError: a Kafka error as the operator should see it, by Kafka's name and with a hint.

Codes, names, messages and retriability come from `protocol.errors`; this module
only adds what an operator needs next: a one-line hint on what to do about it.
"""

from __future__ import annotations

from kcsim.protocol.errors import ERRORS, ErrorCode, error_name

E = ErrorCode

# Errors that mean "ask the coordinator again": the coordinator moved, is loading, or is down.
COORDINATOR_RETRIABLE = frozenset(
    {E.NOT_COORDINATOR, E.COORDINATOR_LOAD_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE}
)

# Errors that say a thing the operator named does not exist.
NOT_FOUND = frozenset({E.GROUP_ID_NOT_FOUND, E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_ID})

HINTS: dict[int, str] = {
    E.NOT_COORDINATOR: "the group's coordinator moved; retry, or raise --timeout if it keeps moving",
    E.COORDINATOR_LOAD_IN_PROGRESS: "the coordinator is still loading its groups; retry shortly",
    E.COORDINATOR_NOT_AVAILABLE: "no broker coordinates the group right now; check the cluster",
    E.GROUP_ID_NOT_FOUND: "check the group name with --list",
    E.NON_EMPTY_GROUP: "stop the group's consumers (or wait for their session time-out) first",
    E.UNKNOWN_TOPIC_OR_PARTITION: "check the topic name and partition numbers",
    E.UNKNOWN_TOPIC_ID: "the topic was deleted or re-created; check the topic",
    E.GROUP_SUBSCRIBED_TO_TOPIC: "the group's consumers still read this topic; stop them first",
    E.INVALID_GROUP_ID: "group ids must be non-empty",
    E.GROUP_AUTHORIZATION_FAILED: "the principal lacks ACLs on this group",
    E.TOPIC_AUTHORIZATION_FAILED: "the principal lacks ACLs on this topic",
    E.UNKNOWN_MEMBER_ID: "the group is active; only an empty group (or paused partitions) "
    "accepts offsets from a tool",
    E.ILLEGAL_GENERATION: "the group rebalanced meanwhile; retry when it is stable",
    E.REBALANCE_IN_PROGRESS: "the group is rebalancing; retry when it is stable",
    E.FENCED_MEMBER_EPOCH: "the group is active; pause the partitions or stop the consumers first",
    E.STALE_MEMBER_EPOCH: "the group is active; pause the partitions or stop the consumers first",
    E.UNSTABLE_OFFSET_COMMIT: "a transaction on these partitions is still open; retry later",
    E.UNSUPPORTED_VERSION: "the broker does not serve this request in a version this client "
    "speaks; it may be too old",
    E.INVALID_REQUEST: "the broker rejected the request as malformed; check broker logs",
    E.NETWORK_EXCEPTION: "is a broker listening at --bootstrap-server?",
    E.REQUEST_TIMED_OUT: "the cluster did not answer in time; raise --timeout or check the brokers",
    E.NOT_LEADER_OR_FOLLOWER: "partition leadership is moving; retry shortly",
    E.LEADER_NOT_AVAILABLE: "the partition has no leader right now; retry shortly",
    E.OFFSET_METADATA_TOO_LARGE: "shorten the offset metadata",
    E.INVALID_COMMIT_OFFSET_SIZE: "the offset commit was too large; commit fewer partitions",
}


def hint_for(code: int) -> str:
    """The operator's next step for an error code (a generic one for codes without advice)."""
    hint = HINTS.get(code)
    if hint is not None:
        return hint
    info = ERRORS.get(code)
    if info is not None and info.retriable:
        return "a transient error; retry, or raise --timeout"
    return "see the broker's log for details"


class AdminError(Exception):
    """A Kafka error for one group, partition or request: `.name` is Kafka's constant name.

    `.message` is the broker's message when it sent one, else Kafka's default message;
    `.hint` is a one-line suggestion for an operator.
    """

    def __init__(self, code: int, message: str | None = None, *, hint: str | None = None) -> None:
        info = ERRORS.get(code)
        self.code = int(code)
        self.name = error_name(code)
        self.message = message or (info.message if info is not None else "")
        self.hint = hint if hint is not None else hint_for(code)
        super().__init__(f"{self.name}: {self.message}" if self.message else self.name)

    @property
    def retriable(self) -> bool:
        info = ERRORS.get(self.code)
        return bool(info is not None and info.retriable)

    @property
    def coordinator_moved(self) -> bool:
        """True when the group's coordinator must be looked up again before retrying."""
        return self.code in COORDINATOR_RETRIABLE

    @property
    def not_found(self) -> bool:
        return self.code in NOT_FOUND

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.code, self.message, self.hint))


def _rebuild(code: int, message: str, hint: str) -> AdminError:
    return AdminError(code, message, hint=hint)


def check(code: int, message: str | None = None) -> None:
    """Raise the AdminError for a non-zero error code."""
    if code:
        raise AdminError(code, message)


def network_error(address: str, why: object) -> AdminError:
    return AdminError(
        E.NETWORK_EXCEPTION,
        f"no answer from {address}: {why}",
        hint=f"is a broker listening at {address}?",
    )


def timed_out(seconds: float, last: AdminError | None) -> AdminError:
    """The error for a call that kept failing with retriable errors until its deadline."""
    if last is None:
        return AdminError(E.REQUEST_TIMED_OUT, f"no result within {seconds:g} s")
    return AdminError(
        E.REQUEST_TIMED_OUT,
        f"no result within {seconds:g} s; last error {last.name}: {last.message}",
        hint=last.hint,
    )
