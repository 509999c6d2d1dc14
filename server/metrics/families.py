"""The metric families of one scrape, built as prometheus_client's text format wants them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

if TYPE_CHECKING:
    from collections.abc import Iterable

    Samples = Iterable[tuple[dict[str, str], float]]


class Families:
    """The families of one scrape, in the order added; a name added twice adds samples."""

    def __init__(self) -> None:
        self.by_name: dict[str, Metric] = {}

    def _add(self, family: Metric, samples: Samples, sample_name: str) -> None:
        family = self.by_name.setdefault(family.name, family)
        add = family.add_sample
        for labels, value in samples:
            add(sample_name, labels, value)

    def untyped(self, name: str, samples: Samples, documentation: str = "") -> None:
        """A Kafka bean's attribute: untyped, as the JMX exporter shows it."""
        self._add(Metric(name, documentation or _bean(name), "unknown"), samples, name)

    def gauge(self, name: str, samples: Samples, documentation: str = "") -> None:
        self._add(GaugeMetricFamily(name, documentation or name), samples, name)

    def counter(self, name: str, samples: Samples, documentation: str = "") -> None:
        self._add(CounterMetricFamily(name, documentation or name), samples, name + "_total")


def _bean(name: str) -> str:
    return f"Kafka's {name} (JMX exporter default rules)"
