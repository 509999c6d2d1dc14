"""Random transactions against the transaction coordinator, the groups' pending offsets and
the partitions, with a fake clock: begins, adds, produces, offset commits, ends, re-inits
(zombies keep trying), time-outs, restarts, and crashes while a transaction ends (part of
its records on disk, no markers written).

After every step: read_committed readers see exactly the records of committed
transactions, a group's committed offsets are those of committed transactions only,
each transactional id's (producer id, epoch) only grows, and a restart (replay of the
coordinator log and of the partitions) reproduces the state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kcsim.server.state.txn_endings import settle

from .txn_model import EndTxn, Model

TXN_IDS = ("a", "b")
GROUP = "g"


@dataclass
class Handle:
    """One producer instance as a client holds it (it may have been fenced since)."""

    txn_id: str
    pid: int
    epoch: int
    seq: dict[int, int] = field(default_factory=dict)


class Transactions(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.m = Model()
        self.handles: list[Handle] = []
        self.produced: dict[int, list[str]] = {0: [], 1: []}  # accepted values by partition
        self.open_values: dict[str, list[str]] = {t: [] for t in TXN_IDS}
        self.open_offsets: dict[str, dict[tuple[str, int], int]] = {t: {} for t in TXN_IDS}
        self.committed_values: set[str] = set()
        self.expected_offsets: dict[tuple[str, int], int] = {}
        self.last_seen: dict[str, tuple[int, int]] = {}
        self.states = dict.fromkeys(TXN_IDS, "")
        self.n = 0

    # -- what became of open transactions ------------------------------------------

    def _settle(self) -> None:
        for txn_id, (_pid, _epoch, state) in self.m.broker.transactions.producer_epochs().items():
            before = self.states[txn_id]
            self.states[txn_id] = state
            if state == "Ongoing" and before == "Ongoing":
                continue
            if state == "CompleteCommit" and before != "CompleteCommit":
                self.committed_values.update(self.open_values[txn_id])
                self.expected_offsets.update(self.open_offsets[txn_id])
            if state != "Ongoing":
                self.open_values[txn_id] = []
                self.open_offsets[txn_id] = {}

    # -- rules ------------------------------------------------------------------

    @rule(txn_id=st.sampled_from(TXN_IDS), timeout=st.sampled_from([5_000, 60_000]))
    def init(self, txn_id: str, timeout: int) -> None:
        r = self.m.init(txn_id, timeout)
        if r.error_code == 0:
            self.handles.append(Handle(txn_id, r.producer_id, r.producer_epoch))
            seen = self.last_seen.get(txn_id)
            assert seen is None or (r.producer_id, r.producer_epoch) > seen
            self.last_seen[txn_id] = (r.producer_id, r.producer_epoch)
        self._settle()

    @precondition(lambda self: self.handles)
    @rule(data=st.data(), partitions=st.sets(st.sampled_from([0, 1]), min_size=1))
    def add_partitions(self, data: st.DataObject, partitions: set[int]) -> None:
        h = data.draw(st.sampled_from(self.handles))
        self.m.add_partitions(h.txn_id, h.pid, h.epoch, {"out": sorted(partitions)})
        self._settle()

    @precondition(lambda self: self.handles)
    @rule(data=st.data(), partition=st.sampled_from([0, 1]))
    def produce(self, data: st.DataObject, partition: int) -> None:
        h = data.draw(st.sampled_from(self.handles))
        self.n += 1
        value = f"{h.txn_id}-{self.n}"
        seq = h.seq.get(partition, 0)
        error, _ = self.m.produce("out", partition, [value.encode()], pid=h.pid,
                                  epoch=h.epoch, seq=seq, txn_id=h.txn_id)
        if error == 0:
            h.seq[partition] = seq + 1
            self.produced[partition].append(value)
            assert self.states[h.txn_id] == "Ongoing"
            assert (h.pid, h.epoch) == self.last_seen[h.txn_id], "a fenced producer wrote"
            self.open_values[h.txn_id].append(value)
        self._settle()

    @precondition(lambda self: self.handles)
    @rule(data=st.data(), offset=st.integers(0, 1000))
    def commit_offsets(self, data: st.DataObject, offset: int) -> None:
        h = data.draw(st.sampled_from(self.handles))
        if self.m.add_offsets(h.txn_id, h.pid, h.epoch, GROUP) == 0:
            self._settle()
            errors = self.m.txn_offset_commit(h.txn_id, h.pid, h.epoch, GROUP,
                                              {("in", 0): offset})
            if errors == {("in", 0): 0}:
                self.open_offsets[h.txn_id][("in", 0)] = offset
        self._settle()

    @precondition(lambda self: self.handles)
    @rule(data=st.data(), commit=st.booleans())
    def end(self, data: st.DataObject, commit: bool) -> None:
        h = data.draw(st.sampled_from(self.handles))
        self.m.end(h.txn_id, h.pid, h.epoch, commit)
        self._settle()

    @rule(ms=st.sampled_from([1, 1_000, 4_999, 5_000, 30_000, 61_000]))
    def advance(self, ms: int) -> None:
        self.m.advance(ms)
        self._settle()

    @precondition(lambda self: self.handles)
    @rule(txn_id=st.sampled_from(TXN_IDS), commit=st.booleans(), cut=st.integers(0, 6))
    def crash_while_ending(self, txn_id: str, commit: bool, cut: int) -> None:
        """The current producer's EndTxn, then a crash: only the first `cut` of its records
        reached the log and no marker was written; the restart finishes (or, cut before
        Prepare, later times out) the transaction."""
        current = [h for h in self.handles if h.txn_id == txn_id]
        if not current:
            return
        h = current[-1]
        m = self.m
        outcome = m.broker.transactions.end_txn(3, EndTxn(
            transactional_id=h.txn_id, producer_id=h.pid, producer_epoch=h.epoch,
            committed=commit), m.now)
        records, _markers = settle(m.broker, outcome, m.now)
        m.log += records[:cut]
        m.restart()
        self._settle()

    @rule()
    def restart(self) -> None:
        before = self._snapshot()
        self.m.restart()
        assert self._snapshot() == before
        self._settle()

    def _snapshot(self) -> tuple:
        m = self.m
        parts = [(p.log_end_offset, p.last_stable_offset,
                  sorted(p.producers.ongoing.items()), list(p.producers.aborted))
                 for p in m.broker.topics.by_name["out"].partitions]
        pending = {g: dict(m.broker.groups.pending_offsets(g)) for g in (GROUP,)}
        return (m.broker.transactions.producer_epochs(), m.committed(GROUP), pending, parts,
                [m.read_committed("out", p) for p in (0, 1)])

    # -- invariants ---------------------------------------------------------------

    @invariant()
    def read_committed_sees_exactly_the_committed_records(self) -> None:
        """Committed records, up to the first record of a transaction still open (the last
        stable offset): a commit after it shows once that transaction ends, as in Kafka."""
        still_open = {v for values in self.open_values.values() for v in values}
        for p in (0, 1):
            expected = []
            for value in self.produced[p]:
                if value in still_open:
                    break
                if value in self.committed_values:
                    expected.append(value.encode())
            assert self.m.read_committed("out", p) == expected

    @invariant()
    def offsets_move_only_on_commit(self) -> None:
        assert self.m.committed(GROUP) == self.expected_offsets

    @invariant()
    def open_transactions_hold_back_the_last_stable_offset(self) -> None:
        for p in (0, 1):
            part = self.m.partition("out", p)
            if not part.producers.ongoing:
                assert part.last_stable_offset == part.log_end_offset


Transactions.TestCase.settings = settings(max_examples=200, stateful_step_count=50,
                                          deadline=None)
TestTransactions = Transactions.TestCase
