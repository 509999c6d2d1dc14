"""Transactions v2 (KIP-890 part 2), as Kafka 4.4 serves a client that sees
`transaction.version` 2 finalized: Produce v12+ and TxnOffsetCommit v5+ add to the
transaction themselves, every EndTxn v5+ bumps the epoch (a new producer id when the
epoch runs out), AddPartitionsToTxn's `verify_only` only looks, and the transaction's
records say which version each transition used."""

from __future__ import annotations

from typing import Any

import pytest

from kcsim.coordinator.records import TransactionKey, TransactionValue
from kcsim.coordinator.transactions.metadata import MAX_EPOCH
from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode as E
from kcsim.protocol.record_batch import batch_producer, control_type, iter_batches
from kcsim.storage.records import Record

from .txn_model import AddPartitions, Model

OUT0, OUT1 = ("out", 0), ("out", 1)


def begin(m: Model, txn_id: str = "tx") -> tuple[int, int]:
    r = m.init(txn_id)
    assert r.error_code == 0
    return r.producer_id, r.producer_epoch


def produce(m: Model, pid: int, epoch: int, seq: int = 0, partition: int = 0,
            value: bytes = b"v", version: int = 12) -> int:
    error, _ = m.produce("out", partition, [value], pid=pid, epoch=epoch, seq=seq,
                         txn_id="tx", version=version)
    return error


def describe(m: Model, txn_id: str = "tx") -> Any:
    request = request_class(65)(transactional_ids=[txn_id])
    return m.broker.transactions.describe(request).transaction_states[0]


def txn_values(m: Model) -> list[TransactionValue]:
    return [r.value for r in m.log if type(r.key) is TransactionKey and r.value is not None]


def markers(m: Model, topic: str, index: int) -> list[tuple[int, int, bool]]:
    """(producer id, epoch, commit) of each marker in the partition."""
    partition = m.partition(topic, index)
    out = []
    for _base, raw in partition.store.read(0, 1 << 30):
        for info in iter_batches(raw):
            producer = batch_producer(raw[info.start:info.start + info.size])
            if producer.control:
                out.append((producer.producer_id, producer.producer_epoch,
                            control_type(raw) == 1))
    return out


def test_produce_v12_adds_its_partition_and_the_record_comes_before_the_batch():
    m = Model()
    pid, epoch = begin(m)
    logged = len(m.log)
    assert produce(m, pid, epoch) == 0
    added = m.log[logged:]
    assert [type(r.key) for r in added] == [TransactionKey]
    assert added[0].value.state == "Ongoing"
    assert added[0].value.client_transaction_version == 2
    state = describe(m)
    assert state.transaction_state == "Ongoing"
    assert [(t.topic, t.partitions) for t in state.topics] == [("out", [0])]
    assert m.partition("out", 0).last_stable_offset == 0  # the batch is open
    assert produce(m, pid, epoch, seq=1) == 0  # already in the transaction: nothing written
    assert len(m.log) == logged + 1


def test_end_txn_v5_bumps_the_epoch_and_the_markers_carry_it():
    m = Model()
    pid, epoch = begin(m)
    assert produce(m, pid, epoch, value=b"one") == 0
    r = m.end("tx", pid, epoch, True, version=5)
    assert (r.error_code, r.producer_id, r.producer_epoch) == (0, pid, epoch + 1)
    assert markers(m, "out", 0) == [(pid, epoch + 1, True)]
    assert m.read_committed("out", 0) == [b"one"]
    # The next transaction runs on the bumped epoch, its sequences from 0 again.
    assert produce(m, pid, epoch, seq=1) == E.INVALID_PRODUCER_EPOCH
    assert produce(m, pid, epoch + 1, value=b"two") == 0
    r = m.end("tx", pid, epoch + 1, False, version=5)
    assert (r.error_code, r.producer_epoch) == (0, epoch + 2)
    assert m.read_committed("out", 0) == [b"one"]
    assert [v.client_transaction_version for v in txn_values(m)][-3:] == [2, 2, 2]


