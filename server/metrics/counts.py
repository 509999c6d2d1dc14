"""What is counted as it happens, read at scrape: requests served, their time and the
error codes of their answers (the dispatcher counts them on each request's plan, an
object it already holds: `PlanCounts`); events by kind (the event history calls
`EventCounts` with each).

Errors are counted as Kafka's `errorCounts` does: each error code of an answer, NONE
included, as often as it occurs (a partition's, a topic's, the top level's). Walking
an answer generically costs more than a heartbeat's whole handling, so each response
class gets a counter compiled for it (`error_counter`) from the fields its codec marks
as errors: plain loops over those fields, a dict touched only for a non-zero code; it
returns the error fields it saw, and NONE is those less the others, worked out at scrape.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:

    from kcsim.coordinator.records import GroupEventValue

# Requests timed: one in TIME_EVERY (the mean of a sample; the count is exact).
TIME_EVERY = 16

ErrorCounter = typing.Callable[[Any, dict[int, int]], int]


class PlanCounts:
    """The counts kept on each request plan (requests/plans.py inherits them)."""

    __slots__ = ()
    name: str
    version: int
    served: int  # requests answered (or dropped: acks=0)
    timed: int  # of which timed (one in TIME_EVERY)
    time_ns: int  # their time, decoded to answer encoded
    error_fields: int  # error codes seen in answers, NONE included
    errors: dict[int, int]  # error code (not NONE) -> occurrences in answers


def errors_below_top(cls: type) -> bool:
    """Whether answers of `cls` hold error codes below their top level (in their topics,
    partitions, members): those the dispatcher counts with the codec's counting encoder
    as it writes them, rather than walking the answer again."""
    fields = tuple(getattr(cls, "error_fields", ()))
    return bool(fields) and fields != ("error_code",)


def error_counter(cls: type) -> ErrorCounter | None:
    """A function counting the error codes (but NONE) of a `cls` answer into a dict,
    returning how many it holds; None for an answer whose one error code is its top
    level's (a heartbeat's), which the dispatcher reads inline."""
    if tuple(getattr(cls, "error_fields", ())) == ("error_code",):
        return None
    lines = ["def count(v0, c):", "    n = 0"]
    _walk(cls, "v0", 1, lines)
    lines.append("    return n")
    scope: dict[str, Any] = {}
    exec("\n".join(lines), scope)  # the source is built from field names only
    counter: ErrorCounter = scope["count"]
    return counter


def _walk(cls: type, var: str, depth: int, lines: list[str], counted: bool = False) -> None:
    """The loops of `var` (a `cls`); `counted`: its own error code is in n already."""
    pad = "    " * depth
    for name in getattr(cls, "error_fields", ()):
        if name == "error_code":
            lines += [f"{pad}e = {var}.error_code", *([] if counted else [f"{pad}n += 1"]),
                      f"{pad}if e:", f"{pad}    c[e] = c.get(e, 0) + 1"]
            continue
        inner, many = _element(cls, name)
        item = f"v{depth}"
        if many:  # each element's own error code counted at once: n += len
            each = "error_code" in getattr(inner, "error_fields", ())
            lines += [f"{pad}s{depth} = {var}.{name} or ()",
                      *([f"{pad}n += len(s{depth})"] if each else []),
                      f"{pad}for {item} in s{depth}:"]
            body = len(lines)
            _walk(inner, item, depth + 1, lines, counted=each)
        else:
            lines += [f"{pad}{item} = {var}.{name}", f"{pad}if {item} is not None:"]
            body = len(lines)
            _walk(inner, item, depth + 1, lines)
        if len(lines) == body:
            lines.append(f"{pad}    pass")


def _element(cls: type, name: str) -> tuple[type, bool]:
    """The struct class a field holds (its elements', for a list) and whether it is a list."""
    field = next(f for f in msgspec.structs.fields(cls) if f.name == name)
    kind: Any = field.type
    many = False
    for arg in (kind, *typing.get_args(kind)):  # X, list[X], X | None
        if typing.get_origin(arg) is list:
            kind, many = typing.get_args(arg)[0], True
            break
    else:
        kind = next((a for a in (kind, *typing.get_args(kind))
                     if isinstance(a, type) and issubclass(a, msgspec.Struct)), kind)
    if typing.get_origin(kind) is not None:  # list[X] | None
        kind = typing.get_args(kind)[0]
    return kind, many


class EventCounts:
    """Events by (kind, group type) since the broker started, fed by the event history."""

    __slots__ = ("by_kind",)

    def __init__(self) -> None:
        self.by_kind: dict[tuple[str, str], int] = {}

    def __call__(self, event: GroupEventValue) -> None:
        key = (event.kind, event.group_type)
        self.by_kind[key] = self.by_kind.get(key, 0) + 1


