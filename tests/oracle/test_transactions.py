"""Transactions, kcsim against Kafka: InitProducerId with a transactional id, AddPartitionsToTxn,
AddOffsetsToTxn, TxnOffsetCommit, EndTxn at every version both serve, fencing, the last stable
offset, RequireStable, and what DescribeTransactions and ListTransactions say.

Producer ids are the broker's to choose: they are compared as placeholders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class

from . import ops
from .ops import LIST_OFFSETS, OFFSET_FETCH

if TYPE_CHECKING:
    from .harness import Run

Across = Any
PRODUCE, FETCH, INIT, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = (
    0, 1, 22, 24, 25, 26, 28)
DESCRIBE_TXNS, LIST_TXNS = 65, 66
COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR = 14, 15, 16
CONCURRENT_TRANSACTIONS = 51
RETRIED = {COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
           CONCURRENT_TRANSACTIONS}


def _pid(answer: Any) -> Any:
    if getattr(answer, "producer_id", -1) >= 0:
        answer.producer_id = "<pid>"
    return answer


def locate(run: Run, txn_id: str) -> None:
    """FindCoordinator with key type 1, until found (Kafka creates its transaction log on the
    first ask); the final answer is compared."""
    cls = request_class(10)
    found: list[Any] = []

    def located() -> bool:
        found.append(run.call(10, 4, cls(key_type=1, coordinator_keys=[txn_id]), compare=False))
        return found[-1].coordinators[0].error_code == 0

    run.until("the transaction coordinator", located, timeout=60)
    run.record(10, 4, found[-1])


def init(run: Run, txn_id: str, timeout_ms: int = 60000, label: str = "") -> Any:
    """InitProducerId v4, retried (uncompared) while the coordinator is loading or a
    transaction is completing; the final answer is compared."""
    cls = request_class(INIT)
    request = cls(transactional_id=txn_id, transaction_timeout_ms=timeout_ms, producer_id=-1,
                  producer_epoch=-1)
    answers: list[Any] = []

    def done() -> bool:
        answers.append(run.call(INIT, 4, request, compare=False))
        return answers[-1].error_code not in RETRIED

    run.until(f"InitProducerId of {txn_id}", done, timeout=60)
    answer = answers[-1]
    pid, epoch = answer.producer_id, answer.producer_epoch
    run.record(INIT, 4, _pid(answer), label)
    return pid, epoch


def add_partitions(run: Run, txn_id: str, pid: int, epoch: int,
                   partitions: dict[str, list[int]], version: int = 3) -> Any:
    cls = request_class(ADD_PARTITIONS)
    return run.call(ADD_PARTITIONS, version, cls(
        v3_and_below_transactional_id=txn_id, v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch, v3_and_below_topics=[
            cls.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in partitions.items()]))


def end(run: Run, txn_id: str, pid: int, epoch: int, commit: bool, version: int) -> Any:
    cls = request_class(END_TXN)
    answer = run.call(END_TXN, version, cls(transactional_id=txn_id, producer_id=pid,
                                            producer_epoch=epoch, committed=commit),
                      compare=False)
    run.record(END_TXN, version, _pid(answer))
    return answer


def ended(run: Run, txn_id: str) -> None:
    """Wait until the coordinator has finished ending the transaction: Kafka writes
    CompleteCommit/CompleteAbort after the markers, and answers an AddPartitionsToTxn
    sent before that CONCURRENT_TRANSACTIONS."""
    request = request_class(DESCRIBE_TXNS)(transactional_ids=[txn_id])

    def done() -> bool:
        answer = run.call(DESCRIBE_TXNS, 0, request, compare=False)
        return answer.transaction_states[0].transaction_state in ("CompleteCommit",
                                                                  "CompleteAbort")

    run.until(f"the end of {txn_id}'s transaction", done)


def produce(run: Run, topic: str, txn_id: str, pid: int, epoch: int, seq: int,
            version: int = 9) -> Any:
    from tests.server.fuzz.batches import batch

    cls = request_class(PRODUCE)
    raw = batch([b"v"], producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                attributes=0x10)
    return run.call(PRODUCE, version, cls(
        transactional_id=txn_id, acks=-1, timeout_ms=30000,
        topic_data=[cls.TopicProduceData(name=topic, partition_data=[
            cls.PartitionProduceData(index=0, records=raw)])]))


def latest(run: Run, topic: str, isolation: int, compare: bool = True,
           partition: int = 0) -> int:
    cls = request_class(LIST_OFFSETS)
    answer = run.call(LIST_OFFSETS, 7, cls(replica_id=-1, isolation_level=isolation, topics=[
        cls.ListOffsetsTopic(name=topic, partitions=[cls.ListOffsetsPartition(
            partition_index=partition, current_leader_epoch=-1, timestamp=-1)])]),
        compare=compare)
    return int(answer.topics[0].partitions[0].offset)


def commit_offset(run: Run, txn_id: str, group: str, topic: str, pid: int, epoch: int,
                  version: int) -> Any:
    """TxnOffsetCommit of offset 1 of partition 0, without group membership."""
    cls = request_class(TXN_OFFSET_COMMIT)
    return run.call(TXN_OFFSET_COMMIT, version, cls(
        transactional_id=txn_id, group_id=group, producer_id=pid, producer_epoch=epoch,
        generation_id_or_member_epoch=-1, member_id="", group_instance_id=None, topics=[
            cls.TxnOffsetCommitRequestTopic(name=topic, partitions=[
                cls.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=1,
                                                    committed_metadata="")])]))


def stable_fetch(run: Run, group: str, topic: str, compare: bool = True) -> Any:
    cls = request_class(OFFSET_FETCH)
    return run.call(OFFSET_FETCH, 7, cls(group_id=group, require_stable=True, topics=[
        cls.OffsetFetchRequestTopic(name=topic, partition_indexes=[0])]), compare=compare)


def transaction_cases(run: Run, version: int) -> None:
    """One transaction through its whole life, with the refusals clients meet on the way."""
    txn_id, group, topic = run.group("tx"), run.group(), run.topic()
    ops.create_topic(run, topic, compare=False)
    locate(run, txn_id)
    cls = request_class(INIT)
    for timeout in (0, 900001):
        run.call(INIT, 4, cls(transactional_id=txn_id, transaction_timeout_ms=timeout,
                              producer_id=-1, producer_epoch=-1), label=f"timeout {timeout}")
    pid, epoch = init(run, txn_id)
    end(run, txn_id, pid, epoch, True, version)  # nothing open
    add_partitions(run, txn_id, pid, epoch, {topic: [0, 7]})
    add_partitions(run, txn_id, pid, epoch, {topic: [0]})
    produce(run, topic, txn_id, pid, epoch, 0)
    latest(run, topic, 1)  # the open transaction holds the last stable offset
    latest(run, topic, 0)
    run.call(ADD_OFFSETS, 3, request_class(ADD_OFFSETS)(
        transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, group_id=group))
    commit_offset(run, txn_id, group, topic, pid, epoch, 3)
    stable_fetch(run, group, topic)
    end(run, txn_id, pid, epoch, True, version)
    run.until("the markers", lambda: latest(run, topic, 1, False) == latest(run, topic, 0, False))
    run.until("the offsets", lambda: stable_fetch(run, group, topic, False)
              .topics[0].partitions[0].error_code == 0)
    latest(run, topic, 1)
    stable_fetch(run, group, topic)
    # A new producer of the same id fences this one.
    new_pid, _ = init(run, txn_id, label="re-init")
    assert new_pid == pid, (run.name, new_pid, pid)
    add_partitions(run, txn_id, pid, epoch, {topic: [0]}, version=1)
    add_partitions(run, txn_id, pid, epoch, {topic: [0]}, version=3)
    end(run, txn_id, pid, epoch, False, version)
    run.call(DESCRIBE_TXNS, 0, request_class(DESCRIBE_TXNS)(
        transactional_ids=[txn_id, run.group("unknown")]), compare=False)


def test_a_transaction_s_life(across: Across) -> None:
    assert across(END_TXN, transaction_cases)


def describe_txn(run: Run, txn_id: str) -> None:
    answer = run.call(DESCRIBE_TXNS, 0, request_class(DESCRIBE_TXNS)(
        transactional_ids=[txn_id]), compare=False)
    for state in answer.transaction_states:
        _pid(state)
        if state.transaction_start_time_ms >= 0:
            state.transaction_start_time_ms = "<time>"
    run.record(DESCRIBE_TXNS, 0, answer)


def verify(run: Run, txn_id: str, pid: int, epoch: int, topic: str,
           partitions: list[int]) -> Any:
    cls = request_class(ADD_PARTITIONS)
    return run.call(ADD_PARTITIONS, 5, cls(transactions=[cls.AddPartitionsToTxnTransaction(
        transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, verify_only=True,
        topics=[cls.AddPartitionsToTxnTopic(name=topic, partitions=partitions)])]))


def v2_cases(run: Run) -> None:
    """Transactions v2 (KIP-890 part 2), as a Java 4.x producer drives them where
    transaction.version 2 is finalized: Produce v12 adds its partition, TxnOffsetCommit v5
    its group, every EndTxn v5 bumps the epoch and a retry of one is answered again;
    AddPartitionsToTxn's verify_only only looks."""
    txn_id, group, topic = run.group("tx"), run.group(), run.topic()
    ops.create_topic(run, topic, 2, compare=False)
    locate(run, txn_id)
    pid, epoch = init(run, txn_id)
    verify(run, txn_id, pid, epoch, topic, [0])
    produce(run, topic, txn_id, pid, epoch, 0, version=12)
    describe_txn(run, txn_id)
    verify(run, txn_id, pid, epoch, topic, [0, 1])
    verify(run, txn_id, pid, epoch + 1, topic, [0])
    commit_offset(run, txn_id, group, topic, pid, epoch, 5)
    end(run, txn_id, pid, epoch, True, 5)
    ended(run, txn_id)
    run.until("the markers", lambda: latest(run, topic, 1, False) == latest(run, topic, 0, False))
    run.until("the offsets", lambda: stable_fetch(run, group, topic, False)
              .topics[0].partitions[0].error_code == 0)
    stable_fetch(run, group, topic)
    end(run, txn_id, pid, epoch, True, 5)  # a retry: answered with the bumped epoch again
    end(run, txn_id, pid, epoch, False, 5)  # ... but not as an abort
    produce(run, topic, txn_id, pid, epoch, 1, version=12)  # the old epoch
    end(run, txn_id, pid, epoch + 1, True, 5)  # nothing open to commit
    end(run, txn_id, pid, epoch + 1, False, 5)  # an abort of nothing bumps the epoch
    ended(run, txn_id)
    describe_txn(run, txn_id)
    produce(run, topic, txn_id, pid, epoch + 2, 0, version=12)
    end(run, txn_id, pid, epoch + 2, False, 5)
    run.until("the abort marker", lambda: latest(run, topic, 1, False)
              == latest(run, topic, 0, False))
    latest(run, topic, 0)


