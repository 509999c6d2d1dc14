"""Transactions end to end without sockets: the transaction coordinator, the groups'
pending offsets and the partitions' producer state, driven by a fake clock."""

from __future__ import annotations

import pytest

from kcsim.coordinator.transactions.state import (
    ALLOWED_FROM,
    IllegalTransition,
    TxnState,
    check_transition,
)
from kcsim.protocol.errors import ErrorCode as E

from .txn_model import Model

OUT0 = ("out", 0)


def begin(m: Model, txn_id: str = "tx", timeout_ms: int = 60_000) -> tuple[int, int]:
    r = m.init(txn_id, timeout_ms)
    assert r.error_code == 0
    return r.producer_id, r.producer_epoch


def test_the_transition_table_is_kafkas():
    check_transition(TxnState.ONGOING, TxnState.PREPARE_COMMIT)
    check_transition(TxnState.PREPARE_ABORT, TxnState.COMPLETE_ABORT)
    with pytest.raises(IllegalTransition):
        check_transition(TxnState.EMPTY, TxnState.PREPARE_COMMIT)
    with pytest.raises(IllegalTransition):
        check_transition(TxnState.PREPARE_COMMIT, TxnState.COMPLETE_ABORT)
    assert ALLOWED_FROM[TxnState.COMPLETE_COMMIT] == {TxnState.PREPARE_COMMIT}


def test_init_allocates_and_a_reinit_bumps_the_epoch():
    m = Model()
    pid, epoch = begin(m)
    assert epoch == 0
    again = m.init("tx")
    assert (again.producer_id, again.producer_epoch) == (pid, 1)
    other = m.init("other")
    assert other.producer_id != pid


@pytest.mark.parametrize("timeout", [0, -5, 900_001])
def test_a_timeout_out_of_range_is_refused(timeout):
    m = Model()
    assert m.init("tx", timeout).error_code == E.INVALID_TRANSACTION_TIMEOUT


def test_the_maximum_timeout_is_configurable():
    m = Model(max_timeout_ms=10_000)
    assert m.init("tx", 10_001).error_code == E.INVALID_TRANSACTION_TIMEOUT
    assert m.init("tx", 10_000).error_code == 0


def test_only_committed_records_are_read_committed():
    m = Model()
    pid, epoch = begin(m)
    for i, commit in enumerate([True, False, True]):
        assert m.add_partitions("tx", pid, epoch, {"out": [0]}) == {OUT0: 0}
        assert m.produce("out", 0, [b"%d" % i], pid=pid, epoch=epoch, seq=i, txn_id="tx")[0] == 0
        assert m.end("tx", pid, epoch, commit).error_code == 0
    assert m.read_committed("out", 0) == [b"0", b"2"]


def test_the_last_stable_offset_stops_at_an_open_transaction():
    m = Model()
    pid, epoch = begin(m)
    m.produce("out", 0, [b"before"])
    m.add_partitions("tx", pid, epoch, {"out": [0]})
    m.produce("out", 0, [b"open"], pid=pid, epoch=epoch, txn_id="tx")
    m.produce("out", 0, [b"after"])
    part = m.partition("out", 0)
    assert (part.last_stable_offset, part.log_end_offset) == (1, 3)
    assert m.read_committed("out", 0) == [b"before"]
    m.end("tx", pid, epoch, True)
    assert part.last_stable_offset == part.log_end_offset == 4
    assert m.read_committed("out", 0) == [b"before", b"open", b"after"]


def test_a_reinit_aborts_the_open_transaction_and_fences_the_old_producer():
    m = Model()
    pid, epoch = begin(m)
    m.add_partitions("tx", pid, epoch, {"out": [0]})
    m.produce("out", 0, [b"zombie"], pid=pid, epoch=epoch, txn_id="tx")
    new = m.init("tx")
    assert new.producer_epoch > epoch
    assert m.read_committed("out", 0) == []
    assert m.partition("out", 0).last_stable_offset == m.partition("out", 0).log_end_offset
    # The old producer is fenced everywhere.
    assert m.end("tx", pid, epoch, True, version=3).error_code == E.PRODUCER_FENCED
    assert m.end("tx", pid, epoch, True, version=1).error_code == E.INVALID_PRODUCER_EPOCH
    assert m.add_partitions("tx", pid, epoch, {"out": [1]}) == {("out", 1): E.PRODUCER_FENCED}
    assert m.add_offsets("tx", pid, epoch, "g") == E.PRODUCER_FENCED
    assert m.produce("out", 0, [b"late"], pid=pid, epoch=epoch, seq=1, txn_id="tx")[0] in (
        E.INVALID_PRODUCER_EPOCH, E.INVALID_TXN_STATE)
    assert m.init("tx", producer_id=pid, producer_epoch=epoch).error_code == E.PRODUCER_FENCED


