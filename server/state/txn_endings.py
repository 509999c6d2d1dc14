"""The end of a transaction across the broker: markers into its partitions, its pending
offsets into the groups, and the records that make both durable.

Order, as Kafka's: the coordinator's Prepare record, the groups' offsets and the
Complete record are persisted first; only once they are durable are the markers
appended to the partitions. A crash in between leaves a transaction the log says is
complete (or preparing) whose partitions still hold it open: at start-up
`TransactionCoordinator.recover` names those again and the markers are written then,
where the transaction is still open (at its end, every partition of it gets one).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .failures import log_failures

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim.coordinator import Ending, TxnOutcome
    from kcsim.storage import Record

    from .broker_state import BrokerState as Broker

log = logging.getLogger("kcsim.transactions")


def settle(broker: Broker, outcome: TxnOutcome,
           now_ms: int) -> tuple[list[Record], Callable[[], None] | None]:
    """The records to persist for `outcome`, and what to do once they are durable (write
    the markers; None when no transaction ended)."""
    if not outcome.endings:
        return list(outcome.records), None
    records: list[Record] = []
    taken = 0
    groups = broker.groups
    for ending in outcome.endings:
        records += outcome.records[taken:ending.position]
        taken = max(taken, ending.position)
        if groups is not None:
            done = groups.complete_transaction(ending.producer_id, ending.commit, now_ms)
            if done.failures:
                log_failures(done.failures)
            records += done.records
        records += ending.complete
    records += outcome.records[taken:]
    endings = list(outcome.endings)
    return records, lambda: write_markers(broker, endings, now_ms)


def write_markers(broker: Broker, endings: list[Ending], now_ms: int) -> None:
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