def test_transactions_v2(differential: Any) -> None:
    differential(v2_cases)


def add_partitions_any(run: Run, txn_id: str, pid: int, epoch: int, topic: str,
                       partitions: list[int], version: int) -> Any:
    cls = request_class(ADD_PARTITIONS)
    topics = [cls.AddPartitionsToTxnTopic(name=topic, partitions=partitions)]
    if version >= 4:
        request = cls(transactions=[cls.AddPartitionsToTxnTransaction(
            transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, verify_only=False,
            topics=topics)])
    else:
        request = cls(v3_and_below_transactional_id=txn_id, v3_and_below_producer_id=pid,
                      v3_and_below_producer_epoch=epoch, v3_and_below_topics=topics)
    return run.call(ADD_PARTITIONS, version, request)


def fencing_cases(run: Run, version: int) -> None:
    """A second producer of the same transactional id aborts the first one's transaction
    and fences it: the old epoch is refused everywhere, the open data is never readable."""
    txn_id, topic = run.group("tx"), run.topic()
    ops.create_topic(run, topic, 2, compare=False)
    locate(run, txn_id)
    pid, epoch = init(run, txn_id)
    add_partitions_any(run, txn_id, pid, epoch, topic, [0, 1], version)
    produce(run, topic, txn_id, pid, epoch, 0)
    latest(run, topic, 1)
    init(run, txn_id, label="fencing re-init")
    run.until("the abort markers",
              lambda: latest(run, topic, 1, False) == latest(run, topic, 0, False) == 2
              and latest(run, topic, 0, False, partition=1) == 1)
    latest(run, topic, 1)
    latest(run, topic, 0, partition=1)  # a partition of the transaction without data: a marker
    add_partitions_any(run, txn_id, pid, epoch, topic, [1], version)
    end(run, txn_id, pid, epoch, True, 3)
    end(run, txn_id, pid, epoch, True, 1)
    answer = run.call(DESCRIBE_TXNS, 0, request_class(DESCRIBE_TXNS)(
        transactional_ids=[txn_id, run.group("unknown")]), compare=False)
    for state in answer.transaction_states:
        _pid(state)
        if state.transaction_start_time_ms >= 0:
            state.transaction_start_time_ms = "<time>"
    run.record(DESCRIBE_TXNS, 0, answer)
    listed = run.call(LIST_TXNS, 1, request_class(LIST_TXNS)(
        state_filters=["CompleteAbort", "Bogus"], producer_id_filters=[pid], duration_filter=-1),
        compare=False)
    for state in listed.transaction_states:
        _pid(state)
    run.record(LIST_TXNS, 1, listed)