def test_a_transaction_past_its_timeout_is_aborted_on_the_clock():
    m = Model()
    pid, epoch = begin(m, timeout_ms=5_000)
    m.add_partitions("tx", pid, epoch, {"out": [0]})
    m.produce("out", 0, [b"hanging"], pid=pid, epoch=epoch, txn_id="tx")
    m.advance(4_999)
    assert m.broker.transactions.producer_epochs()["tx"][2] == "Ongoing"
    m.advance(1)
    assert m.broker.transactions.producer_epochs()["tx"] == (pid, epoch + 1, "CompleteAbort")
    assert m.partition("out", 0).last_stable_offset == m.partition("out", 0).log_end_offset
    assert m.read_committed("out", 0) == []
    assert m.end("tx", pid, epoch, True).error_code == E.PRODUCER_FENCED


def test_end_txn_states():
    m = Model()
    pid, epoch = begin(m)
    assert m.end("tx", pid, epoch, True).error_code == E.INVALID_TXN_STATE  # nothing open
    m.add_partitions("tx", pid, epoch, {"out": [0]})
    assert m.end("tx", pid, epoch, True).error_code == 0
    assert m.end("tx", pid, epoch, True).error_code == 0  # a retry
    assert m.end("tx", pid, epoch, False).error_code == E.INVALID_TXN_STATE
    assert m.end("unknown", pid, epoch, True).error_code == E.INVALID_PRODUCER_ID_MAPPING
    assert m.end("tx", pid + 1, epoch, True).error_code == E.INVALID_PRODUCER_ID_MAPPING


def test_end_txn_v5_bumps_the_epoch_every_transaction():
    m = Model()
    pid, epoch = begin(m)
    m.add_partitions("tx", pid, epoch, {"out": [0]})
    r = m.end("tx", pid, epoch, True, version=5)
    assert (r.error_code, r.producer_id, r.producer_epoch) == (0, pid, epoch + 1)
    assert m.add_partitions("tx", pid, epoch + 1, {"out": [0]}) == {OUT0: 0}


def test_add_partitions_batched_v4_and_unknown_partitions():
    m = Model()
    pid, epoch = begin(m)
    assert m.add_partitions("tx", pid, epoch, {"out": [0, 1]}, version=4) == {
        ("out", 0): 0, ("out", 1): 0}
    assert m.add_partitions("tx", pid, epoch, {"out": [0, 7]}) == {
        ("out", 0): E.OPERATION_NOT_ATTEMPTED, ("out", 7): E.UNKNOWN_TOPIC_OR_PARTITION}


def test_transactional_offsets_are_pending_until_commit_and_vanish_on_abort():
    m = Model()
    pid, epoch = begin(m)
    assert m.add_offsets("tx", pid, epoch, "g") == 0
    assert m.txn_offset_commit("tx", pid, epoch, "g", {("in", 0): 5}) == {("in", 0): 0}
    assert m.committed("g") == {}
    assert m.broker.groups.group_state("g") == "Empty"  # as Kafka, a simple group now exists
    assert m.fetch_offset("g", "in", 0) == (-1, E.UNSTABLE_OFFSET_COMMIT)
    assert m.fetch_offset("g", "in", 0, require_stable=False) == (-1, 0)
    m.end("tx", pid, epoch, False)
    assert m.committed("g") == {}
    assert m.fetch_offset("g", "in", 0) == (-1, 0)
    m.add_offsets("tx", pid, epoch, "g")
    m.txn_offset_commit("tx", pid, epoch, "g", {("in", 0): 7})
    m.end("tx", pid, epoch, True)
    assert m.committed("g") == {("in", 0): 7}
    assert m.fetch_offset("g", "in", 0) == (7, 0)


