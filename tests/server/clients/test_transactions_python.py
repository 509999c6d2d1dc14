"""Transactions through the Python clients over real sockets: confluent-kafka's consume-
transform-produce loop with send_offsets_to_transaction, committing and aborting in turn,
and fencing by a second producer with the same transactional id; aiokafka's and
kafka-python's transactional producers."""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from .txnkit import read_values

pytestmark = [pytest.mark.timeout(120)]
COUNT = 6


def create(bootstrap: str, *topics: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in topics]).values():
        future.result(10)


def committed(consumer: Consumer, tp: TopicPartition) -> int:
    return int(consumer.committed([tp], timeout=10)[0].offset)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_consume_transform_produce_commits_and_aborts_in_turn(kcsim: Any, unique_name: Any,
                                                              protocol: str) -> None:
    source, sink, group = unique_name("in"), unique_name("out"), unique_name("g")
    bootstrap = kcsim.bootstrap
    create(bootstrap, source, sink)
    plain = Producer({"bootstrap.servers": bootstrap})
    for i in range(COUNT):
        plain.produce(source, value=f"v{i}".encode(), partition=0)
    assert plain.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "group.protocol": protocol, "isolation.level": "read_committed",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique_name("tx")})
    tp = TopicPartition(source, 0)
    steps = []
    try:
        producer.init_transactions(10)
        consumer.subscribe([source])
        transactions = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(steps) < 2 * COUNT:
            message = consumer.poll(0.2)
            if message is None or message.error() is not None:
                continue
            commit = transactions % 2 == 1
            transactions += 1
            producer.begin_transaction()
            producer.produce(sink, value=b"out-" + message.value(), partition=0)
            producer.send_offsets_to_transaction(
                [TopicPartition(source, 0, message.offset() + 1)],
                consumer.consumer_group_metadata(), 10)
            assert kcsim.pending_offsets(group) == {(source, 0): message.offset() + 1}
            if commit:
                producer.commit_transaction(10)
            else:
                producer.abort_transaction(10)
                consumer.seek(TopicPartition(source, 0, message.offset()))
            steps.append(("commit" if commit else "abort", message.offset(),
                          committed(consumer, tp)))
    finally:
        consumer.close()
    expected = []
    for i in range(COUNT):
        expected += [("abort", i, i if i else -1001), ("commit", i, i + 1)]
    assert steps == expected
    assert read_values(bootstrap, sink) == [f"out-v{i}" for i in range(COUNT)]
    assert kcsim.committed(group) == {(source, 0): COUNT}
    sent = kcsim.requests("TxnOffsetCommit", group=group)
    assert len(sent) == 2 * COUNT and not any(r.errors for r in sent)
    # librdkafka knows no transactions v2 (KIP-890 part 2): though the broker finalizes
    # transaction.version 2, it adds partitions and groups explicitly, produces below v12
    # and ends with EndTxn below v5.
    assert kcsim.requests("AddPartitionsToTxn") and kcsim.requests("AddOffsetsToTxn")
    assert max(r.version for r in kcsim.requests("Produce")) < 12
    assert max(r.version for r in kcsim.requests("EndTxn")) < 5


def test_a_second_producer_with_the_same_id_fences_the_first(kcsim: Any,
                                                             unique_name: Any) -> None:
    sink, txn_id = unique_name("out"), unique_name("tx")
    bootstrap = kcsim.bootstrap
    create(bootstrap, sink)
    first = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    first.init_transactions(10)
    first.begin_transaction()
    first.produce(sink, value=b"zombie", partition=0)
    assert first.flush(10) == 0
    second = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    second.init_transactions(10)
    with pytest.raises(KafkaException) as fenced:
        first.commit_transaction(10)
    assert fenced.value.args[0].fatal() or "fenced" in str(fenced.value).lower()
    second.begin_transaction()
    second.produce(sink, value=b"second", partition=0)
    second.commit_transaction(10)
    assert read_values(bootstrap, sink) == ["second"]
    _, epoch, state = kcsim.transaction(txn_id)
    assert (epoch, state) == (2, "CompleteCommit")  # the first's 0, its fence 1, the second 2


def test_aiokafka_and_kafka_python_transactions(kcsim: Any, unique_name: Any) -> None:
    """aiokafka's and kafka-python's transactional producers: what they commit is read,
    what they abort is not."""
    import asyncio

    from aiokafka import AIOKafkaProducer
    from kafka import KafkaProducer

    first, second = unique_name("aio"), unique_name("kp")
    create(kcsim.bootstrap, first, second)

    async def aio() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=kcsim.bootstrap,
                                    transactional_id=unique_name("tx"))
        await producer.start()
        try:
            async with producer.transaction():
                await producer.send_and_wait(first, b"committed", partition=0)
            await producer.begin_transaction()
            await producer.send_and_wait(first, b"aborted", partition=0)
            await producer.abort_transaction()
        finally:
            await producer.stop()

    asyncio.run(aio())
    producer = KafkaProducer(bootstrap_servers=kcsim.bootstrap,
                             transactional_id=unique_name("tx"))
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(second, b"committed", partition=0)
        producer.commit_transaction()
        producer.begin_transaction()
        producer.send(second, b"aborted", partition=0)
        producer.abort_transaction()
    finally:
        producer.close()
    assert read_values(kcsim.bootstrap, first) == ["committed"]
    assert read_values(kcsim.bootstrap, second) == ["committed"]