def test_an_end_retried_is_answered_again_and_the_old_epoch_is_fenced():
    m = Model()
    pid, epoch = begin(m)
    produce(m, pid, epoch)
    first = m.end("tx", pid, epoch, True, version=5)
    again = m.end("tx", pid, epoch, True, version=5)  # the answer was lost: a retry
    assert (again.error_code, again.producer_id, again.producer_epoch) == (
        0, first.producer_id, first.producer_epoch)
    assert len(markers(m, "out", 0)) == 1
    assert m.end("tx", pid, epoch, False, version=5).error_code == E.INVALID_TXN_STATE
    assert m.end("tx", pid, epoch - 1, True, version=5).error_code == E.PRODUCER_FENCED
    assert m.end("tx", pid, epoch + 2, True, version=5).error_code == E.PRODUCER_FENCED
    # The current epoch after a commit: the next transaction's end, with nothing in it.
    assert m.end("tx", pid, epoch + 1, True, version=5).error_code == E.INVALID_TXN_STATE
    aborted = m.end("tx", pid, epoch + 1, False, version=5)
    assert (aborted.error_code, aborted.producer_epoch) == (0, epoch + 2)
    assert len(markers(m, "out", 0)) == 1  # an abort of nothing writes no marker


def test_an_empty_transaction_can_be_aborted_not_committed():
    m = Model()
    pid, epoch = begin(m)
    assert m.end("tx", pid, epoch, True, version=5).error_code == E.INVALID_TXN_STATE
    r = m.end("tx", pid, epoch, False, version=5)
    assert (r.error_code, r.producer_epoch) == (0, epoch + 1)
    assert describe(m).transaction_state == "CompleteAbort"


def test_the_last_epoch_moves_to_a_new_producer_id():
    m = Model()
    pid, _ = begin(m)
    last = MAX_EPOCH - 1
    m.broker.transactions.apply(Record(TransactionKey("tx"), TransactionValue(
        pid, last, 60_000, "Empty", update_ms=m.now)))
    assert produce(m, pid, last) == 0
    r = m.end("tx", pid, last, True, version=5)
    assert r.error_code == 0 and r.producer_id != pid and r.producer_epoch == 0
    assert markers(m, "out", 0) == [(pid, MAX_EPOCH, True)]
    again = m.end("tx", pid, last, True, version=5)  # a retry names the old id
    assert (again.error_code, again.producer_id, again.producer_epoch) == (0, r.producer_id, 0)
    assert produce(m, r.producer_id, 0, value=b"next") == 0
    assert produce(m, pid, last, seq=1) == E.INVALID_PRODUCER_ID_MAPPING
    assert txn_values(m)[-1].previous_producer_id == pid


def test_produce_answers_the_coordinators_refusals_as_kafka_does():
    m = Model()
    pid, epoch = begin(m)
    assert produce(m, pid + 1, epoch) == E.INVALID_PRODUCER_ID_MAPPING
    m.init("tx")  # a new producer fences this one
    assert produce(m, pid, epoch) == E.INVALID_PRODUCER_EPOCH
    assert describe(m).transaction_state == "Empty"


def test_with_transaction_version_1_produce_only_verifies():
    m = Model(transaction_version=1)
    pid, epoch = begin(m)
    assert produce(m, pid, epoch) == E.INVALID_TXN_STATE
    assert m.add_partitions("tx", pid, epoch, {"out": [0]}) == {OUT0: 0}
    assert produce(m, pid, epoch) == 0
    assert m.txn_offset_commit("tx", pid, epoch, "g", {("in", 0): 3}, version=5) == {
        ("in", 0): E.INVALID_TXN_STATE}
    assert txn_values(m)[-1].client_transaction_version == 0


def test_txn_offset_commit_v5_adds_its_group():
    m = Model()
    pid, epoch = begin(m)
    assert m.txn_offset_commit("tx", pid, epoch, "g", {("in", 0): 3}, version=5) == {
        ("in", 0): 0}
    assert describe(m).transaction_state == "Ongoing"
    assert m.txn_offset_commit("tx", pid, epoch + 1, "g", {("in", 0): 4}, version=5) == {
        ("in", 0): E.PRODUCER_FENCED}
    assert m.end("tx", pid, epoch, True, version=5).error_code == 0
    assert m.committed("g") == {("in", 0): 3}


