"""Waits: return as soon as a condition on the broker's state holds, woken by change notices.

A condition is checked on the broker's trio thread and gives (done, value, what
it saw); it is checked again at every change notice (see changes.py), never on a
timer. A wait that times out raises WaitTimeout with what the condition saw last:
the group's state and members, the committed offsets, the matching requests.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import trio

from .names import error_code
from .views import committed_view, group_view, share_partition_view

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from ..shell.server import Server
    from .request_log import RequestRecord
    from .views import GroupView, MemberView

    Check = Callable[[Server], tuple[bool, Any, str]]

DEFAULT_TIMEOUT_S = 10.0


class WaitTimeout(TimeoutError):
    """A wait's condition did not hold in time; the message shows the state it saw last."""


def _timeout(timeout: float) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout: expected seconds > 0, got {timeout!r}")
    return float(timeout)


def wait_blocking(run: Callable[[Callable[[], Any]], Any], server: Callable[[], Server],
                  check: Check, what: str,
                  timeout: float) -> Any:
    """Wait on another thread than the broker's: `run` calls into the broker's thread."""
    timeout = _timeout(timeout)
    deadline = time.monotonic() + timeout

    def look() -> tuple[Any, int, tuple[bool, Any, str]]:
        srv = server()
        changes = srv.broker.changes
        return changes, changes.version, check(srv)

    while True:
        changes, seen, (done, value, shown) = run(look)
        if done:
            return value
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not changes.wait_thread(seen, remaining):
            raise WaitTimeout(f"timed out after {timeout:g} s waiting for {what}; {shown}")


async def wait_trio(server: Callable[[], Server], check: Check,
                    what: str, timeout: float) -> Any:
    """Wait inside the broker's own trio run (its clock: trio's, maybe a MockClock)."""
    timeout = _timeout(timeout)
    shown = ""
    with trio.move_on_after(timeout):
        while True:
            srv = server()
            done, value, shown = check(srv)
            if done:
                return value
            await srv.broker.changes.changed()
    raise WaitTimeout(f"timed out after {timeout:g} s waiting for {what}; {shown}")


# -- conditions ---------------------------------------------------------------------


def _describe(view: GroupView | None) -> str:
    if view is None:
        return "there is no such group"
    members = "; ".join(f"{m.client_id or m.member_id} {_held(m)}" for m in view.members)
    return (f"it is {view.state} ({view.type}, generation {view.generation}) with "
            f"{len(view.members)} members" + (f": {members}" if members else ""))


def _held(member: MemberView) -> str:
    """A member's partitions, or a streams member's active and standby tasks."""
    if member.tasks is not None:
        return (f"active {[f'{s}_{p}' for s, p in member.tasks.active]} "
                f"standby {[f'{s}_{p}' for s, p in member.tasks.standby]}")
    return str([f"{t}:{p}" for t, p in member.partitions])


def group_condition(group: str, state: str | None, members: int | None) -> tuple[Check, str]:
    if not isinstance(group, str):
        raise ValueError(f"group: expected a group id, got {group!r}")
    if state is not None and not isinstance(state, str):
        raise ValueError(f"state: expected a group state name, got {state!r}")
    if members is not None and (isinstance(members, bool) or not isinstance(members, int)
                                or members < 0):
        raise ValueError(f"members: expected a member count >= 0, got {members!r}")

    def check(server: Server) -> tuple[bool, Any, str]:
        view = group_view(server.broker.groups, server.broker.topics.topic_name, group)
        current = "Dead" if view is None else view.state
        count = 0 if view is None else len(view.members)
        done = ((state is None or current.lower() == state.lower())
                and (members is None or count == members))
        return done, view, _describe(view)

    wanted = " and ".join(x for x in (
        state and f"{state}", members is not None and f"{members} members") if x)
    return check, f"group {group!r} to be {wanted or 'described'}"


def committed_condition(group: str, offsets: Mapping[tuple[str, int], int]) -> tuple[Check, str]:
    if not isinstance(group, str):
        raise ValueError(f"group: expected a group id, got {group!r}")
    try:
        wanted = {(str(t), int(p)): int(o) for (t, p), o in dict(offsets).items()}
    except (TypeError, ValueError):
        raise ValueError("offsets: expected {(topic, partition): offset}, "
                         f"got {offsets!r}") from None

    def check(server: Server) -> tuple[bool, Any, str]:
        committed = committed_view(server.broker.groups, group)
        done = (committed == {} if not wanted
                else all(committed.get(tp) == o for tp, o in wanted.items()))
        return done, committed, f"committed now: {_offsets(committed)}"

    what = "no committed offsets" if not wanted else f"committed offsets {_offsets(wanted)}"
    return check, f"{what} in group {group!r}"


