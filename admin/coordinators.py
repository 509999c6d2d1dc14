"""Finding each group's coordinator, and running group requests there until they settle.

`for_each_group` is the retry policy Kafka's Admin applies to group calls:
NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE (and a lost connection) send the group
back to FindCoordinator, COORDINATOR_LOAD_IN_PROGRESS waits; every group ends with
its own value or its own error, and nothing outlives the call's deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode

from .calls import Call, should_retry
from .effects import Gather, Sleep, Step, T
from .errors import AdminError, timed_out
from .results import Node
from .wire import negotiate

FIND_COORDINATOR = 10
FindCoordinatorRequest = request_class(FIND_COORDINATOR)
GROUP_KEY_TYPE = 0
BATCHED_FIND_COORDINATOR = 4  # KIP-699: many keys in one FindCoordinator

GroupAttempt = Callable[[Node, list[str]], Step[Mapping[str, Any]]]


def find_coordinators(call: Call, groups: list[str]) -> Step[dict[str, Node | AdminError]]:
    """The coordinator of each group, from the cache or FindCoordinator (batched when served)."""
    cache = call.state.coordinators
    found: dict[str, Node | AdminError] = {g: cache[g] for g in groups if g in cache}
    missing = [g for g in groups if g not in cache]
    if not missing:
        return found
    served = yield call.served()
    version = negotiate(served, FIND_COORDINATOR, 0, 6)
    if version is None:
        error = AdminError(ErrorCode.UNSUPPORTED_VERSION, "the broker does not serve FindCoordinator")
        return {**found, **dict.fromkeys(missing, error)}
    if version >= BATCHED_FIND_COORDINATOR:
        found.update((yield from _find_batched(call, missing)))
    else:
        outcomes = yield Gather(tuple(_find_one(call, g) for g in missing))
        found.update(zip(missing, outcomes))
    for group, node in found.items():
        if isinstance(node, Node):
            cache[group] = node
    return found


def _find_batched(call: Call, groups: list[str]) -> Step[dict[str, Node | AdminError]]:
    def build(version: int) -> Any:
        return FindCoordinatorRequest(key_type=GROUP_KEY_TYPE, coordinator_keys=groups)

    reply = yield call.send(None, FIND_COORDINATOR, build, (BATCHED_FIND_COORDINATOR, 6))
    out: dict[str, Node | AdminError] = {}
    for c in reply.body.coordinators:
        out[c.key] = (
            AdminError(c.error_code, c.error_message) if c.error_code
            else Node(c.node_id, c.host, c.port)
        )
    for group in groups:
        out.setdefault(group, AdminError(ErrorCode.COORDINATOR_NOT_AVAILABLE,
                                         f"FindCoordinator did not answer for group {group!r}"))
    return out


def _find_one(call: Call, group: str) -> Step[Node]:
    def build(version: int) -> Any:
        return FindCoordinatorRequest(key=group, key_type=GROUP_KEY_TYPE)

    reply = yield call.send(None, FIND_COORDINATOR, build, (0, BATCHED_FIND_COORDINATOR - 1))
    body = reply.body
    if body.error_code:
        raise AdminError(body.error_code, getattr(body, "error_message", None))
    return Node(body.node_id, body.host, body.port)


def for_each_group(
    call: Call, groups: Iterable[str], attempt: GroupAttempt, *, batched: bool
) -> Step[dict[str, Any]]:
    """Run `attempt(coordinator, groups)` for every group until each has a value or an error.

    `attempt` answers {group: value or AdminError}, or raises an AdminError that applies
    to every group it was given. With `batched`, the groups sharing a coordinator go in
    one attempt; otherwise each group gets its own. Returns {group: value or AdminError}.
    """
    order = list(dict.fromkeys(groups))
    pending = list(order)
    results: dict[str, Any] = {}
    last: dict[str, AdminError] = {}
    while pending:
        answers: list[tuple[str, Any]] = []
        try:
            coordinators = yield from find_coordinators(call, pending)
        except AdminError as exc:
            coordinators = dict.fromkeys(pending, exc)
        by_node: dict[Node, list[str]] = {}
        for group in pending:
            node = coordinators[group]
            if isinstance(node, AdminError):
                answers.append((group, node))
            else:
                by_node.setdefault(node, []).append(group)
        batches = (
            list(by_node.items()) if batched
            else [(node, [g]) for node, gs in by_node.items() for g in gs]
        )
        outcomes = yield Gather(tuple(attempt(node, gs) for node, gs in batches))
        for (_, gs), outcome in zip(batches, outcomes):
            for group in gs:
                answers.append((group, outcome if isinstance(outcome, AdminError) else outcome.get(
                    group, AdminError(ErrorCode.UNKNOWN_SERVER_ERROR, f"no answer for {group!r}"))))
        pending = []
        for group, outcome in answers:
            if _needs_retry(call, group, outcome):
                last[group] = outcome
                pending.append(group)
            else:
                results[group] = outcome
        if pending:
            delay = call.next_delay()
            if delay is None:
                for group in pending:
                    results[group] = timed_out(call.timeout, last.get(group))
                break
            yield Sleep(delay)
    return {g: results[g] for g in order}


def _needs_retry(call: Call, group: str, outcome: Any) -> bool:
    """Whether a group's outcome is worth another attempt; forgets its coordinator when the
    next attempt must look it up again."""
    if not (isinstance(outcome, AdminError) and should_retry(outcome)):
        return False
    if outcome.coordinator_moved or outcome.code == ErrorCode.NETWORK_EXCEPTION:
        call.state.coordinators.pop(group, None)
    return True


def for_one_group(call: Call, group: str, attempt: Callable[[Node], Step[T]]) -> Step[T]:
    """`for_each_group` for a call about one group; its error is raised."""

    def wrapped(node: Node, groups: list[str]) -> Step[dict[str, Any]]:
        value = yield from attempt(node)
        return {group: value}

    outcomes = yield from for_each_group(call, [group], wrapped, batched=False)
    outcome = outcomes[group]
    if isinstance(outcome, AdminError):
        raise outcome
    return outcome
