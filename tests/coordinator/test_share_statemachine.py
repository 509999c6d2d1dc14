"""The share partition under random fetches, acknowledgements of every type, lock
expiry on a fake clock, members leaving and restarts, checked against a model: no
record is held by two members, delivery counts go down only where Kafka lowers them (a
member leaving, a restart losing an acquisition), the written state folded again equals
the live state (replayed whole and after compaction), and every record ends
acknowledged or archived once the test drains the partition."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kcsim.coordinator.share.partition import AckBatch, LogBatch, SharePartition
from kcsim.coordinator.share.persisted import (
    ShareKey,
    ShareStateFold,
    initial_snapshot,
    record_for,
)
from kcsim.coordinator.share.rules import RecordState, is_final
from kcsim.protocol.errors import ErrorCode as E

if TYPE_CHECKING:
    from kcsim.storage.records import Record

LOG_END = 40
BATCH = 3
LOG = [LogBatch(o, min(o + BATCH, LOG_END) - 1) for o in range(0, LOG_END, BATCH)]
MEMBERS = ("m0", "m1", "m2")
LOCK_MS = 100
LIMIT = 3
KEY = ShareKey("g", b"\x01" * 16, 0)
CONFIG = {"lock_duration_ms": LOCK_MS, "delivery_count_limit": LIMIT}


def log_from(offset: int) -> list[LogBatch]:
    return [b for b in LOG if b.last_offset >= offset]


def fold_of(records: list[Record]) -> ShareStateFold:
    fold = ShareStateFold()
    for r in records:
        fold.apply(r)
    return fold


def compacted(records: list[Record]) -> list[Record]:
    """The newest record of each key, in log order, as compaction leaves the log."""
    last = {r.key: i for i, r in enumerate(records)}
    return [r for i, r in enumerate(records) if last[r.key] == i]


class SharePartitionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0
        self.p = SharePartition(0, **CONFIG)
        self.written: list[Record] = [initial_snapshot(KEY, 0, 0)]
        self.fold = fold_of(self.written)
        self.holder: dict[int, str] = {}  # the model: who holds each record
        self.counted: dict[int, int] = {}  # the model: deliveries counted
        self.counts: dict[int, int] = {}  # the live counts after the last step
        self.may_lower = False

    def write(self, update) -> None:  # type: ignore[no-untyped-def]
        if update is None:
            return
        persisted = self.fold.get(KEY)
        assert persisted is not None
        record = record_for(KEY, persisted, update, self.now)
        self.written.append(record)
        self.fold.apply(record)

    def forget_holders(self) -> None:
        for offset in list(self.holder):
            r = self.p.record(offset)
            if r is None or r.state is not RecordState.ACQUIRED:
                del self.holder[offset]

    @rule(member=st.sampled_from(MEMBERS), max_records=st.integers(1, 10))
    def fetch(self, member: str, max_records: int) -> None:
        offset = self.p.next_fetch_offset()
        acquired, update = self.p.acquire(member, log_from(offset), max_records, self.now)
        self.write(update)
        for a in acquired:
            for o in range(a.first_offset, a.last_offset + 1):
                assert o not in self.holder, f"{o} acquired by {member} while {self.holder[o]} holds it"
                self.holder[o] = member
                self.counted[o] = self.counted.get(o, 0) + 1
                assert a.delivery_count == self.counted[o]

    @rule(
        member=st.sampled_from(MEMBERS),
        ack=st.sampled_from([0, 1, 2, 3, 4]),
        per_offset=st.booleans(),
        data=st.data(),
    )
    def acknowledge(self, member: str, ack: int, per_offset: bool, data: st.DataObject) -> None:
        held = sorted(o for o, m in self.holder.items() if m == member)
        if not held:
            return
        first = data.draw(st.sampled_from(held))
        last = first
        while last + 1 in self.holder and self.holder[last + 1] == member:
            last += 1
        types = (
            tuple(data.draw(st.lists(st.sampled_from([1, 2, 3, 4]), min_size=last - first + 1, max_size=last - first + 1)))
            if per_offset
            else (ack,)
        )
        error, update = self.p.acknowledge(member, [AckBatch(first, last, types)], self.now)
        assert error is E.NONE
        self.write(update)
        self.forget_holders()

    @rule(member=st.sampled_from(MEMBERS), first=st.integers(0, LOG_END - 1), length=st.integers(1, 5))
    def acknowledge_what_others_hold(self, member: str, first: int, length: int) -> None:
        """Acknowledging records not held by the member is refused and changes nothing."""
        last = min(first + length - 1, LOG_END - 1)
        span = range(max(first, self.p.start_offset), last + 1)
        if last < self.p.start_offset or all(self.holder.get(o) == member for o in span):
            return
        before = dict(self.holder)
        error, update = self.p.acknowledge(member, [AckBatch(first, last, (1,))], self.now)
        assert error in (E.INVALID_RECORD_STATE, E.INVALID_REQUEST)
        assert update is None
        self.forget_holders()
        assert self.holder == before

    @rule(ms=st.sampled_from([1, 30, 50, 100, 150]))
    def advance(self, ms: int) -> None:
        self.now += ms
        self.write(self.p.expire(self.now))
        self.forget_holders()

    @rule(member=st.sampled_from(MEMBERS))
    def leave(self, member: str) -> None:
        self.write(self.p.release_member(member))
        for o, m in list(self.holder.items()):
            if m == member:
                self.counted[o] -= 1
                del self.holder[o]
        self.may_lower = True

    @rule(compact=st.booleans())
    def restart(self, compact: bool) -> None:
        replayed = fold_of(compacted(self.written) if compact else self.written).get(KEY)
        assert replayed is not None
        assert replayed.view() == self.p.durable_view()
        self.p = replayed.partition(**CONFIG)
        for o in self.holder:
            self.counted[o] -= 1  # the acquisition was never written
        self.holder.clear()
        self.may_lower = True

    @invariant()
    def written_state_is_the_live_state(self) -> None:
        persisted = self.fold.get(KEY)
        assert persisted is not None
        assert persisted.start_offset == self.p.start_offset
        assert persisted.view() == self.p.durable_view()

    @invariant()
    def the_model_agrees(self) -> None:
        live = dict(self.p.in_flight())
        for o, r in live.items():
            if r.state is RecordState.ACQUIRED:
                assert self.holder.get(o) == r.member
            else:
                assert o not in self.holder
            assert r.delivery_count == self.counted.get(o, 0) or r.state is RecordState.ARCHIVED
        counts = {o: r.delivery_count for o, r in live.items()}
        if not self.may_lower:
            for o, c in counts.items():
                assert c >= self.counts.get(o, 0), f"delivery count of {o} went down"
        self.counts, self.may_lower = counts, False

    def teardown(self) -> None:
        # Drain: let every lock run out, then take and accept everything left.
        for _ in range(LOG_END * (LIMIT + 1)):
            self.now += LOCK_MS
            self.write(self.p.expire(self.now))
            offset = self.p.next_fetch_offset()
            if offset >= LOG_END:
                break
            acquired, update = self.p.acquire("drainer", log_from(offset), LOG_END, self.now)
            self.write(update)
            for a in acquired:
                error, update = self.p.acknowledge(
                    "drainer", [AckBatch(a.first_offset, a.last_offset, (1,))], self.now
                )
                assert error is E.NONE
                self.write(update)
        assert self.p.start_offset == self.p.end_offset == LOG_END
        assert all(is_final(r.state) for _, r in self.p.in_flight())
        replayed = fold_of(compacted(self.written)).get(KEY)
        assert replayed is not None and replayed.start_offset == LOG_END


SharePartitionMachine.TestCase.settings = settings(
    max_examples=200,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestSharePartitionMachine = SharePartitionMachine.TestCase
