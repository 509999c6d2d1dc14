"""The state of one broker: topics, partitions and both coordinators, changed by records.

Every durable change takes one path, live and at replay: `apply` (and `apply_all`,
which hands runs of group records to the coordinator in one call). Handlers compute
their records first and `change` applies them last thing, so a handler that fails
half-way has changed nothing. Time is handed in: `now_ms` is the time of the request
being handled, and the shell's timer fires both coordinators' deadlines through
`next_deadline` and `tick`.

In memory (no writer), `on_durable` is told of each run of records once applied, as the
writer's `on_durable` is on disk; the `__consumer_offsets` feed sets it once at start.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import trio

from kcsim.coordinator import Outcome, TransactionCoordinator, TxnConfig
from kcsim.coordinator.records import ProducerIdBlockKey, TransactionKey

from ..acl.authorizer import Authorizer
from ..acl.index import AclIndex
from ..acl.records import AclKey, binding_of
from .answers import AfterDurable, Durable
from .broker_configs import BrokerConfigs
from .config_records import BrokerConfigKey
from .fetch_sessions import FetchSessionCache
from .scram_credentials import ScramCredentialKey, ScramCredentials
from .share_sessions import ShareSessionCache
from .throughput import Throughput
from .topic_records import TopicKey
from .topics import TopicRegistry
from .topology import Topology
from .txn_endings import settle

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from kcsim.coordinator import GroupCoordinator
    from kcsim.storage import Record

    from ..config import Config
    from ..offsets.activation import Activation
    from ..offsets.topic import OffsetsTopic
    from ..shell.clock import Clock
    from .answers import Released

TRANSACTION_KEYS = frozenset({TransactionKey, ProducerIdBlockKey})
# The records the broker state folds itself; every other record is the groups'.
_OWN_KEYS = frozenset({TopicKey, BrokerConfigKey, ScramCredentialKey, AclKey,
                       *TRANSACTION_KEYS})


class BrokerState:
    """Topics, partitions and coordinators of one broker, and the path records take."""

    def __init__(self, config: Config, topics: TopicRegistry | None = None,
                 groups: GroupCoordinator | None = None, clock: Clock | None = None) -> None:
        self.config = config
        self.topics = topics if topics is not None else TopicRegistry()
        self.broker_configs = BrokerConfigs()  # dynamic broker configs
        self.scram_credentials = ScramCredentials()  # what SCRAM clients authenticate with
        self.acls = AclIndex()  # kept (and replayed) whether or not an authorizer checks them
        # `--authorizer`: what checks each request's operation; None: nothing is checked.
        self.authorizer = (Authorizer(self.acls, config.super_user_set,
                                      config.allow_everyone_if_no_acl_found)
                           if config.authorizer else None)
        # Incremental fetch sessions (KIP-227): soft state, gone at a restart as in Kafka.
        self.fetch_sessions = FetchSessionCache(config.max_incremental_fetch_session_cache_slots)
        self.share_sessions = ShareSessionCache()  # KIP-932's, soft state too
        self.groups = groups
        self.transactions = TransactionCoordinator(
            TxnConfig(config.transaction_max_timeout_ms,
                      config.feature_levels.get("transaction.version", 0)), self.topics)
        if groups is not None and groups.config.events:
            self.transactions.events = groups.events  # one event log for groups and transactions
        # The shell's clock (long polls wait by it); None where no shell serves the state.
        self.clock = clock
        self.now_ms = int(time.time() * 1000)  # the time of the request being handled
        self.data_arrived = trio.lowlevel.ParkingLot()  # long polls wait here for produces
        self.offsets_topic: OffsetsTopic | None = None  # __consumer_offsets, set by app.build
        self.offsets_activation: Activation | None = None  # its first read fills it
        self.on_durable: Callable[[Sequence[Record]], None] | None = None
        self.throughput = Throughput()  # bytes in and out per topic, for the metrics
        # Who leads and coordinates what when this kcsim plays several brokers (None: one).
        self.topology = (Topology(config.node_ids,
                                  offsets_partitions=config.offsets_topic_num_partitions)
                         if config.brokers > 1 else None)

    # -- state changes ------------------------------------------------------

    def apply(self, record: Record) -> None:
        """The one path every durable change takes, live and at replay."""
        kind = type(record.key)
        if kind is TopicKey:
            self.topics.apply(record)
        elif kind is BrokerConfigKey:
            self.broker_configs.apply(record)
        elif kind in TRANSACTION_KEYS:
            self.transactions.apply(record)
        elif kind is ScramCredentialKey:
            self.scram_credentials.apply(record)
        elif kind is AclKey:
            acl = binding_of(record.key)
            if record.value is None:
                self.acls.remove(acl)
            else:
                self.acls.add(acl)
        elif self.groups is not None:
            self.groups.apply(record)

    def apply_all(self, records: Sequence[Record]) -> None:
        """`apply` for each record, in order; runs of group records go to the coordinator in
        one call each, as live writes do (replay reads the log in such slices)."""
        groups = self.groups
        own = _OWN_KEYS
        run = 0
        for i, record in enumerate(records):
            if type(record.key) in own:
                if groups is not None and run < i:
                    groups.apply_all(records[run:i])
                self.apply(record)
                run = i + 1
        if groups is not None and run < len(records):
            groups.apply_all(records[run:] if run else records)
    # -- time: the coordinators' deadlines ------------------------------------

    def next_deadline(self) -> int | None:
        """The earliest time the shell should tick at (0: at once)."""
        txn = self.transactions.next_deadline()
        groups = self.groups.next_deadline() if self.groups is not None else None
        if txn is None or groups is None:
            return groups if txn is None else txn
        return min(txn, groups)

    def tick(self, now_ms: int) -> Outcome:
        """Fire what is due at `now_ms` in both coordinators: the groups' outcome, with the
        records of transactions that ended (timed out, or left ending by a restart) and,
        among the answers it releases once they are durable, the writing of their markers."""
        self.now_ms = now_ms
        outcome = self.groups.tick(now_ms) if self.groups is not None else Outcome()
        if self.groups is not None and self.groups.shares.released:
            self.groups.shares.released = False  # share locks ran out: wake parked fetches
            self.data_arrived.unpark_all()
        txn = self.transactions.tick(now_ms)
        records, after = settle(self, txn, now_ms)
        outcome.records += records
        outcome.failures += txn.failures
        if after is not None:
            outcome.responses.append((AfterDurable(after), None))
        return outcome

    def change(self, records: list[Record], response: Any) -> Any:
        """Apply a handler's records, last thing before it returns, and answer once durable.

        Handlers of the broker's own state compute every record first and apply
        them here, so a handler that fails half-way has changed nothing."""
        if not records:
            return response
        for record in records:
            self.apply(record)
        return Durable(response, records, [])

    @staticmethod
    def release(responses: Released) -> None:
        """Hand answers to the requests waiting for them (and run the steps that waited for
        the same records to be durable)."""
        for token, response in responses:
            if type(token) is AfterDurable:
                token.step()
                continue
            token.response = response
            if token.waiter is not None:
                token.waiter.set()
