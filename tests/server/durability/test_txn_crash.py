"""SIGKILL while transactions are open and committing: after the restart no committed
transaction is lost, nothing aborted is visible to read_committed readers, a transaction
whose end was in flight is all or nothing, and transactions left open are aborted once
their timeout has passed.

Raw-socket transactional producers (one thread each) run transactions of one record per
partition, with their group offset sent to the transaction, ending most in a commit and
every third in an abort; the server is killed at a random moment, restarted on the same
data dir, and what read_committed fetches and the groups hold is compared with what the
producers were told. Once with explicit AddPartitionsToTxn / AddOffsetsToTxn, once on
transactions v2 (KIP-890 part 2: Produce v12 and TxnOffsetCommit v5 add to the
transaction themselves, EndTxn v5 bumps the epoch).
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest

from tests.coordinator.txn_model import (
    AddOffsets,
    AddPartitions,
    EndTxn,
    Fetch,
    InitProducerId,
    Produce,
    TxnOffsetCommit,
    read_as_client,
)

from ..fuzz.batches import batch
from .test_crash import kill
from .wire import Closed, Wire

ITERATIONS = 4
WORKERS = 3
PARTITIONS = 3
TOPIC = "txn-crash"
SOURCE = "txn-source"
TIMEOUT_MS = 2_000
CONCURRENT_TRANSACTIONS = 51
LIST_OFFSETS = 2

pytestmark = pytest.mark.timeout(180)


class Worker(threading.Thread):
    """One transactional producer: transaction n writes "<id>-<n>-<p>" to every partition
    and commits offset n of its group, then commits (or, every third, aborts)."""

    def __init__(self, txn_id: str, server: Any, first: int, v2: bool) -> None:
        super().__init__(daemon=True)
        self.txn_id, self.server, self.n = txn_id, server, first
        self.v2 = v2  # transactions v2: no AddPartitionsToTxn / AddOffsetsToTxn (KIP-890)
        self.committed: set[int] = set()  # acknowledged commits
        self.aborted: set[int] = set()  # acknowledged aborts
        self.unknown: set[int] = set()  # ended (or begun) without an answer
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            with Wire.to(self.server) as wire:
                self._transactions(wire)
        except (Closed, ConnectionRefusedError):
            pass
        except BaseException as exc:
            self.failure = exc

    def _transactions(self, wire: Wire) -> None:
        while True:
            init = wire.call(22, 4, InitProducerId(transactional_id=self.txn_id,
                                                   transaction_timeout_ms=TIMEOUT_MS,
                                                   producer_id=-1, producer_epoch=-1))
            if init.error_code != CONCURRENT_TRANSACTIONS:
                break
        assert init.error_code == 0, init
        pid, epoch = init.producer_id, init.producer_epoch
        seq = dict.fromkeys(range(PARTITIONS), 0)
        group = f"g-{self.txn_id}"
        while True:
            n = self.n
            self.n += 1
            self.unknown.add(n)
            if not self.v2:
                added = wire.call(24, 3, AddPartitions(
                    v3_and_below_transactional_id=self.txn_id, v3_and_below_producer_id=pid,
                    v3_and_below_producer_epoch=epoch, v3_and_below_topics=[
                        AddPartitions.AddPartitionsToTxnTopic(
                            name=TOPIC, partitions=list(range(PARTITIONS)))]))
                assert {p.partition_error_code for t in added.results_by_topic_v3_and_below
                        for p in t.results_by_partition} == {0}, added
            for p in range(PARTITIONS):
                raw = batch([f"{self.txn_id}-{n}-{p}".encode()], producer_id=pid,
                            producer_epoch=epoch, base_sequence=seq[p], attributes=0x10)
                produced = wire.call(0, 12 if self.v2 else 9, Produce(
                    transactional_id=self.txn_id, acks=-1, timeout_ms=5000, topic_data=[
                        Produce.TopicProduceData(name=TOPIC, partition_data=[
                            Produce.PartitionProduceData(index=p, records=raw)])]))
                assert produced.responses[0].partition_responses[0].error_code == 0, produced
                seq[p] += 1
            if not self.v2:
                assert wire.call(25, 3, AddOffsets(transactional_id=self.txn_id,
                                                   producer_id=pid, producer_epoch=epoch,
                                                   group_id=group)).error_code == 0
            offsets = wire.call(28, 5 if self.v2 else 3, TxnOffsetCommit(
                transactional_id=self.txn_id, group_id=group, producer_id=pid,
                producer_epoch=epoch, generation_id_or_member_epoch=-1, member_id="",
                group_instance_id=None,
                topics=[TxnOffsetCommit.TxnOffsetCommitRequestTopic(name=SOURCE, partitions=[
                    TxnOffsetCommit.TxnOffsetCommitRequestPartition(
                        partition_index=0, committed_offset=n, committed_metadata="")])]))
            assert offsets.topics[0].partitions[0].error_code == 0, offsets
            commit = n % 3 != 0
            ended = wire.call(26, 5 if self.v2 else 3, EndTxn(
                transactional_id=self.txn_id, producer_id=pid, producer_epoch=epoch,
                committed=commit))
            assert ended.error_code == 0, ended
            if self.v2:  # every end bumps the epoch: the next transaction's sequences from 0
                pid, epoch = ended.producer_id, ended.producer_epoch
                seq = dict.fromkeys(range(PARTITIONS), 0)
            self.unknown.discard(n)
            (self.committed if commit else self.aborted).add(n)


def read_committed(wire: Wire, partition: int) -> list[str]:
    request = Fetch(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 30,
                    isolation_level=1, session_id=0, session_epoch=-1, topics=[
                        Fetch.FetchTopic(topic=TOPIC, partitions=[Fetch.FetchPartition(
                            partition=partition, fetch_offset=0, partition_max_bytes=1 << 30)])],
                    forgotten_topics_data=[], rack_id="")
    part = wire.call(1, 11, request).responses[0].partitions[0]
    return [v.decode() for v in read_as_client(part.records or b"",
                                               part.aborted_transactions or [])]


def stable(wire: Wire) -> bool:
    """Whether no partition has an open transaction (last stable offset = log end)."""
    from kcsim.protocol.codecs import request_class

    cls = request_class(LIST_OFFSETS)
    ends = []
    for isolation in (0, 1):
        resp = wire.call(LIST_OFFSETS, 7, cls(replica_id=-1, isolation_level=isolation, topics=[
            cls.ListOffsetsTopic(name=TOPIC, partitions=[
                cls.ListOffsetsPartition(partition_index=p, timestamp=-1)
                for p in range(PARTITIONS)])]))
        ends.append([p.offset for p in resp.topics[0].partitions])
    return ends[0] == ends[1]


def wait_stable(server: Any, within_s: float) -> None:
    deadline = time.monotonic() + within_s
    with Wire.to(server) as wire:
        while not stable(wire):
            assert time.monotonic() < deadline, "an open transaction was never aborted"
            time.sleep(0.05)


@pytest.mark.parametrize("v2", [False, True], ids=["txn-v1", "txn-v2"])
def test_transactions_survive_sigkill(kcsim_factory: Any, v2: bool) -> None:
    server = kcsim_factory(default_partitions=PARTITIONS)
    with Wire.to(server) as wire:
        wire.create_topic(TOPIC, PARTITIONS)
        wire.create_topic(SOURCE, 1)
    rng = random.Random(1)
    history = {f"w{i}": Worker(f"w{i}", server, 0, v2) for i in range(WORKERS)}
    killed_open = 0
    for iteration in range(ITERATIONS):
        workers = [Worker(t, server, h.n, v2) for t, h in history.items()]
        for w, old in zip(workers, history.values(), strict=True):
            w.committed, w.aborted, w.unknown = old.committed, old.aborted, old.unknown
        for w in workers:
            w.start()
        time.sleep(rng.uniform(0.3, 0.8))
        kill(server)
        for w in workers:
            w.join(10)
            assert not w.is_alive(), "a producer hung after the kill"
            assert w.failure is None, f"iteration {iteration}: {w.failure!r}"
        killed_open += sum(1 for w in workers if w.unknown)
        history = {w.txn_id: w for w in workers}
        server.start()
        # Transactions open at the kill are aborted once their timeout has passed.
        wait_stable(server, TIMEOUT_MS / 1000 + 10)
        with Wire.to(server) as wire:
            visible = [v for p in range(PARTITIONS) for v in read_committed(wire, p)]
            offsets = wire.fetch({f"g-{t}": (SOURCE, [0]) for t in history})
        seen: dict[tuple[str, int], int] = {}
        for value in visible:
            txn_id, n, _ = value.split("-")
            seen[(txn_id, int(n))] = seen.get((txn_id, int(n)), 0) + 1
        for w in history.values():
            for n in w.committed:
                assert seen.get((w.txn_id, n)) == PARTITIONS, f"committed {w.txn_id}-{n} lost"
            for n in w.aborted:
                assert (w.txn_id, n) not in seen, f"aborted {w.txn_id}-{n} is visible"
            for n in w.unknown:
                assert seen.get((w.txn_id, n), PARTITIONS) == PARTITIONS, \
                    f"{w.txn_id}-{n} is partly visible"
            mine = [n for (t, n) in seen if t == w.txn_id]
            assert offsets[(f"g-{w.txn_id}", 0)] == max(mine, default=-1), \
                "the group's offset is not that of the last committed transaction"
            assert set(mine) <= w.committed | w.unknown
    assert killed_open, "no kill landed in an open transaction"
