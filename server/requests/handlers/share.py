"""ShareFetch (78) and ShareAcknowledge (79): KIP-932's records, acquired and acknowledged.

The share partitions are the group coordinator's (`coordinator/share/`); this is the
partition leader's side of them: the share session (`state/share_sessions.py`), the
log read from where a partition wants to go on, and the records each change writes.
A ShareFetch takes its piggy-backed acknowledgements first, then acquires for its
member from the log of each partition of its session, and answers with the record
batches read and the ranges acquired; with nothing to acquire it parks until a produce
(or a lock running out, or an acknowledgement giving records back) wakes it or
MaxWaitMs passes on the broker's clock. Acknowledgements are answered once their
records (ShareUpdate / ShareSnapshot) are durable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import trio

from kcsim.coordinator.share.membership import valid_member_id
from kcsim.coordinator.share.partition import AckBatch, LogBatch, check_acknowledgements
from kcsim.coordinator.share.persisted import ShareKey
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.share_group import ShareAcknowledgeResponse, ShareFetchResponse

from ...state.answers import Durable, Pending
from ...state.share_sessions import FINAL_EPOCH, INITIAL_EPOCH, SessionPartition
from ..routes import serves

if TYPE_CHECKING:
    from kcsim.coordinator.share.partition import SharePartition, Update
    from kcsim.storage import Record

    from ...state.broker_state import BrokerState as Broker
    from ...state.share_sessions import ShareSession
    from ..context import RequestContext

E = ErrorCode
SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79
# Where a record batch holds its base offset, attributes, last offset delta, producer id.
_I64_AT, _ATTRIBUTES_AT, _DELTA_AT, _PRODUCER_AT = 0, 21, 23, 43
_TRANSACTIONAL = 0x10
_F = ShareFetchResponse
_A = ShareAcknowledgeResponse
# Kafka tells a partition's leader only when it moved; otherwise the struct's defaults.
_NO_LEADER = _F.LeaderIdAndEpoch(leader_id=0, leader_epoch=0)
_NO_ACK_LEADER = _A.LeaderIdAndEpoch(leader_id=0, leader_epoch=0)
# What Kafka's share partition says when it refuses acknowledgements (the request's own
# checks, check_acknowledgements, say nothing).
_ACK_MESSAGES = {
    E.INVALID_RECORD_STATE: "The offset cannot be acknowledged. The offset is not acquired.",
    E.INVALID_REQUEST: "Batch record not found. The first offset in request is past acquired "
                       "records.",
}


class _Answer(NamedTuple):
    """One partition's answer so far: its fetch and acknowledgement errors, its records."""

    error: int
    ack_error: int
    records: bytes
    acquired: list[Any]
    ack_message: str | None = None


def _share_on(broker: Broker) -> bool:
    return broker.config.feature_levels.get("share.version", 0) >= 1


def _bad_ids(request: Any) -> bool:
    """Kafka's request handler refuses a request without a group id or with an invalid
    member id (INVALID_REQUEST with no message)."""
    return not request.group_id or not valid_member_id(request.member_id)


def _ack_message(error: int) -> str | None:
    return _ACK_MESSAGES.get(ErrorCode(error)) if error else None


def _ack_batches(batches: list[Any]) -> list[AckBatch]:
    return [AckBatch(b.first_offset, b.last_offset, tuple(b.acknowledge_types)) for b in batches]


def _partition(broker: Broker, group: str, tp: SessionPartition, records: list[Record]
               ) -> tuple[int, SharePartition | None, Any]:
    """The share partition of (group, topic id, partition), made on first use; its error."""
    topic = broker.topics.by_id.get(tp.topic_id)
    if topic is None:
        return E.UNKNOWN_TOPIC_ID, None, None
    if not 0 <= tp.partition < len(topic.partitions):
        return E.UNKNOWN_TOPIC_OR_PARTITION, None, None
    log = topic.partitions[tp.partition]
    groups = broker.groups
    assert groups is not None
    configs = groups.share_configs(group)
    start = (lambda: log.log_start_offset) if configs.earliest else (lambda: log.log_end_offset)
    share = groups.shares.partition(ShareKey(group, tp.topic_id.bytes, tp.partition), start,
                                    broker.now_ms, configs.lock_duration_ms,
                                    configs.delivery_count_limit, records)
    return E.NONE, share, log


def _acknowledge(broker: Broker, request: Any, group: str, member: str, tp: SessionPartition,
                 batches: list[Any], records: list[Record]) -> tuple[int, str | None]:
    """A partition's acknowledgements taken: their error and its message."""
    if not batches:
        return E.NONE, None
    renew = bool(getattr(request, "is_renew_ack", False))
    acks = _ack_batches(batches)
    refused = check_acknowledgements(acks, renew)
    if refused:
        return int(refused), None
    error, share, _ = _partition(broker, group, tp, records)
    if share is None:
        return error, None
    error, update = share.acknowledge(member, acks, broker.now_ms, renew_allowed=renew)
    _write(broker, group, tp, update, records)
    return int(error), _ack_message(error)


