"""The metrics of one broker: its own CollectorRegistry (never prometheus_client's global
one: several brokers may run in one process), read from the state at each scrape.

`BrokerMetrics(state, plans, events, since)` reads the counts the dispatcher keeps
(requests on their plans, and events from the event history); `render()` is the Prometheus text of a
scrape: the broker's families (written directly, families.py) and the process' (CPU,
memory, open files: prometheus_client's ProcessCollector). `registry` holds both for
code that wants prometheus_client's API (it parses the same text back).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from . import names
from .families import Families
from .groups import group_families, partition_families, rebalance_families
from .rates import WindowedRate
from .traffic import request_families, topic_families, transaction_families

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from prometheus_client.core import Metric

    from ..state.broker_state import BrokerState
    from .counts import EventCounts, PlanCounts

# The text format the families are written in (prometheus_client's newest is 1.0.0, which
# Prometheus releases before 3.0 do not know).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class BrokerMetrics:
    """One broker's metrics: Kafka's names for what Kafka measures, kcsim_ for the rest."""

    def __init__(self, state: BrokerState, plans: Callable[[], list[PlanCounts]],
                 events: EventCounts, since: float) -> None:
        """`plans`: the request plans, with what each counted; `since`: when the counts
        started (time.monotonic), where rates start from."""
        self.since = since
        self.state = state
        self.plans = plans
        self.events = events
        self._rates: dict[str, WindowedRate] = {}
        self._process = CollectorRegistry(auto_describe=False)
        ProcessCollector(registry=self._process)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)
        ProcessCollector(registry=self.registry)

    def rate(self, name: str, count: int) -> float:
        found = self._rates.get(name)
        if found is None:
            found = self._rates[name] = WindowedRate(self.since)
        return found.rate(count)

    def families(self) -> Families:
        """The broker's families of a scrape now."""
        state = self.state
        out = Families()
        if state.groups is not None:
            group_families(out, state.groups, state.topics)
        rebalance_families(out, self.events, self.rate)
        committed = state.groups.offsets_committed if state.groups is not None else 0
        out.untyped(names.OFFSET_COMMIT_COUNT, [("", committed)])
        out.untyped(names.OFFSET_COMMIT_RATE,
                    [("", self.rate(names.OFFSET_COMMIT_RATE, committed))])
        request_families(out, self.plans())
        topic_families(out, state.throughput, state.topics)
        partition_families(out, state.topics)
        transaction_families(out, state.transactions)
        return out

    def collect(self) -> Iterator[Metric]:
        """The broker's families as prometheus_client's (its registry calls this)."""
        return iter(text_string_to_metric_families(self.families().text()))

    def render(self) -> bytes:
        """The Prometheus text exposition of a scrape now."""
        return self.families().text().encode() + generate_latest(self._process)