SHARE_STATES = ("available", "acquired", "acknowledged", "archived")


def share_condition(group: str, topic: str, partition: int, start_offset: int | None,
                    counts: Mapping[str, int | None]) -> tuple[Check, str]:
    """A share partition whose start offset and counts of records in each state (those
    given) are as wanted."""
    for name, text in (("group", group), ("topic", topic)):
        if not isinstance(text, str):
            raise ValueError(f"{name}: expected a name, got {text!r}")
    wanted = {s: n for s, n in counts.items() if n is not None}
    numbers = [("partition", partition), ("start_offset", start_offset), *wanted.items()]
    for name, number in numbers:
        if number is not None and (isinstance(number, bool) or not isinstance(number, int)
                                   or number < 0):
            raise ValueError(f"{name}: expected a number >= 0, got {number!r}")

    def check(server: Server) -> tuple[bool, Any, str]:
        broker = server.broker
        view = share_partition_view(broker.groups, broker.topics, group, topic, partition)
        if view is None:
            return False, None, "no member of the group has fetched the partition yet"
        have = {s.lower(): n for s, n in view.counts().items()}
        done = ((start_offset is None or view.start_offset == start_offset)
                and all(have.get(s, 0) == n for s, n in wanted.items()))
        shown = (f"start offset {view.start_offset}, end offset {view.end_offset}, "
                 + (", ".join(f"{n} {s}" for s, n in sorted(have.items())) or "none in flight"))
        return done, view, shown

    parts = ([f"start offset {start_offset}"] if start_offset is not None else []) + [
        f"{n} {s}" for s, n in wanted.items()]
    return check, (f"share partition {topic}-{partition} of group {group!r} to have "
                   + (" and ".join(parts) or "been fetched"))


def _offsets(offsets: Mapping[tuple[str, int], int]) -> str:
    return "{" + ", ".join(f"{t}:{p}={o}" for (t, p), o in sorted(offsets.items())) + "}"


def request_condition(filters: dict[str, Any], count: int) -> tuple[Check, str]:
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count: expected a count >= 1, got {count!r}")
    if filters.get("error") is not None:
        error_code(filters["error"])  # refuse a bad name before waiting

    found: list[RequestRecord] = []
    looked = [filters["since"]]  # the newest seq looked at: each look reads only later ones

    def check(server: Server) -> tuple[bool, Any, str]:
        log = server.broker.request_log
        if log.last_seq < looked[0]:  # a new log (the broker restarted)
            looked[0] = filters["since"] if filters["since"] < log.last_seq else 0
        found.extend(log.query(**{**filters, "since": looked[0]}))
        looked[0] = max(looked[0], log.last_seq)
        shown = f"{len(found)} matching requests seen" + (
            ": " + "; ".join(_request(r) for r in found[-5:]) if found else "")
        return len(found) >= count, list(found), shown

    given = ", ".join(f"{k}={v!r}" for k, v in filters.items() if v is not None)
    return check, f"{count} request(s) with {given or 'any API'}"


def _request(r: RequestRecord) -> str:
    errors = ",".join(r.errors) or "no error"
    return (f"#{r.seq} {r.api} v{r.version} from {r.client_id!r} "
            f"groups={r.groups} {errors}")


def fault_condition(rule_id: int, fired: int | None, held: int | None) -> tuple[Check, str]:
    for name, value in (("fired", fired), ("held", held)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ValueError(f"{name}: expected a count >= 0, got {value!r}")
    if fired is None and held is None:
        fired = 1

    def check(server: Server) -> tuple[bool, Any, str]:
        status = server.broker.faults.get(rule_id)
        done = ((fired is None or status.fired >= fired)
                and (held is None or status.held >= held))
        return done, status, (f"rule {rule_id} matched {status.matched}, fired {status.fired}, "
                              f"holds {status.held}")

    wanted = " and ".join(x for x in (
        fired is not None and f"fired {fired} times", held is not None and f"holding {held}") if x)
    return check, f"fault rule {rule_id} to have {wanted}"