def _write(broker: Broker, group: str, tp: SessionPartition, update: Update | None,
           records: list[Record]) -> None:
    """The record of a share partition's change, if it made one."""
    groups = broker.groups
    assert groups is not None
    record = groups.shares.write(ShareKey(group, tp.topic_id.bytes, tp.partition), update,
                                 broker.now_ms)
    if record is not None:
        records.append(record)


def _acquire(broker: Broker, group: str, member: str, tp: SessionPartition, budget: int,
             max_records: int, batch_size: int, records: list[Record]) -> _Answer:
    error, share, log = _partition(broker, group, tp, records)
    if share is None:
        return _Answer(error, E.NONE, b"", [])
    offset = max(share.next_fetch_offset(), log.log_start_offset)
    if offset >= log.log_end_offset or max_records <= 0:
        return _Answer(E.NONE, E.NONE, b"", [])
    groups = broker.groups
    assert groups is not None
    committed = groups.share_configs(group).read_committed
    chunks = log.read(offset, max(budget, 1), log.last_stable_offset if committed else None)
    if not chunks:
        return _Answer(E.NONE, E.NONE, b"", [])
    batches = [LogBatch(b := int.from_bytes(c[_I64_AT:_I64_AT + 8], "big", signed=True),
                        b + int.from_bytes(c[_DELTA_AT:_DELTA_AT + 4], "big", signed=True))
               for c in chunks]
    aborted = _aborted(log, chunks, batches) if committed else []
    acquired, update = share.acquire(member, batches, max_records, broker.now_ms,
                                     batch_size=batch_size or None, aborted=aborted)
    _write(broker, group, tp, update, records)
    if not acquired:
        return _Answer(E.NONE, E.NONE, b"", [])
    first, last = acquired[0].first_offset, acquired[-1].last_offset
    data = b"".join(c for c, b in zip(chunks, batches, strict=True)
                    if b.last_offset >= first and b.first_offset <= last)
    return _Answer(E.NONE, E.NONE, data, [
        _F.AcquiredRecords(first_offset=a.first_offset, last_offset=a.last_offset,
                           delivery_count=a.delivery_count) for a in acquired])


def _aborted(log: Any, chunks: list[bytes], batches: list[LogBatch]) -> list[tuple[int, int]]:
    """The ranges of the batches read that belong to aborted transactions
    (read_committed: archived, never delivered)."""
    found = log.producers.aborted_between(batches[0].first_offset, batches[-1].last_offset + 1)
    if not found:
        return []
    ranges = []
    for chunk, batch in zip(chunks, batches, strict=True):
        if not int.from_bytes(chunk[_ATTRIBUTES_AT:_ATTRIBUTES_AT + 2], "big") & _TRANSACTIONAL:
            continue
        producer = int.from_bytes(chunk[_PRODUCER_AT:_PRODUCER_AT + 8], "big", signed=True)
        if any(a.producer_id == producer and a.first_offset <= batch.first_offset < a.last_offset
               for a in found):
            ranges.append((batch.first_offset, batch.last_offset))
    return ranges


def _session(broker: Broker, ctx: RequestContext, request: Any
             ) -> tuple[int, ShareSession | None]:
    return broker.share_sessions.open(request.group_id, request.member_id,
                                      request.share_session_epoch, ctx.listener.node)


def _release_session(broker: Broker, ctx: RequestContext, group: str, member: str,
                     records: list[Record]) -> None:
    """The member closed its session: what it still holds goes back (uncounted)."""
    broker.share_sessions.close(group, member, ctx.listener.node)
    groups = broker.groups
    assert groups is not None
    records += groups.shares.release_member(group, member, broker.now_ms, False)
    broker.data_arrived.unpark_all()


