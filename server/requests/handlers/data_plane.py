"""Produce (0), Fetch (1) and ListOffsets (2): the in-memory data plane.

Enough of a partition leader for consumers to run end to end and for lag to be
computed: batches are stored as received (with their assigned base offset),
fetches long-poll on max_wait_ms / min_bytes, and offsets resolve by
earliest, latest, timestamp or max timestamp.
"""

from __future__ import annotations

import struct
import uuid
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

from kcsim.protocol.codecs import response_class
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.record_batch import BatchRejected, batch_producer, produced_batch

from ...offsets.topic import is_internal
from ...state.answers import Pending
from ...state.failures import log_failures
from ..fetch_session import fetch_context
from ..routes import serves

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

ProduceResponse = response_class(0)
FetchResponse = response_class(1)
ListOffsetsResponse = response_class(2)
_PTopic = ProduceResponse.TopicProduceResponse
_PPart = ProduceResponse.PartitionProduceResponse
_FTopic = FetchResponse.FetchableTopicResponse
_FPart = FetchResponse.PartitionData
_Aborted = FetchResponse.AbortedTransaction
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_LTopic = ListOffsetsResponse.ListOffsetsTopicResponse
_LPart = ListOffsetsResponse.ListOffsetsPartitionResponse
_ZERO = uuid.UUID(int=0)

EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -2, -1, -3, -4, -5
_TRANSACTIONAL = 0x10
READ_COMMITTED = 1


def _find_topic(broker: Any, name: str | None, topic_id: uuid.UUID | None, by_id: bool) -> Any:
    if by_id:
        return broker.topics.by_id.get(topic_id)
    return broker.topics.get(name)


def _first_read(broker: Any, named: Iterable[Any]) -> Any:
    """The activation of `__consumer_offsets` when this request is the first to read it
    (it is filled before the answer), else None."""
    activation = broker.offsets_activation
    if activation is None or activation.active:
        return None
    topic = activation.view.topic
    return activation if any(t is topic for t in named) else None


async def _after_activation(broker: Any, activation: Any, answer: Callable[[], Any]) -> Any:
    await activation.activate()
    broker.now_ms = broker.clock.now_ms()
    response = answer()
    return await response.answer if isinstance(response, Pending) else response


def _unknown_topic(by_id: bool) -> int:
    return ErrorCode.UNKNOWN_TOPIC_ID if by_id else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def _append(broker: Any, topic: str, partition: Any, records: bytes | None, version: int,
            transactional_id: str | None, txn_records: list[Any]) -> Any:
    """Check and append the batch of one partition; (error, base offset, log append time,
    message, whether it reached the log: Kafka answers a batch the transaction check
    refused with log start offset -1).

    A batch Kafka would refuse stores nothing and answers with Kafka's error;
    bytes after the batch (a batch cut short) are dropped, as Kafka trims them.
    A transactional batch goes only into a partition of its producer's open
    transaction; an idempotent producer's retried batch is acknowledged, not stored twice.
    Produce v12+ adds the partition to the transaction itself (transactions v2): when
    that wrote records (into `txn_records`), the answer is the append to make once they
    are durable, as Kafka appends only after the coordinator's log has the partition.
    """
    try:
        info, size = produced_batch(records, version)
    except BatchRejected as exc:
        return exc.code, -1, -1, str(exc), True
    assert records is not None
    batch = records if size == len(records) else records[:size]
    if info.attributes & _TRANSACTIONAL:
        producer = batch_producer(batch)
        if transactional_id is None:
            return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, -1, None, True
        txns = broker.transactions
        if txns.adds_implicitly(0, version):
            error, outcome = txns.add_produced(transactional_id, producer.producer_id,
                                               producer.producer_epoch, topic,
                                               partition.index, broker.now_ms)
            if outcome.failures:
                log_failures(outcome.failures)
            if outcome.records and not error:
                txn_records += outcome.records
                return partial(_appended, broker, topic, partition, batch, info)
        else:
            error = txns.check_produce(transactional_id, producer.producer_id,
                                       producer.producer_epoch, topic, partition.index)
        if error:
            return error, -1, -1, None, False
    error, base, append_time = _appended(broker, topic, partition, batch, info)
    return error, base, append_time, None, True


def _appended(broker: Any, topic: str, partition: Any, batch: bytes,
              info: Any) -> tuple[int, int, int]:
    """Append a checked batch; counted in the topic's bytes and messages in if stored."""
    result = partition.append_produced(batch, info)
    if not result[0]:
        broker.throughput.produced(topic, len(batch), info.record_count)
    return result


