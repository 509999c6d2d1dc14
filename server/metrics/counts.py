"""What is counted as it happens, in plain dicts read at scrape: requests served, their
errors and their time, per API (the dispatcher counts them); events by kind (the
event history calls `EventCounts` with each).

The dispatcher already holds the plan of each request (its API name and version),
so counting is a dict increment keyed by that object, read only at scrape. Errors
are counted as Kafka's `errorCounts` does: each error code of the response, NONE
included, as often as it occurs (a partition's, a topic's and the top level's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kcsim.coordinator.records import GroupEventValue


class ServedPlan(Protocol):
    """What the counts read of a request's plan (requests/plans.py)."""

    name: str
    version: int


class RequestCounts:
    """Per plan (one API at one version): requests, nanoseconds spent, error codes seen."""

    __slots__ = ("errors", "served", "time_ns")

    def __init__(self) -> None:
        self.served: dict[Any, int] = {}  # plan -> requests answered (or dropped: acks=0)
        self.time_ns: dict[Any, int] = {}  # plan -> ns from decoded to answer encoded
        self.errors: dict[Any, dict[int, int]] = {}  # plan -> error code -> occurrences

    def error_counts(self, plan: object) -> dict[int, int]:
        found = self.errors.get(plan)
        if found is None:
            found = self.errors[plan] = {}
        return found


def count_errors(value: Any, counts: dict[int, int]) -> None:
    """Add each error code of a response (the fields its codec marks as errors) to counts."""
    for name in getattr(value, "error_fields", ()):
        item = getattr(value, name, None)
        if name == "error_code":
            if item is not None:
                counts[item] = counts.get(item, 0) + 1
        elif isinstance(item, list):
            for element in item:
                count_errors(element, counts)
        elif item is not None:
            count_errors(item, counts)


class EventCounts:
    """Events by (kind, group type) since the broker started, fed by the event history."""

    __slots__ = ("by_kind",)

    def __init__(self) -> None:
        self.by_kind: dict[tuple[str, str], int] = {}

    def __call__(self, event: GroupEventValue) -> None:
        key = (event.kind, event.group_type)
        self.by_kind[key] = self.by_kind.get(key, 0) + 1