@serves(SHARE_FETCH)
def share_fetch(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    lock_ms = 0
    if not _share_on(broker):
        return _F(error_code=E.UNSUPPORTED_VERSION, acquisition_lock_timeout_ms=lock_ms)
    if _bad_ids(request):
        return _F(error_code=E.INVALID_REQUEST)
    group, member, epoch = request.group_id, request.member_id, request.share_session_epoch
    acks = {SessionPartition(t.topic_id, p.partition_index): p.acknowledgement_batches
            for t in request.topics for p in t.partitions if p.acknowledgement_batches}
    if epoch == INITIAL_EPOCH and acks:
        return _F(error_code=E.INVALID_REQUEST)  # as Kafka's handler: no message
    error, session = _session(broker, ctx, request)
    if session is None:
        return _F(error_code=error)
    groups = broker.groups
    assert groups is not None
    lock_ms = groups.share_configs(group).lock_duration_ms
    named = [SessionPartition(t.topic_id, p.partition_index)
             for t in request.topics for p in t.partitions]
    for t in request.forgotten_topics_data:
        for p in t.partitions:
            session.partitions.pop(SessionPartition(t.topic_id, p), None)
    if epoch != FINAL_EPOCH:
        for tp in named:
            session.partitions[tp] = None
    records: list[Record] = []
    answers: dict[SessionPartition, _Answer] = {}
    for tp, batches in acks.items():
        ack_error, message = _acknowledge(broker, request, group, member, tp, batches, records)
        answers[tp] = _Answer(E.NONE, ack_error, b"", [], message)
    if records:
        broker.data_arrived.unpark_all()  # a release may have made records available
    if epoch == FINAL_EPOCH:
        _release_session(broker, ctx, group, member, records)
        return _respond(_fetch_response(answers, named, lock_ms), records)
    fetched = _fetch_all(broker, request, session, answers, records)
    if fetched or request.max_wait_ms <= 0:
        return _respond(_fetch_response(answers, named, lock_ms), records)
    deadline = broker.now_ms + request.max_wait_ms
    return Pending(_long_poll(broker, request, session, answers, named, lock_ms, deadline),
                   records)


def _fetch_all(broker: Broker, request: Any, session: ShareSession,
               answers: dict[SessionPartition, _Answer], records: list[Record]) -> bool:
    """Acquire from each partition of the session; True when anything was acquired or
    failed (the answer goes now)."""
    budget = request.max_bytes if request.max_bytes > 0 else 0x7FFFFFFF
    left = request.max_records if request.max_records > 0 else 500
    anything = False
    for tp in list(session.partitions):
        answer = _acquire(broker, request.group_id, request.member_id, tp, budget, left,
                          request.batch_size, records)
        done = answers.get(tp)
        if answer.error or answer.acquired:
            anything = True
            budget -= len(answer.records)
            left -= sum(a.last_offset - a.first_offset + 1 for a in answer.acquired)
            answers[tp] = answer._replace(ack_error=done.ack_error if done else E.NONE,
                                          ack_message=done.ack_message if done else None)
            if answer.error:
                session.partitions.pop(tp, None)
    return anything


async def _long_poll(broker: Broker, request: Any, session: ShareSession,
                     answers: dict[SessionPartition, _Answer], named: list[SessionPartition],
                     lock_ms: int, deadline: int) -> Any:
    """Wait for records to acquire until `deadline` on the broker's clock."""
    clock = broker.clock
    assert clock is not None
    while True:
        with trio.move_on_at(clock.to_trio(deadline)):
            await broker.data_arrived.park()
        broker.now_ms = now = clock.now_ms()
        late: list[Record] = []
        fetched = _fetch_all(broker, request, session, answers, late)
        if late:
            groups = broker.groups
            assert groups is not None
            groups.shares.write_later(late)
        if fetched or now >= deadline:
            return _fetch_response(answers, named, lock_ms)


def _respond(response: Any, records: list[Record]) -> Any:
    return Durable(response, records, []) if records else response


def _fetch_response(answers: dict[SessionPartition, _Answer], named: list[SessionPartition],
                    lock_ms: int) -> Any:
    by_topic: dict[Any, list[Any]] = {}
    for tp in dict.fromkeys([*named, *answers]):
        a = answers.get(tp, _Answer(E.NONE, E.NONE, b"", []))
        by_topic.setdefault(tp.topic_id, []).append(_F.PartitionData(
            partition_index=tp.partition, error_code=a.error, acknowledge_error_code=a.ack_error,
            acknowledge_error_message=a.ack_message, current_leader=_NO_LEADER,
            records=a.records, acquired_records=a.acquired))
    return _F(error_code=E.NONE, acquisition_lock_timeout_ms=lock_ms, responses=[
        _F.ShareFetchableTopicResponse(topic_id=t, partitions=ps) for t, ps in by_topic.items()])


@serves(SHARE_ACKNOWLEDGE)
def share_acknowledge(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    if not _share_on(broker):
        return _A(error_code=E.UNSUPPORTED_VERSION)
    if _bad_ids(request):
        return _A(error_code=E.INVALID_REQUEST)
    group, member, epoch = request.group_id, request.member_id, request.share_session_epoch
    if epoch == INITIAL_EPOCH:
        return _A(error_code=E.INVALID_SHARE_SESSION_EPOCH)
    error, session = _session(broker, ctx, request)
    if session is None:
        return _A(error_code=error)
    records: list[Record] = []
    topics = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            tp = SessionPartition(t.topic_id, p.partition_index)
            ack_error, message = _acknowledge(broker, request, group, member, tp,
                                              p.acknowledgement_batches, records)
            parts.append(_A.PartitionData(partition_index=p.partition_index, error_code=ack_error,
                                          error_message=message, current_leader=_NO_ACK_LEADER))
        topics.append(_A.ShareAcknowledgeTopicResponse(topic_id=t.topic_id, partitions=parts))
    if records:
        broker.data_arrived.unpark_all()
    if epoch == FINAL_EPOCH:
        _release_session(broker, ctx, group, member, records)
    groups = broker.groups
    assert groups is not None
    lock_ms = groups.share_configs(group).lock_duration_ms
    return _respond(_A(error_code=E.NONE, acquisition_lock_timeout_ms=lock_ms, responses=topics),
                    records)