def test_fencing(across: Across) -> None:
    assert across(ADD_PARTITIONS, fencing_cases)


def idempotent_cases(run: Run, version: int) -> None:
    """An idempotent producer: in-order batches, a retried batch answered with its first
    offset, a sequence gap, a batch from a new epoch that does not start at 0."""
    from tests.server.fuzz.batches import batch

    topic = run.topic()
    ops.create_topic(run, topic, compare=False)
    answers: list[Any] = []

    def handed_out() -> bool:  # Kafka's producer id manager may still be starting
        answers.append(run.call(INIT, 4, request_class(INIT)(
            transactional_id=None, transaction_timeout_ms=60000, producer_id=-1,
            producer_epoch=-1), compare=False))
        return answers[-1].error_code not in RETRIED

    run.until("a producer id", handed_out)
    answer = answers[-1]
    pid = answer.producer_id
    run.record(INIT, 4, _pid(answer))
    cls = request_class(PRODUCE)

    def send(values: list[bytes], seq: int, epoch: int = 0) -> None:
        raw = batch(values, producer_id=pid, producer_epoch=epoch, base_sequence=seq)
        run.call(PRODUCE, version, cls(transactional_id=None, acks=-1, timeout_ms=30000,
                                       topic_data=[cls.TopicProduceData(name=topic, partition_data=[
                                           cls.PartitionProduceData(index=0, records=raw)])]))

    send([b"a", b"b"], 0)
    send([b"c"], 2)
    send([b"a", b"b"], 0)  # a retry of the first
    send([b"c"], 2)  # a retry of the second
    send([b"e"], 5)  # a gap
    send([b"d"], 3)
    send([b"x"], 7, epoch=1)  # a new epoch must start at sequence 0
    send([b"y"], 0, epoch=1)
    latest(run, topic, 0)