@serves(0)
def produce(broker: Any, ctx: Any, request: Any) -> Any:
    by_id = ctx.api_version >= 13
    responses = []
    appended = False
    txn_records: list[Any] = []  # what adding partitions to transactions wrote
    later: list[tuple[list[Any], int, Any, Callable[[], Any]]] = []
    for t in request.topic_data:
        topic = _find_topic(broker, t.name, t.topic_id, by_id)
        parts: list[Any] = []
        for p in t.partition_data:
            if topic is None or not 0 <= p.index < len(topic.partitions):
                err = _unknown_topic(by_id) if topic is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                parts.append(_PPart(index=p.index, error_code=err, base_offset=-1,
                                    log_append_time_ms=-1, log_start_offset=-1))
                continue
            partition = topic.partitions[p.index]
            if is_internal(topic.name):  # as Kafka: "Cannot append to internal topic"
                parts.append(_PPart(index=p.index, error_code=ErrorCode.INVALID_TOPIC_EXCEPTION,
                                    base_offset=-1, log_append_time_ms=-1, log_start_offset=-1))
                continue
            result = _append(
                broker, t.name if not by_id else topic.name, partition, p.records,
                ctx.api_version, request.transactional_id, txn_records)
            if callable(result):
                later.append((parts, len(parts), partition, result))
                parts.append(None)
                continue
            err, base, append_time, msg, reached = result
            appended = appended or err == 0
            parts.append(_PPart(index=p.index, error_code=err, base_offset=base,
                                log_append_time_ms=append_time,
                                log_start_offset=partition.log_start_offset if reached else -1,
                                error_message=msg))
        responses.append(_PTopic(name=t.name, topic_id=t.topic_id, partition_responses=parts))
    if appended and broker.data_arrived:  # wake the long polls parked, if any
        broker.data_arrived.unpark_all()
    response = ProduceResponse(responses=responses, throttle_time_ms=0)
    if later:
        return Pending(_append_later(broker, later, response if request.acks else None),
                       txn_records)
    if request.acks == 0:
        return None  # Kafka sends no response at all for acks=0
    return response


async def _append_later(broker: Any, later: list[tuple[list[Any], int, Any, Callable[[], Any]]],
                        response: Any) -> Any:
    """The batches whose partitions the transaction coordinator's records (now durable)
    added to their transactions: appended now, their answers filled in."""
    appended = False
    for parts, i, partition, append in later:
        err, base, append_time = append()
        appended = appended or err == 0
        parts[i] = _PPart(index=partition.index, error_code=err, base_offset=base,
                          log_append_time_ms=append_time,
                          log_start_offset=partition.log_start_offset)
    if appended and broker.data_arrived:
        broker.data_arrived.unpark_all()
    return response


def _fetch_once(broker: Any, topics: list[Any], request: Any,
                by_id: bool) -> tuple[Any, int, bool, dict[str, int]]:
    """Build a fetch response from what is in the logs now for `topics` (the request's, or
    its session's): (response, bytes, any error, bytes read per topic name).

    read_committed (isolation level 1) reads up to the last stable offset and is told
    the aborted transactions in what it read, so that it can skip their records."""
    committed = request.isolation_level == READ_COMMITTED
    budget = request.max_bytes if request.max_bytes > 0 else 0x7FFFFFFF
    total = 0
    errors = False
    responses = []
    read: dict[str, int] = {}
    for t in topics:
        topic = _find_topic(broker, t.topic, t.topic_id, by_id)
        parts = []
        for p in t.partitions:
            if topic is None or not 0 <= p.partition < len(topic.partitions):
                err = _unknown_topic(by_id) if topic is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                parts.append(_FPart(partition_index=p.partition, error_code=err, high_watermark=-1,
                                    last_stable_offset=-1, log_start_offset=-1, records=None))
                errors = True
                continue
            part = topic.partitions[p.partition]
            hw = part.log_end_offset
            lso = part.last_stable_offset
            if p.fetch_offset < part.log_start_offset or p.fetch_offset > hw:
                # Empty records, not null, as Kafka: librdkafka cannot parse a null set.
                parts.append(_FPart(partition_index=p.partition,
                                    error_code=ErrorCode.OFFSET_OUT_OF_RANGE, high_watermark=hw,
                                    last_stable_offset=lso, log_start_offset=part.log_start_offset,
                                    aborted_transactions=None, records=b""))
                errors = True
                continue
            data = b""
            upto = lso if committed else hw
            aborted = None
            if p.fetch_offset < upto:
                limit = min(p.partition_max_bytes, budget - total)
                if limit > 0 or total == 0:
                    chunks = part.read(p.fetch_offset, max(limit, 1), lso if committed else None)
                    data = b"".join(chunks)
                    total += len(data)
                    if data:
                        read[topic.name] = read.get(topic.name, 0) + len(data)
                    if committed and data:
                        aborted = _aborted(part, p.fetch_offset, chunks)
            parts.append(_FPart(partition_index=p.partition, error_code=0, high_watermark=hw,
                                last_stable_offset=lso, log_start_offset=part.log_start_offset,
                                aborted_transactions=aborted, preferred_read_replica=-1,
                                records=data))
        responses.append(_FTopic(topic=t.topic, topic_id=t.topic_id, partitions=parts))
    response = FetchResponse(throttle_time_ms=0, error_code=0, session_id=0, responses=responses)
    return response, total, errors, read


