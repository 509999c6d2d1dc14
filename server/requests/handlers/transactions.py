"""InitProducerId (22), AddPartitionsToTxn (24), AddOffsetsToTxn (25), EndTxn (26),
WriteTxnMarkers (27), TxnOffsetCommit (28), DescribeProducers (61), DescribeTransactions
(65) and ListTransactions (66): the wire side of the transaction coordinator.

The coordinator is pure; what ends a transaction is settled here (`txn_endings`): its
answer goes out once the records are durable and the markers written.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from kcsim.coordinator import Ending
from kcsim.coordinator.txn_offsets import producer_error
from kcsim.protocol.codecs import response_class
from kcsim.protocol.error_answers import error_answer
from kcsim.protocol.errors import ErrorCode

from ...offsets.topic import is_internal
from ...state.answers import AfterDurable, Durable, Pending
from ...state.failures import log_failures
from ...state.txn_endings import complete_offsets, settle, write_markers
from ..routes import serves
from .groups import handle_group_request

if TYPE_CHECKING:
    from kcsim.coordinator import Outcome

    from ...state.broker_state import BrokerState as Broker
    from ..context import RequestContext

DescribeProducersResponse = response_class(61)
_DPTopic = DescribeProducersResponse.TopicResponse
_DPPartition = DescribeProducersResponse.PartitionResponse
_DPProducer = DescribeProducersResponse.ProducerState
WriteTxnMarkersResponse = response_class(27)
_WMResult = WriteTxnMarkersResponse.WritableTxnMarkerResult
_WMTopic = WriteTxnMarkersResponse.WritableTxnMarkerTopicResult
_WMPartition = WriteTxnMarkersResponse.WritableTxnMarkerPartitionResult


def _answer(broker: Broker, ctx: RequestContext, outcome: Outcome) -> Any:
    """The answer once its records are durable; the markers of a transaction it ended are
    written at that point, before the answer goes out, even if the client is gone by then."""
    if outcome.failures:
        log_failures(outcome.failures, f"from client {ctx.client_id!r} at {ctx.client_host}")
    response = outcome.responses[0][1]
    records, after = settle(broker, outcome, broker.now_ms)
    if after is None:
        return Durable(response, records, []) if records else response
    return Durable(response, records, [(AfterDurable(after), None)])


# Kafka 4.4 declares v6 (KIP-939 two-phase commit) unstable and does not advertise it.
@serves(22, max_version=5)
def init_producer_id(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    return _answer(broker, ctx, broker.transactions.init_producer_id(
        ctx.api_version, request, broker.now_ms, ctx))


@serves(24)
def add_partitions_to_txn(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    return _answer(broker, ctx, broker.transactions.add_partitions(
        ctx.api_version, request, broker.now_ms, ctx))


@serves(25)
def add_offsets_to_txn(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    return _answer(broker, ctx, broker.transactions.add_offsets(
        ctx.api_version, request, broker.now_ms, ctx))


@serves(26)
def end_txn(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    return _answer(broker, ctx, broker.transactions.end_txn(
        ctx.api_version, request, broker.now_ms, ctx))


def _marker_error(broker: Broker, name: str, index: int, producer_id: int, epoch: int) -> int:
    """Kafka's answer for one partition of a marker: unknown partitions, and a producer epoch
    older than the partition knows (a marker for a producer it never saw is written)."""
    topic = broker.topics.get(name)
    if topic is None or not 0 <= index < len(topic.partitions):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    known = topic.partitions[index].producers.producers.get(producer_id)
    if known is not None and epoch < known.epoch:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return ErrorCode.NONE


@serves(27)
def write_txn_markers(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    """Ends a producer's transaction in the named partitions, as a transaction coordinator
    (or `Admin.abortTransaction`, for a hanging one) orders: a marker into each data
    partition; in `__consumer_offsets`, the producer's pending offsets are committed or
    dropped instead, and the markers wait until that is durable, as an EndTxn's do."""
    results, endings, in_offsets = [], [], []
    for marker in request.markers:
        topics, accepted = [], []
        for t in marker.topics:
            parts = []
            for index in t.partition_indexes:
                error = _marker_error(broker, t.name, index, marker.producer_id,
                                      marker.producer_epoch)
                if not error:
                    accepted.append((t.name, index))
                parts.append(_WMPartition(partition_index=index, error_code=error))
            topics.append(_WMTopic(name=t.name, partitions=parts))
        results.append(_WMResult(producer_id=marker.producer_id, topics=topics))
        ending = Ending("", marker.producer_id, marker.producer_epoch, marker.transaction_result,
                        [(n, i) for n, i in accepted if not is_internal(n)], [])
        endings.append(ending)
        if any(is_internal(n) for n, _ in accepted):
            in_offsets.append(ending)
    response = WriteTxnMarkersResponse(markers=results)
    records = [r for e in in_offsets for r in complete_offsets(broker, e, broker.now_ms)]
    if not records:
        write_markers(broker, endings, broker.now_ms)
        return response
    return Durable(response, records,
                   [(AfterDurable(partial(write_markers, broker, endings, broker.now_ms)), None)])


@serves(28)
def txn_offset_commit(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    """Checked against the producer's transaction first, then served by the group (its rules:
    `coordinator/txn_offsets.py`). On transactions v2 (v5+) the request first adds its group
    to the transaction itself, and those records go before the group's."""
    txns = broker.transactions
    added: list[Any] = []
    if txns.adds_implicitly(28, ctx.api_version):
        error, outcome = txns.add_committed_group(ctx.api_version, request, broker.now_ms)
        if outcome.failures:
            log_failures(outcome.failures, f"from client {ctx.client_id!r} at {ctx.client_host}")
        added = outcome.records
        if error:
            answer = error_answer(28, ctx.api_version, request, error)
            return Durable(answer, added, []) if added else answer
    error = producer_error(txns.txns, ctx.api_version, request)
    if error:
        return error_answer(28, ctx.api_version, request, error)
    answer = handle_group_request(broker, ctx, request)
    if not added:
        return answer
    if isinstance(answer, (Durable, Pending)):
        answer.records = added + answer.records
        return answer
    return Durable(answer, added, [])


@serves(61)
def describe_producers(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    topics = []
    for t in request.topics:
        topic = broker.topics.get(t.name)
        parts = []
        for index in t.partition_indexes:
            if topic is None or not 0 <= index < len(topic.partitions):
                parts.append(_DPPartition(partition_index=index,
                                          error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                          error_message=None, active_producers=[]))
                continue
            state = topic.partitions[index].producers
            parts.append(_DPPartition(
                partition_index=index, error_code=0, error_message=None,
                active_producers=[
                    _DPProducer(producer_id=pid, producer_epoch=entry.epoch,
                                last_sequence=entry.last_seq,
                                last_timestamp=entry.last_timestamp,
                                coordinator_epoch=entry.coordinator_epoch,
                                current_txn_start_offset=state.ongoing.get(pid, -1))
                    for pid, entry in sorted(state.producers.items())]))
        topics.append(_DPTopic(name=t.name, partitions=parts))
    return DescribeProducersResponse(throttle_time_ms=0, topics=topics)


@serves(65)
def describe_transactions(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    return broker.transactions.describe(request)


@serves(66)
def list_transactions(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    return broker.transactions.list(ctx.api_version, request, broker.now_ms)