def test_txn_offset_commit_needs_the_group_in_the_transaction():
    m = Model()
    pid, epoch = begin(m)
    m.add_partitions("tx", pid, epoch, {"out": [0]})
    assert m.txn_offset_commit("tx", pid, epoch, "g", {("in", 0): 1}) == {
        ("in", 0): E.INVALID_TXN_STATE}
    m.add_offsets("tx", pid, epoch, "g")
    assert m.txn_offset_commit("tx", pid, epoch - 1, "g", {("in", 0): 1}) == {
        ("in", 0): E.PRODUCER_FENCED}
    assert m.txn_offset_commit("tx", pid, epoch, "g", {("in", 0): 1}, generation=3,
                               member_id="m") == {("in", 0): E.ILLEGAL_GENERATION}


def test_idempotent_retries_are_acknowledged_with_the_original_offset():
    m = Model()
    r = m.init(None)
    pid = r.producer_id
    assert m.produce("out", 1, [b"a", b"b"], pid=pid, seq=0) == (0, 0)
    assert m.produce("out", 1, [b"c"], pid=pid, seq=2) == (0, 2)
    assert m.produce("out", 1, [b"a", b"b"], pid=pid, seq=0) == (0, 0)  # a retry
    assert m.partition("out", 1).log_end_offset == 3
    assert m.produce("out", 1, [b"e"], pid=pid, seq=5)[0] == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert m.produce("out", 1, [b"d"], pid=pid, seq=3) == (0, 3)


def test_producer_ids_are_not_handed_out_twice_across_restarts():
    m = Model()
    first = m.init(None).producer_id
    m.restart()
    assert m.init(None).producer_id > first


def test_restart_replays_transactions_producers_and_pending_offsets():
    m = Model()
    pid, epoch = begin(m)
    m.add_partitions("tx", pid, epoch, {"out": [0]})
    m.add_offsets("tx", pid, epoch, "g")
    m.produce("out", 0, [b"x"], pid=pid, epoch=epoch, txn_id="tx")
    m.txn_offset_commit("tx", pid, epoch, "g", {("in", 0): 3})
    m.restart()
    assert m.broker.transactions.producer_epochs()["tx"] == (pid, epoch, "Ongoing")
    assert m.partition("out", 0).last_stable_offset == 0
    assert m.fetch_offset("g", "in", 0) == (-1, E.UNSTABLE_OFFSET_COMMIT)
    assert m.produce("out", 0, [b"x"], pid=pid, epoch=epoch, seq=0, txn_id="tx") == (0, 0)
    m.end("tx", pid, epoch, True)
    assert m.read_committed("out", 0) == [b"x"]
    assert m.committed("g") == {("in", 0): 3}


def test_a_restart_between_prepare_and_complete_finishes_the_transaction():
    m = Model()
    pid, epoch = begin(m)
    m.add_partitions("tx", pid, epoch, {"out": [0]})
    m.add_offsets("tx", pid, epoch, "g")
    m.produce("out", 0, [b"x"], pid=pid, epoch=epoch, txn_id="tx")
    m.txn_offset_commit("tx", pid, epoch, "g", {("in", 0): 3})
    # The end's records reach the log only up to its Prepare record, and no marker is written.
    outcome = m.broker.transactions.end_txn(3, _end_request("tx", pid, epoch, True), m.now)
    assert [r.value.state for r in outcome.records] == ["PrepareCommit"]
    m.log += outcome.records
    m.restart()
    assert m.broker.transactions.producer_epochs()["tx"][2] == "CompleteCommit"
    assert m.read_committed("out", 0) == [b"x"]
    assert m.committed("g") == {("in", 0): 3}


def test_a_restart_before_the_markers_were_written_writes_them():
    m = Model()
    pid, epoch = begin(m)
    m.add_partitions("tx", pid, epoch, {"out": [0, 1]})
    m.produce("out", 0, [b"x"], pid=pid, epoch=epoch, txn_id="tx")
    m.produce("out", 1, [b"y"], pid=pid, epoch=epoch, txn_id="tx")
    outcome = m.broker.transactions.end_txn(3, _end_request("tx", pid, epoch, False), m.now)
    from kcsim.server.state.txn_endings import settle

    records, _markers_never_written = settle(m.broker, outcome, m.now)
    m.log += records
    m.restart()
    for p in (0, 1):
        part = m.partition("out", p)
        assert part.last_stable_offset == part.log_end_offset == 2
        assert m.read_committed("out", p) == []


