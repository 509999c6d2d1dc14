"""One transactional id's producer and open transaction, and its record form."""

from __future__ import annotations

from dataclasses import dataclass, field

from kcsim.coordinator.records import TransactionValue, TxnPartitions

from .state import TxnState, check_transition

MAX_EPOCH = 32767


@dataclass
class TxnMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = TxnState.EMPTY
    partitions: set[tuple[str, int]] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)
    start_ms: int = -1
    update_ms: int = -1
    client_version: int = 0  # the transaction version of the request that made this state
    previous_producer_id: int = -1  # before an epoch overflow gave a new one (KIP-890)
    next_producer_id: int = -1  # while an ending transaction's overflow is pending

    def to_value(self) -> TransactionValue:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(self.partitions):
            by_topic.setdefault(topic, []).append(partition)
        return TransactionValue(
            self.producer_id, self.producer_epoch, self.timeout_ms, self.state.value,
            [TxnPartitions(t, ps) for t, ps in by_topic.items()], sorted(self.groups),
            self.start_ms, self.update_ms, self.client_version, self.previous_producer_id,
            self.next_producer_id)

    @classmethod
    def from_value(cls, transactional_id: str, value: TransactionValue) -> TxnMetadata:
        return cls(transactional_id, value.producer_id, value.producer_epoch, value.timeout_ms,
                   TxnState(value.state),
                   {(tp.topic, p) for tp in value.txn_partitions for p in tp.partitions},
                   set(value.groups), value.start_ms, value.update_ms,
                   value.client_transaction_version, value.previous_producer_id,
                   value.next_producer_id)

    def moved_to(self, state: TxnState, now_ms: int, **changes: object) -> TxnMetadata:
        """A copy in `state` (checked against the transition table) with `changes` made."""
        check_transition(self.state, state)
        new = TxnMetadata(self.transactional_id, self.producer_id, self.producer_epoch,
                          self.timeout_ms, state, set(self.partitions), set(self.groups),
                          self.start_ms, now_ms, self.client_version,
                          self.previous_producer_id, self.next_producer_id)
        for name, value in changes.items():
            setattr(new, name, value)
        return new

    def epoch_exhausted(self) -> bool:
        """Kafka starts a new producer id rather than bump to the last epoch."""
        return self.producer_epoch >= MAX_EPOCH - 1