def test_idempotent_producer(across: Across) -> None:
    assert across(PRODUCE, idempotent_cases)


def _batches(records: bytes) -> list[tuple[int, int, bool, bool]]:
    """(base offset, records, transactional, control) of each batch."""
    from kcsim.protocol.record_batch import batch_producer, iter_batches

    out = []
    for info in iter_batches(records):
        raw = records[info.start:info.start + info.size]
        producer = batch_producer(raw)
        out.append((int.from_bytes(raw[:8], "big"), info.record_count, producer.transactional,
                    producer.control))
    return out


def fetch_committed(run: Run, topic: str, isolation: int, version: int) -> None:
    """Fetch from offset 0 to the end this isolation level may read, as a consumer does
    (Kafka may answer a fetch with fewer batches than fit); compared as the batches read
    (base offset, records, transactional, control) and the aborted transactions told, by
    placeholder producer id."""
    cls = request_class(FETCH)
    offset, batches, aborted, answer = 0, [], [], None
    while True:
        answer = run.call(FETCH, version, cls(
            replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20,
            isolation_level=isolation, session_id=0, session_epoch=-1, rack_id="",
            forgotten_topics_data=[], topics=[cls.FetchTopic(topic=topic, partitions=[
                cls.FetchPartition(partition=0, fetch_offset=offset,
                                   partition_max_bytes=1 << 20)])]), compare=False)
        part = answer.responses[0].partitions[0]
        read = _batches(part.records) if part.records else []
        batches += read
        for a in part.aborted_transactions or ():
            if a.first_offset not in [x.first_offset for x in aborted]:
                aborted.append(a)
        end = part.last_stable_offset if isolation == 1 else part.high_watermark
        if not read:
            break
        offset = read[-1][0] + read[-1][1]
        if offset >= end:
            break
    for a in aborted:
        _pid(a)
    part.records = batches
    part.aborted_transactions = aborted if isolation == 1 else None
    run.record(FETCH, version, answer, f"Fetch v{version} isolation {isolation}")


