"""A broker driven without sockets for transaction tests: the transaction coordinator, the
group coordinator and in-memory partitions, with a fake clock, a coordinator log that
restarts replay, and a read_committed reader that skips aborted records as clients do."""

from __future__ import annotations

import uuid
from typing import Any

from kcsim.coordinator import GroupConfig, GroupCoordinator
from kcsim.coordinator.txn_offsets import producer_error
from kcsim.protocol.codecs import request_class
from kcsim.protocol.record_batch import batch_producer, batch_records, control_type, iter_batches
from kcsim.server.config import Config
from kcsim.server.requests.handlers.data_plane import fetch, produce
from kcsim.server.state.answers import Pending
from kcsim.server.state.broker_state import BrokerState as Broker
from kcsim.server.state.topics import Partition, TopicRegistry
from kcsim.server.state.txn_endings import settle
from tests.server.fuzz.batches import batch

InitProducerId = request_class(22)
AddPartitions = request_class(24)
AddOffsets = request_class(25)
EndTxn = request_class(26)
TxnOffsetCommit = request_class(28)
OffsetFetch = request_class(9)
Produce = request_class(0)
Fetch = request_class(1)

TRANSACTIONAL = 0x10


class Ctx:
    """What a handler reads of its request's context."""

    def __init__(self, api_key: int, version: int) -> None:
        self.api_key = api_key
        self.api_version = version
        self.correlation_id = 0
        self.client_id = "model"
        self.client_host = "127.0.0.1"
        self.listener = None
        self.waiter = None
        self.response = None

    @property
    def token(self) -> object:
        return self


