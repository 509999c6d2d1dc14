"""The end of a transaction across the broker: markers into its partitions, its pending
offsets into the groups, and the records that make both durable.

Each `Ending` the transaction coordinator hands back runs its steps in order, as
Kafka's: its Prepare record (already among the records before it), the groups'
offsets, its Complete record (`then`); only once all of them are durable are the
markers appended to the partitions. A crash in between leaves a transaction the log
says is complete (or preparing) whose partitions still hold it open: the transaction
coordinator's first tick after a restart names those again and the markers are written
then, where the transaction is still open (at its end, every partition of it gets one).
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING

from .failures import log_failures

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from kcsim.coordinator import Ending, Outcome
    from kcsim.storage import Record

    from .broker_state import BrokerState as Broker

log = logging.getLogger("kcsim.transactions")


def settle(broker: Broker, outcome: Outcome,
           now_ms: int) -> tuple[list[Record], Callable[[], None] | None]:
    """The records to persist for `outcome`, in order, and what to do once they are
    durable (write the markers; None when no transaction ended)."""
    if not outcome.endings:
        return outcome.records, None
    records = list(outcome.records)  # up to the first ending's Prepare
    for ending in outcome.endings:
        records += complete_offsets(broker, ending, now_ms)
        records += ending.then  # its Complete record and what the call wrote after it
    return records, partial(write_markers, broker, outcome.endings, now_ms)


def complete_offsets(broker: Broker, ending: Ending, now_ms: int) -> list[Record]:
    """The groups' step: the producer's pending offsets become committed (or vanish)."""
    if broker.groups is None:
        return []
    done = broker.groups.complete_transaction(ending.producer_id, ending.commit, now_ms)
    if done.failures:
        log_failures(done.failures)
    return done.records


def write_markers(broker: Broker, endings: Sequence[Ending], now_ms: int) -> None:
    """Append each ended transaction's marker to every partition it is still open in."""
    written = False
    for ending in endings:
        for topic_name, index in ending.partitions:
            topic = broker.topics.get(topic_name)
            if topic is None or not 0 <= index < len(topic.partitions):
                continue  # deleted since: nothing is left to end
            partition = topic.partitions[index]
            written = partition.write_marker(ending.producer_id, ending.producer_epoch,
                                             ending.commit, now_ms,
                                             only_open=ending.recovering) or written
    if written:
        broker.data_arrived.unpark_all()