def read_committed_cases(run: Run, version: int) -> None:
    """A committed, an aborted and an open transaction in one partition: the last stable
    offset and the aborted transactions each isolation level is told."""
    txn_id, topic = run.group("tx"), run.topic()
    ops.create_topic(run, topic, compare=False)
    locate(run, txn_id)
    pid, epoch = init(run, txn_id)
    for seq, commit in enumerate((True, False, None)):
        add_partitions(run, txn_id, pid, epoch, {topic: [0]})
        produce(run, topic, txn_id, pid, epoch, seq)
        if commit is not None:
            end(run, txn_id, pid, epoch, commit, 3)
            written = 2 * (seq + 1)  # each transaction: its record and its marker
            run.until("the markers", lambda n=written: latest(run, topic, 1, False)
                      == latest(run, topic, 0, False) == n)
            ended(run, txn_id)
    run.until("the open record", lambda: latest(run, topic, 0, False) == 5)
    fetch_committed(run, topic, 1, version)
    fetch_committed(run, topic, 0, version)
    end(run, txn_id, pid, epoch, False, 3)


def test_read_committed(across: Across) -> None:
    assert across(FETCH, read_committed_cases)


def group_member_cases(run: Run, version: int) -> None:
    """TxnOffsetCommit into a classic group with a member (KIP-447): its generation, a stale
    one, an unknown member, a static instance it is not, and no membership at all; then what
    the group holds once the transaction commits."""
    from .test_classic_groups import stable_member

    txn_id, group, topic = run.group("tx"), run.group(), run.topic()
    ops.create_topic(run, topic, compare=False)
    member, generation = stable_member(run, group, topic, compare=False)
    topic_id = ops.topic_ids(run, topic)[topic]  # v6 names topics by id (KIP-1319)
    locate(run, txn_id)
    pid, epoch = init(run, txn_id)
    run.call(ADD_OFFSETS, 3, request_class(ADD_OFFSETS)(
        transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, group_id=group))
    cls = request_class(TXN_OFFSET_COMMIT)
    member_fields = {"generation_id_or_member_epoch": generation, "member_id": member}
    cases = [
        (1, member_fields, None),
        (2, {"generation_id_or_member_epoch": generation + 1, "member_id": member}, None),
        (3, {"generation_id_or_member_epoch": generation, "member_id": "nobody"}, None),
        (4, member_fields, "not-this-one"),
        (5, {"generation_id_or_member_epoch": -1, "member_id": ""}, None),
    ]
    for offset, fields, instance in cases:
        if version < 3 and offset != 5:
            continue  # before v3 a commit names no member
        run.call(TXN_OFFSET_COMMIT, version, cls(
            transactional_id=txn_id, group_id=group, producer_id=pid, producer_epoch=epoch,
            group_instance_id=instance, topics=[cls.TxnOffsetCommitRequestTopic(
                name=topic, topic_id=topic_id, partitions=[cls.TxnOffsetCommitRequestPartition(
                    partition_index=0, committed_offset=offset, committed_metadata="")])],
            **fields), label=f"TxnOffsetCommit v{version} offset {offset}")
    end(run, txn_id, pid, epoch, True, 3)
    run.until("the offsets", lambda: stable_fetch(run, group, topic, False)
              .topics[0].partitions[0].error_code == 0)
    stable_fetch(run, group, topic)


def test_txn_offset_commit_in_a_group(across: Across) -> None:
    assert across(TXN_OFFSET_COMMIT, group_member_cases)