class Model:
    def __init__(self, topics: dict[str, int] | None = None, max_timeout_ms: int = 900_000,
                 now: int = 1_000_000, group_config: GroupConfig | None = None,
                 transaction_version: int = 2) -> None:
        self.config = Config(in_memory=True, transaction_max_timeout_ms=max_timeout_ms,
                             feature=(f"transaction.version={transaction_version}",))
        self.group_config = group_config or GroupConfig()
        self.now = now
        self.log: list[Any] = []  # every record made durable, in order
        self.topic_sizes = topics or {"out": 2, "in": 1}
        self.broker = self._broker(TopicRegistry())
        for name, count in self.topic_sizes.items():
            self.broker.topics.create(name, count)
        self.tick()

    def _broker(self, topics: TopicRegistry) -> Broker:
        return Broker(self.config, topics, GroupCoordinator(self.group_config, topics))

    # -- the shell's part ---------------------------------------------------------

    def _settle(self, outcome: Any) -> Any:
        records, after = settle(self.broker, outcome, self.now)
        self.log += records
        if after is not None:
            after()
        return outcome.responses[0][1]

    def tick(self) -> None:
        outcome = self.broker.tick(self.now)
        self.log += outcome.records
        self.broker.release(outcome.responses)  # its records are durable: markers go out

    def advance(self, ms: int) -> None:
        self.now += ms
        self.tick()

    def restart(self) -> None:
        """A new broker from the same partition data and coordinator log (as `kcsim serve`
        does on start): partitions rebuild their producers from their batches."""
        old = self.broker.topics
        topics = TopicRegistry()
        for name, topic in old.by_name.items():
            new = topics.create(name, len(topic.partitions), topic_id=topic.topic_id)
            new.partitions[:] = [Partition(p.index, p.store) for p in topic.partitions]
        self.broker = self._broker(topics)
        for record in self.log:
            self.broker.apply(record)
        self.tick()

    # -- requests ---------------------------------------------------------------

    def init(self, txn_id: str | None, timeout_ms: int = 60_000, version: int = 4,
             producer_id: int = -1, producer_epoch: int = -1) -> Any:
        self.broker.now_ms = self.now
        return self._settle(self.broker.transactions.init_producer_id(
            version, InitProducerId(transactional_id=txn_id, transaction_timeout_ms=timeout_ms,
                                    producer_id=producer_id, producer_epoch=producer_epoch),
            self.now))

    def add_partitions(self, txn_id: str, pid: int, epoch: int,
                       partitions: dict[str, list[int]], version: int = 3) -> dict[Any, int]:
        topics = [AddPartitions.AddPartitionsToTxnTopic(name=t, partitions=ps)
                  for t, ps in partitions.items()]
        if version >= 4:
            request = AddPartitions(transactions=[AddPartitions.AddPartitionsToTxnTransaction(
                transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
                verify_only=False, topics=topics)])
        else:
            request = AddPartitions(v3_and_below_transactional_id=txn_id,
                                    v3_and_below_producer_id=pid,
                                    v3_and_below_producer_epoch=epoch,
                                    v3_and_below_topics=topics)
        response = self._settle(self.broker.transactions.add_partitions(version, request,
                                                                        self.now))
        results = (response.results_by_transaction[0].topic_results if version >= 4
                   else response.results_by_topic_v3_and_below)
        return {(t.name, p.partition_index): p.partition_error_code
                for t in results for p in t.results_by_partition}

    def add_offsets(self, txn_id: str, pid: int, epoch: int, group: str,
                    version: int = 3) -> int:
        return int(self._settle(self.broker.transactions.add_offsets(
            version, AddOffsets(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
                                group_id=group), self.now)).error_code)

    def end(self, txn_id: str, pid: int, epoch: int, commit: bool, version: int = 3) -> Any:
        return self._settle(self.broker.transactions.end_txn(
            version, EndTxn(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
                            committed=commit), self.now))

    def txn_offset_commit(self, txn_id: str, pid: int, epoch: int, group: str,
                          offsets: dict[tuple[str, int], int], generation: int = -1,
                          member_id: str = "", version: int = 3) -> dict[Any, int]:
        by_topic: dict[str, list[Any]] = {}
        for (topic, partition), offset in offsets.items():
            by_topic.setdefault(topic, []).append(TxnOffsetCommit.TxnOffsetCommitRequestPartition(
                partition_index=partition, committed_offset=offset, committed_metadata=""))
        request = TxnOffsetCommit(
            transactional_id=txn_id, group_id=group, producer_id=pid, producer_epoch=epoch,
            generation_id_or_member_epoch=generation, member_id=member_id,
            group_instance_id=None,
            topics=[TxnOffsetCommit.TxnOffsetCommitRequestTopic(
                name=t, topic_id=self._topic_id(t), partitions=ps) for t, ps in by_topic.items()])
        txns = self.broker.transactions
        if txns.adds_implicitly(28, version):  # transactions v2: the group joins by itself
            error, added = txns.add_committed_group(version, request, self.now)
            self.log += added.records
            if error:
                return dict.fromkeys(offsets, error)
        error = producer_error(txns.txns, version, request)
        if error:
            return dict.fromkeys(offsets, error)
        outcome = self.broker.groups.handle(28, version, request, Ctx(28, version), self.now)
        self.log += outcome.records
        response = outcome.responses[0][1]
        named = {self._topic_id(t): t for t in by_topic}  # v6 answers by id (KIP-1319)
        return {(named[t.topic_id] if version >= 6 else t.name, p.partition_index): p.error_code
                for t in response.topics for p in t.partitions}

    def _topic_id(self, name: str) -> uuid.UUID:
        """The topic's id; an unknown topic's is made up from its name."""
        topic = self.broker.topics.get(name)
        return topic.topic_id if topic is not None else uuid.uuid5(uuid.NAMESPACE_DNS, name)

    def produce(self, topic: str, partition: int, values: list[bytes], *, pid: int = -1,
                epoch: int = 0, seq: int = 0, txn_id: str | None = None,
                version: int = 9) -> tuple[int, int]:
        """(error, base offset) of one batch; an answer that waits for the transaction
        coordinator's records (Produce v12+ adding its partition) gets them logged first."""
        raw = batch(values, producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                    attributes=TRANSACTIONAL if txn_id is not None else 0)
        request = Produce(transactional_id=txn_id, acks=-1, timeout_ms=1000, topic_data=[
            Produce.TopicProduceData(name=topic, partition_data=[
                Produce.PartitionProduceData(index=partition, records=raw)])])
        self.broker.now_ms = self.now
        response = produce(self.broker, Ctx(0, version), request)
        if isinstance(response, Pending):
            self.log += response.records
            try:
                response.answer.send(None)
            except StopIteration as done:
                response = done.value
        part = response.responses[0].partition_responses[0]
        return int(part.error_code), int(part.base_offset)

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        return {tp: v.offset for tp, v in self.broker.groups.committed_offsets(group).items()}

    def fetch_offsets(self, group: str, require_stable: bool) -> dict[tuple[str, int], tuple]:
        request = OffsetFetch(group_id=group, topics=None, require_stable=require_stable)
        outcome = self.broker.groups.handle(9, 7, request, Ctx(9, 7), self.now)
        response = outcome.responses[0][1]
        return {(t.name, p.partition_index): (p.committed_offset, p.error_code)
                for t in response.topics for p in t.partitions}

    def fetch_offset(self, group: str, topic: str, partition: int,
                     require_stable: bool = True) -> tuple[int, int]:
        request = OffsetFetch(group_id=group, require_stable=require_stable, topics=[
            OffsetFetch.OffsetFetchRequestTopic(name=topic, partition_indexes=[partition])])
        outcome = self.broker.groups.handle(9, 7, request, Ctx(9, 7), self.now)
        p = outcome.responses[0][1].topics[0].partitions[0]
        return int(p.committed_offset), int(p.error_code)

    # -- reading ------------------------------------------------------------------

    def partition(self, topic: str, index: int) -> Partition:
        return self.broker.topics.by_name[topic].partitions[index]

    def read_committed(self, topic: str, index: int) -> list[bytes]:
        """What a read_committed consumer reads from the start, as Kafka's clients skip
        aborted transactions: fetched over the wire shape, filtered by the aborted list."""
        request = Fetch(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 30,
                        isolation_level=1, session_id=0, session_epoch=-1, topics=[
                            Fetch.FetchTopic(topic=topic, partitions=[Fetch.FetchPartition(
                                partition=index, fetch_offset=0, partition_max_bytes=1 << 30)])],
                        forgotten_topics_data=[], rack_id="")
        response = fetch(self.broker, Ctx(1, 11), request)
        part = response.responses[0].partitions[0]
        return read_as_client(part.records or b"", part.aborted_transactions or [])


def read_as_client(data: bytes, aborted_list: list[Any]) -> list[bytes]:
    """Kafka's consumer: a transactional batch of a producer whose aborted transaction
    began at or before it is skipped until that producer's abort marker."""
    pending = sorted((a.first_offset, a.producer_id) for a in aborted_list)
    aborting: set[int] = set()
    out: list[bytes] = []
    for info in iter_batches(data):
        raw = data[info.start:info.start + info.size]
        base = int.from_bytes(raw[:8], "big", signed=True)
        while pending and pending[0][0] <= base + info.last_offset_delta:
            aborting.add(pending.pop(0)[1])
        producer = batch_producer(raw)
        if producer.control:
            if control_type(raw) == 0:
                aborting.discard(producer.producer_id)
            continue
        if producer.transactional and producer.producer_id in aborting:
            continue
        out += [r.value or b"" for r in batch_records(raw, base, lambda c, d: d)]
    return out


