"""A transaction handler that raises half-way changes nothing, as a group handler does.

Each test runs the same history on two transaction coordinators; on one of them a
request's handler raises after part of its work (a dependency it calls fails). That
request is answered UNKNOWN_SERVER_ERROR and reported once; the coordinator's state is
exactly as before, its Outcome carries none of the call's records or endings, and the
next call answers and writes exactly what it does on the twin that never failed.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kcsim.coordinator import Outcome, TransactionCoordinator, TxnConfig
from kcsim.coordinator.transactions.metadata import TxnMetadata
from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode as E

InitProducerId = request_class(22)
AddPartitions = request_class(24)
EndTxn = request_class(26)
NOW = 1_000_000


class Bug(RuntimeError):
    pass


class Topics:
    """Topic metadata whose lookup of `broken` raises."""

    def __init__(self) -> None:
        self.broken: str | None = None

    def partition_count(self, name: str) -> int | None:
        if name == self.broken:
            raise Bug(f"looking up {name}")
        return 2

    def topic_name(self, topic_id: Any) -> str | None:
        return None

    def topic_id(self, name: str) -> Any:
        return None


def coordinator() -> tuple[TransactionCoordinator, Topics]:
    topics = Topics()
    tc = TransactionCoordinator(TxnConfig(), topics)
    tc.tick(NOW)
    return tc, topics


def state(tc: TransactionCoordinator) -> dict[str, Any]:
    """Everything the coordinator holds, durable and soft."""
    return {
        "txns": copy.deepcopy(tc.txns),
        "timers": {key: tc.deadlines.deadline(key) for key in list(tc.deadlines.keys())},
        "earliest": tc.next_deadline(),
        "ids": (tc._next_id, tc._block_end, tc._allocating),
    }


def init(tc: TransactionCoordinator, txn_id: str, token: object = "init") -> Outcome:
    return tc.init_producer_id(4, InitProducerId(
        transactional_id=txn_id, transaction_timeout_ms=60_000, producer_id=-1,
        producer_epoch=-1), NOW, token)


def add(tc: TransactionCoordinator, *txns: tuple[str, int, int, str]) -> Outcome:
    """AddPartitionsToTxn v4: each (transactional id, producer id, epoch, topic)."""
    return tc.add_partitions(4, AddPartitions(transactions=[
        AddPartitions.AddPartitionsToTxnTransaction(
            transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, verify_only=False,
            topics=[AddPartitions.AddPartitionsToTxnTopic(name=topic, partitions=[0, 1])])
        for txn_id, pid, epoch, topic in txns]), NOW, "add")


def begin(tc: TransactionCoordinator, txn_id: str, topic: str) -> tuple[int, int]:
    response = init(tc, txn_id).responses[0][1]
    pid, epoch = response.producer_id, response.producer_epoch
    add(tc, (txn_id, pid, epoch, topic))
    return pid, epoch


def outcome_of(outcome: Outcome) -> tuple[Any, ...]:
    return (outcome.responses, outcome.records, list(outcome.endings), outcome.failures)


def contained(tc: TransactionCoordinator, call: Any) -> Any:
    """Make the call that raises half-way; check it changed nothing; return its answer."""
    before = state(tc)
    outcome = call()
    assert state(tc) == before
    assert outcome.records == [] and list(outcome.endings) == []
    [failure] = outcome.failures
    assert isinstance(failure.error, Bug) and failure.group_id is None
    [(_token, response)] = outcome.responses
    return response


def test_add_partitions_raising_for_its_second_transaction_keeps_the_first_unchanged():
    tc, topics = coordinator()
    twin, _ = coordinator()
    handles = {}
    for c in (tc, twin):
        handles = {t: begin(c, t, "a") for t in ("t1", "t2")}
    (p1, e1), (p2, e2) = handles["t1"], handles["t2"]
    topics.broken = "b"
    # t1 gains partitions of "c" (its record written, its time-out moved), then the
    # lookup for t2's topic raises.
    response = contained(tc, lambda: add(tc, ("t1", p1, e1, "c"), ("t2", p2, e2, "b")))
    assert response.error_code == E.UNKNOWN_SERVER_ERROR
    assert response.results_by_transaction == []
    topics.broken = None
    assert outcome_of(add(tc, ("t1", p1, e1, "c"))) == outcome_of(add(twin, ("t1", p1, e1, "c")))
    assert state(tc) == state(twin)


def test_init_producer_id_raising_after_fencing_an_open_transaction_keeps_it_open(monkeypatch):
    tc, _ = coordinator()
    twin, _ = coordinator()
    for c in (tc, twin):
        begin(c, "tx", "a")
    real = TxnMetadata.epoch_exhausted
    checks = []

    def raising(meta: TxnMetadata) -> bool:
        checks.append(meta.state.value)
        if len(checks) == 2:
            raise Bug("epoch check")
        return real(meta)

    # The open transaction is prepared, handed over as an ending and completed, then the
    # second epoch check (for the new epoch) raises.
    monkeypatch.setattr(TxnMetadata, "epoch_exhausted", raising)
    response = contained(tc, lambda: init(tc, "tx"))
    assert response.error_code == E.UNKNOWN_SERVER_ERROR
    assert checks == ["PrepareEpochFence", "CompleteAbort"]
    assert tc.producer_epochs()["tx"][2] == "Ongoing"
    monkeypatch.setattr(TxnMetadata, "epoch_exhausted", real)
    again, expected = init(tc, "tx"), init(twin, "tx")
    assert outcome_of(again) == outcome_of(expected)
    assert [e.transactional_id for e in again.endings] == ["tx"]
    assert state(tc) == state(twin)


def test_a_new_transactional_id_raising_after_its_producer_id_leaves_the_ids_unused(monkeypatch):
    tc, _ = coordinator()
    twin, _ = coordinator()
    real = TxnMetadata.to_value

    def raising(meta: TxnMetadata) -> Any:
        raise Bug("record")

    # A producer id block is reserved (its record written) and an id handed out, then
    # the transactional id's record cannot be made.
    monkeypatch.setattr(TxnMetadata, "to_value", raising)
    response = contained(tc, lambda: init(tc, "tx"))
    assert (response.error_code, response.producer_id) == (E.UNKNOWN_SERVER_ERROR, -1)
    monkeypatch.setattr(TxnMetadata, "to_value", real)
    assert outcome_of(init(tc, "tx")) == outcome_of(init(twin, "tx"))
    assert state(tc) == state(twin)


def test_a_time_out_raising_leaves_its_transaction_and_ends_the_others(monkeypatch):
    tc, _ = coordinator()
    for txn_id in ("good", "bad", "later"):  # their time-outs fire in this order
        begin(tc, txn_id, "a")
    real = TxnMetadata.moved_to

    def raising(meta: TxnMetadata, *args: Any, **changes: Any) -> TxnMetadata:
        moved = real(meta, *args, **changes)
        if meta.transactional_id == "bad" and moved.state.value == "CompleteAbort":
            raise Bug("abort")
        return moved

    # "bad" is prepared and handed over as an ending, then its Complete record fails.
    before = copy.deepcopy(tc.txns["bad"])
    monkeypatch.setattr(TxnMetadata, "moved_to", raising)
    outcome = tc.tick(NOW + 60_001)
    [failure] = outcome.failures
    assert isinstance(failure.error, Bug)
    assert [e.transactional_id for e in outcome.endings] == ["good", "later"]
    written = outcome.records + [r for e in outcome.endings for r in e.then]
    assert [(r.key.transactional_id, r.value.state) for r in written] == [
        ("good", "PrepareAbort"), ("good", "CompleteAbort"),
        ("later", "PrepareAbort"), ("later", "CompleteAbort")]
    assert tc.txns["bad"] == before
    assert tc.producer_epochs()["later"][2] == "CompleteAbort"


@pytest.mark.parametrize("commit", [True, False])
def test_an_end_hands_over_the_rest_as_an_ending(commit):
    """EndTxn's Outcome: its Prepare record, then one ending whose `then` holds Complete."""
    tc, _ = coordinator()
    pid, epoch = begin(tc, "tx", "a")
    outcome = tc.end_txn(3, EndTxn(transactional_id="tx", producer_id=pid, producer_epoch=epoch,
                                   committed=commit), NOW, "end")
    word = "Commit" if commit else "Abort"
    assert [r.value.state for r in outcome.records] == ["Prepare" + word]
    [ending] = outcome.endings
    assert (ending.producer_id, ending.commit, ending.partitions) == (pid, commit,
                                                                      [("a", 0), ("a", 1)])
    assert [r.value.state for r in ending.then] == ["Complete" + word]
