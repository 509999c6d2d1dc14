"""Prometheus metrics of one broker, named as the JMX exporter names Kafka's own.

Nothing here runs per request: the request layer counts into plain dicts
(`RequestCounts`, and the broker state's `Throughput`), the event history feeds a
count per kind of event, and everything else (group counts, members, lag, paused
partitions, open transactions) is read from the state when Prometheus scrapes
(`registry.BrokerMetrics.render`). `names.py` says which name follows which exporter.

The face is light: the request layer imports the counts without loading
prometheus_client (70 ms), which only `registry` and `http` need, loaded when metrics
are first served.
"""

from .counts import TIME_EVERY, EventCounts, PlanCounts, error_counter, errors_below_top

__all__ = ["TIME_EVERY", "EventCounts", "PlanCounts", "error_counter", "errors_below_top"]