def _aborted(part: Any, start: int, chunks: list[bytes]) -> list[Any] | None:
    """The aborted transactions overlapping the batches read (None when there are none)."""
    last = chunks[-1]
    end = _I64.unpack_from(last, 0)[0] + _I32.unpack_from(last, 23)[0] + 1
    found = part.producers.aborted_between(start, end)
    if not found:
        return None
    return [_Aborted(producer_id=a.producer_id, first_offset=a.first_offset) for a in found]


@serves(1)
def fetch(broker: Any, ctx: Any, request: Any) -> Any:
    by_id = ctx.api_version >= 13
    first = _first_read(broker, (_find_topic(broker, t.topic, t.topic_id, by_id)
                                 for t in request.topics))
    if first is not None:
        return Pending(_after_activation(broker, first, lambda: fetch(broker, ctx, request)))
    session = fetch_context(broker.fetch_sessions, request, by_id, broker.now_ms)
    if session.refusal is not None:
        return session.refusal
    response, size, errors, read = _fetch_once(broker, session.topics(broker, request), request,
                                               by_id)
    if errors or size >= request.min_bytes or request.max_wait_ms <= 0:
        broker.throughput.fetched(read)
        return session.answer(response, broker.now_ms)
    return Pending(_long_poll(broker, session, request, by_id, broker.now_ms + request.max_wait_ms))


async def _long_poll(broker: Any, session: Any, request: Any, by_id: bool,
                     deadline_ms: int) -> Any:
    """Wait for data until `deadline_ms` on the server's clock: woken by produces and by
    the clock changing (a test advancing it past the deadline answers at once)."""
    clock = broker.clock
    while True:
        with trio.move_on_at(clock.to_trio(deadline_ms)):
            await broker.data_arrived.park()
        response, size, errors, read = _fetch_once(broker, session.topics(broker, request),
                                                   request, by_id)
        now_ms = clock.now_ms()
        if errors or size >= request.min_bytes or now_ms >= deadline_ms:
            broker.throughput.fetched(read)
            return session.answer(response, now_ms)


def _list_offset(part: Any, timestamp: int, version: int,
                 isolation: int) -> tuple[int, int, int]:
    """(error, timestamp, offset) for one ListOffsets query; `latest` is the last stable
    offset for read_committed."""
    if timestamp == LATEST:
        return 0, -1, part.last_stable_offset if isolation == READ_COMMITTED else part.log_end_offset
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return 0, -1, part.log_start_offset
    if timestamp == MAX_TIMESTAMP:
        if part.max_timestamp_offset < 0:
            return 0, -1, -1
        return 0, part.max_timestamp, part.max_timestamp_offset
    if timestamp == LATEST_TIERED:
        return 0, -1, -1
    if timestamp < 0:
        return ErrorCode.INVALID_REQUEST, -1, -1
    offset, ts = part.offset_for_timestamp(timestamp)
    return 0, ts, offset


@serves(2)
def list_offsets(broker: Any, ctx: Any, request: Any) -> Any:
    first = _first_read(broker, (broker.topics.get(t.name) for t in request.topics))
    if first is not None:
        return Pending(_after_activation(broker, first,
                                         lambda: list_offsets(broker, ctx, request)))
    version = ctx.api_version
    isolation = request.isolation_level if version >= 2 else 0
    topics = []
    for t in request.topics:
        topic = broker.topics.get(t.name)
        parts = []
        for p in t.partitions:
            if topic is None or not 0 <= p.partition_index < len(topic.partitions):
                parts.append(_LPart(partition_index=p.partition_index,
                                    error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                    old_style_offsets=[], timestamp=-1, offset=-1, leader_epoch=-1))
                continue
            err, ts, offset = _list_offset(topic.partitions[p.partition_index], p.timestamp,
                                           version, isolation)
            parts.append(_LPart(partition_index=p.partition_index, error_code=err,
                                old_style_offsets=[offset] if offset >= 0 and err == 0 else [],
                                timestamp=ts, offset=offset, leader_epoch=0 if offset >= 0 else -1))
        topics.append(_LTopic(name=t.name, partitions=parts))
    return ListOffsetsResponse(throttle_time_ms=0, topics=topics)