def verify(m: Model, pid: int, epoch: int, partitions: list[int]) -> dict[Any, int]:
    request = AddPartitions(transactions=[AddPartitions.AddPartitionsToTxnTransaction(
        transactional_id="tx", producer_id=pid, producer_epoch=epoch, verify_only=True,
        topics=[AddPartitions.AddPartitionsToTxnTopic(name="out", partitions=partitions)])])
    outcome = m.broker.transactions.add_partitions(4, request, m.now)
    assert outcome.records == [] and outcome.endings == []  # it only looks
    results = outcome.responses[0][1].results_by_transaction[0].topic_results
    return {(t.name, p.partition_index): p.partition_error_code
            for t in results for p in t.results_by_partition}


def test_verify_only_says_whether_each_partition_is_in_the_transaction():
    m = Model()
    pid, epoch = begin(m)
    assert verify(m, pid, epoch, [0]) == {OUT0: E.TRANSACTION_ABORTABLE}
    produce(m, pid, epoch)
    assert verify(m, pid, epoch, [0, 1]) == {OUT0: 0, OUT1: E.TRANSACTION_ABORTABLE}
    assert verify(m, pid, epoch + 1, [0]) == {OUT0: E.PRODUCER_FENCED}
    assert verify(m, pid + 1, epoch, [0]) == {OUT0: E.INVALID_PRODUCER_ID_MAPPING}
    m.end("tx", pid, epoch, True, version=5)
    assert verify(m, pid, epoch + 1, [0]) == {OUT0: E.TRANSACTION_ABORTABLE}


def test_a_v2_transaction_survives_a_restart_and_ends_after_it():
    m = Model()
    pid, epoch = begin(m)
    produce(m, pid, epoch, value=b"a")
    m.end("tx", pid, epoch, True, version=5)
    produce(m, pid, epoch + 1, value=b"b", partition=1)
    before = m.broker.transactions.txns["tx"]
    m.restart()
    after = m.broker.transactions.txns["tx"]
    assert after == before
    assert after.client_version == 2 and after.partitions == {OUT1}
    assert m.partition("out", 1).last_stable_offset == 0  # still open after the restart
    r = m.end("tx", pid, epoch + 1, True, version=5)
    assert (r.error_code, r.producer_epoch) == (0, epoch + 2)
    assert m.read_committed("out", 0) == [b"a"]
    assert m.read_committed("out", 1) == [b"b"]


def test_adding_from_produce_that_raises_changes_nothing(monkeypatch: pytest.MonkeyPatch):
    m = Model()
    pid, epoch = begin(m)
    txns = m.broker.transactions
    before = dict(txns.txns)
    logged = len(m.log)

    def broken(*args: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(txns, "_add", broken)
    assert produce(m, pid, epoch) == E.UNKNOWN_SERVER_ERROR
    assert txns.txns == before and len(m.log) == logged
    assert m.partition("out", 0).store.log_end_offset == 0


def test_txn_offset_commit_v6_names_topics_by_id():
    m = Model()
    pid, epoch = begin(m)
    assert m.txn_offset_commit("tx", pid, epoch, "g", {("in", 0): 3, ("gone", 0): 1},
                               version=6) == {("in", 0): 0, ("gone", 0): E.UNKNOWN_TOPIC_ID}
    assert m.end("tx", pid, epoch, True, version=5).error_code == 0
    assert m.committed("g") == {("in", 0): 3}


@pytest.mark.parametrize(("version", "error"), [(5, E.ILLEGAL_GENERATION),
                                                (6, E.GROUP_ID_NOT_FOUND)])
def test_a_generation_for_an_unknown_group(version: int, error: int):
    m = Model()
    pid, epoch = begin(m)
    assert m.txn_offset_commit("tx", pid, epoch, "nobody", {("in", 0): 3}, generation=2,
                               member_id="m", version=version) == {("in", 0): error}
