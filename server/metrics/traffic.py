"""Requests per API, their errors and time, bytes and messages per topic, offsets
committed, open transactions: read from the counts the request layer keeps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.errors import ErrorCode

from . import names
from .families import labels

if TYPE_CHECKING:
    from ..state.throughput import Throughput
    from .counts import PlanCounts
    from .families import Families


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def request_families(out: Families, plans: list[PlanCounts]) -> None:
    """RequestMetrics: RequestsPerSec per API and version, ErrorsPerSec per API and error,
    TotalTimeMs per API (its count: the requests; its mean: of those timed)."""
    samples: list[tuple[str, float]] = []
    per_api: dict[str, list[int]] = {}  # name -> [requests, timed, ns]
    errors: dict[tuple[str, int], int] = {}
    for plan in sorted(plans, key=lambda p: (p.name, p.version)):
        if not plan.served:
            continue
        samples.append((labels(name="RequestsPerSec", request=plan.name,
                               version=str(plan.version)), plan.served))
        total = per_api.setdefault(plan.name, [0, 0, 0])
        total[0] += plan.served
        total[1] += plan.timed
        total[2] += plan.time_ns
        codes = dict(plan.errors)
        codes[0] = plan.error_fields - sum(codes.values())  # NONE
        for code, n in codes.items():
            if n:
                errors[plan.name, code] = errors.get((plan.name, code), 0) + n
    samples += [(labels(error=_error_name(code), name="ErrorsPerSec", request=name), n)
                for (name, code), n in sorted(errors.items())]
    samples += [(labels(name="TotalTimeMs", request=name), n)
                for name, (n, _, _) in sorted(per_api.items())]
    out.untyped(names.REQUEST_METRICS_COUNT, samples)
    out.untyped(names.REQUEST_METRICS_MEAN,
                [(labels(name="TotalTimeMs", request=name), ns / timed / 1e6 if timed else 0.0)
                 for name, (_, timed, ns) in sorted(per_api.items())])


def topic_families(out: Families, throughput: Throughput, topics: Any) -> None:
    """BrokerTopicMetrics: bytes in and out, messages in; broker-wide and per live topic."""
    samples: list[tuple[str, float]] = []
    for bean, counts in (("BytesInPerSec", throughput.bytes_in),
                         ("BytesOutPerSec", throughput.bytes_out),
                         ("MessagesInPerSec", throughput.messages_in)):
        samples.append((labels(name=bean), sum(counts.values())))
        samples += [(labels(name=bean, topic=topic), n)
                    for topic, n in sorted(counts.items()) if topic in topics.by_name]
    out.untyped(names.BROKER_TOPIC_METRICS_COUNT, samples)


def transaction_families(out: Families, transactions: Any) -> None:
    """Transactional ids by state, and how many have a transaction open."""
    by_state: dict[str, int] = {}
    for meta in list(transactions.txns.values()):
        by_state[meta.state.value] = by_state.get(meta.state.value, 0) + 1
    out.gauge(names.TRANSACTIONS, [(labels(state=s), n) for s, n in sorted(by_state.items())],
              "transactional ids by the state of their transaction")
    open_states = ("Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence")
    out.gauge(names.TRANSACTIONS_OPEN, [("", sum(by_state.get(s, 0) for s in open_states))],
              "transactions begun and not yet committed or aborted")