def _end_request(txn_id: str, pid: int, epoch: int, commit: bool):
    from .txn_model import EndTxn

    return EndTxn(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
                  committed=commit)


def test_offset_retention_waits_for_offsets_pending_in_a_transaction():
    from kcsim.coordinator import GroupConfig

    m = Model(group_config=GroupConfig(offsets_retention_ms=10_000,
                                       offsets_retention_check_interval_ms=1_000))
    pid, epoch = begin(m)
    m.add_offsets("tx", pid, epoch, "g")
    m.txn_offset_commit("tx", pid, epoch, "g", {("in", 0): 3})
    m.end("tx", pid, epoch, True)
    m.add_offsets("tx", pid, epoch, "g")
    m.txn_offset_commit("tx", pid, epoch, "g", {("in", 0): 5})
    m.advance(20_000)  # past retention, with offset 5 pending
    assert m.committed("g") == {("in", 0): 3}
    m.end("tx", pid, epoch, False)
    m.advance(1_000)
    assert m.committed("g") == {}
    assert m.broker.groups.group_state("g") is None


def test_txn_offset_commit_checks_a_consumer_group_member_s_epoch():
    """KIP-447 for KIP-848 groups: the member id and its current epoch, STALE_MEMBER_EPOCH
    for an older one; a producer outside the group (no member, epoch -1) is accepted."""
    import uuid

    from kcsim.protocol.codecs import request_class

    from .txn_model import Ctx

    m = Model()
    heartbeat = request_class(68)
    member_id = str(uuid.UUID(int=1))
    outcome = m.broker.groups.handle(68, 1, heartbeat(
        group_id="cg", member_id=member_id, member_epoch=0, rebalance_timeout_ms=30000,
        subscribed_topic_names=["in"], topic_partitions=[]), Ctx(68, 1), m.now)
    joined = outcome.responses[0][1]
    assert joined.error_code == 0
    pid, epoch = begin(m)
    m.add_offsets("tx", pid, epoch, "cg")
    tp = ("in", 0)
    commit = m.txn_offset_commit
    assert commit("tx", pid, epoch, "cg", {tp: 1}, generation=joined.member_epoch,
                  member_id=member_id) == {tp: 0}
    assert commit("tx", pid, epoch, "cg", {tp: 2}, generation=joined.member_epoch - 1,
                  member_id=member_id) == {tp: E.STALE_MEMBER_EPOCH}
    assert commit("tx", pid, epoch, "cg", {tp: 3}, generation=joined.member_epoch,
                  member_id="someone-else") == {tp: E.UNKNOWN_MEMBER_ID}
    assert commit("tx", pid, epoch, "cg", {tp: 4}) == {tp: 0}
    m.end("tx", pid, epoch, True)
    assert m.committed("cg") == {tp: 4}


def test_describe_producers_shows_each_producer_and_its_open_transaction():
    from kcsim.protocol.codecs import request_class
    from kcsim.server.requests.handlers.transactions import describe_producers

    from .txn_model import Ctx

    m = Model()
    pid, epoch = begin(m)
    m.add_partitions("tx", pid, epoch, {"out": [0]})
    m.produce("out", 0, [b"a"], pid=pid, epoch=epoch, seq=0, txn_id="tx")
    idempotent = m.init(None).producer_id
    m.produce("out", 0, [b"b", b"c"], pid=idempotent, seq=0)
    cls = request_class(61)
    answer = describe_producers(m.broker, Ctx(61, 0), cls(topics=[
        cls.TopicRequest(name="out", partition_indexes=[0, 9])]))
    found, missing = answer.topics[0].partitions
    assert missing.error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert [(p.producer_id, p.producer_epoch, p.last_sequence, p.current_txn_start_offset)
            for p in found.active_producers] == [(pid, epoch, 0, 0), (idempotent, 0, 1, -1)]
