"""Kafka's transaction coordinator as a pure fold: InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn, EndTxn, transaction time-outs, DescribeTransactions and ListTransactions.

State changes only through `apply` of TransactionKey / ProducerIdBlockKey records, live
and at replay. Requests and time-outs return an Outcome, as the group coordinator's do.

Each request, and each transaction a time-out or a restart ends, is all or nothing:
its records are applied as it writes them (a handler reads what it wrote, as an
InitProducerId that fences an open transaction does), and what `apply` changed
(a transactional id's metadata, its time-out, the producer id counters) is noted in
the journal (`shared/journal.py`) and put back if the call raises; its records and
endings are dropped, and a request is then answered UNKNOWN_SERVER_ERROR.

Ending a transaction writes PrepareCommit (or PrepareAbort) and hands the rest to the
shell as an `Ending` (`shared/interface.py`): the groups' pending offsets, then the
Complete record, then the markers. A log that ends between Prepare and Complete is
finished at the first tick after replay, as Kafka's coordinator does on load.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from msgspec import Struct

from kcsim.coordinator.records import (
    ProducerIdBlockKey,
    ProducerIdBlockValue,
    TransactionKey,
    TransactionValue,
)
from kcsim.protocol.codecs import api
from kcsim.protocol.error_answers import error_answer
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.init_producer_id import InitProducerIdResponse
from kcsim.protocol.messages.transactions import (
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    DescribeTransactionsResponse,
    EndTxnResponse,
    ListTransactionsResponse,
)
from kcsim.storage.records import Record

from ..shared.deadlines import Deadlines
from ..shared.interface import Ending, Failure, Outcome
from ..shared.journal import Journal
from ..shared.timers import TimerKey
from .metadata import MAX_EPOCH, TxnMetadata
from .state import ADD_RULES, END_RULES, END_V2_RULES, INIT_RULES, Add, End, Init, TxnState

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim.protocol.messages.init_producer_id import InitProducerIdRequest
    from kcsim.protocol.messages.transactions import (
        AddOffsetsToTxnRequest,
        DescribeTransactionsRequest,
        EndTxnRequest,
        ListTransactionsRequest,
        TxnOffsetCommitRequest,
    )

    from ..shared.events import EventHistory
    from ..shared.interface import TopicLookup

E = ErrorCode
S = TxnState
_APResult = AddPartitionsToTxnResponse.AddPartitionsToTxnResult
_APTopic = AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult
_APPartition = AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult
_APRequestTopic = AddPartitionsToTxnRequest.AddPartitionsToTxnTopic

TIMEOUT = "txn-timeout"
_OPEN = frozenset({S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT, S.PREPARE_EPOCH_FENCE})
FIRST_PRODUCER_ID = 1000
PRODUCER_ID_BLOCK = 1000
# The versions from which each API knows PRODUCER_FENCED (KIP-588); older ones are
# answered INVALID_PRODUCER_EPOCH instead.
FENCED_SINCE = {22: 4, 24: 2, 25: 2, 26: 2, 28: 3}

# The first versions of the requests that add to a transaction themselves (KIP-890 part 2).
_IMPLICIT_SINCE = {0: 12, 28: 5}
# What a Produce is answered when adding its partition fails: a fenced epoch is
# INVALID_PRODUCER_EPOCH, and a transaction still ending NOT_ENOUGH_REPLICAS, which every
# client retries (Kafka's ReplicaManager).
_AS_PRODUCE_ERROR: dict[int, int] = {E.PRODUCER_FENCED: E.INVALID_PRODUCER_EPOCH,
                                     E.CONCURRENT_TRANSACTIONS: E.NOT_ENOUGH_REPLICAS}

R = TypeVar("R")
_Request = TypeVar("_Request", bound=Struct)


def fenced(api_key: int, version: int) -> int:
    """PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH for a version that predates it."""
    return E.PRODUCER_FENCED if version >= FENCED_SINCE[api_key] else E.INVALID_PRODUCER_EPOCH


@dataclass
class TxnConfig:
    transaction_max_timeout_ms: int = 900000
    # The finalized `transaction.version` feature, which ApiVersions advertises (the
    # server's features table, `--feature transaction.version=N`): 2 (a fresh Kafka 4.4
    # cluster) lets Produce v12+ and TxnOffsetCommit v5+ add to the producer's transaction
    # implicitly (KIP-890 part 2); below it the explicit AddPartitionsToTxn /
    # AddOffsetsToTxn path is the only one. EndTxn follows its request's version either
    # way, as Kafka's.
    transaction_version: int = 2


class TransactionCoordinator:
    def __init__(self, config: TxnConfig, topics: TopicLookup) -> None:
        self.config = config
        self.topics = topics
        self.txns: dict[str, TxnMetadata] = {}
        self._journal = Journal()
        self.deadlines = Deadlines(self._journal)
        self.now = 0
        self._next_id = FIRST_PRODUCER_ID
        self._block_end = FIRST_PRODUCER_ID
        self._allocating = False  # False until the first id is handed out after replay
        self._started = False  # until the first tick, which finishes what replay left ending
        # What the call in progress wrote: records up to its first ending, the endings
        # (each with the records that follow its offsets), and where the next record goes.
        self._records: list[Record] = []
        self._endings: list[Ending] = []
        self._tail = self._records
        self._failures: list[Failure] = []
        # The group event log (the group coordinator's), when events are on: a transaction's
        # events are written among its records and fold into it once the call is over.
        self.events: EventHistory | None = None
        self._unfolded: list[Record] = []

    # -- the fold -------------------------------------------------------------

    def apply(self, record: Record) -> None:
        key = record.key
        journal = self._journal
        if type(key) is TransactionKey:
            txn_id = key.transactional_id
            if journal.open:
                journal.steps.append((self._put_back, txn_id, self.txns.get(txn_id)))
            value: TransactionValue | None = record.value
            if value is None:
                self.txns.pop(txn_id, None)
                self.deadlines.cancel(TimerKey(TIMEOUT, txn_id))
                return
            meta = TxnMetadata.from_value(txn_id, value)
            self.txns[txn_id] = meta
            timer = TimerKey(TIMEOUT, txn_id)
            if meta.state is S.ONGOING:
                self.deadlines.schedule(timer, meta.start_ms + meta.timeout_ms)
            else:
                self.deadlines.cancel(timer)
        elif type(key) is ProducerIdBlockKey:
            block = record.value
            if isinstance(block, ProducerIdBlockValue):
                journal.on_undo(self._put_ids, self._next_id, self._block_end, self._allocating)
                self._block_end = max(self._block_end, block.next_block)

    def _put_back(self, txn_id: str, meta: TxnMetadata | None) -> None:
        """Undo: the transactional id's metadata as it was (its time-out is the journal's)."""
        if meta is None:
            self.txns.pop(txn_id, None)
        else:
            self.txns[txn_id] = meta

    def _put_ids(self, next_id: int, block_end: int, allocating: bool) -> None:
        self._next_id, self._block_end, self._allocating = next_id, block_end, allocating

    def _write(self, meta: TxnMetadata) -> None:
        record = Record(TransactionKey(meta.transactional_id), meta.to_value())
        self._tail.append(record)
        self.apply(record)

    def _event(self, meta: TxnMetadata, kind: str, cause: str = "request") -> None:
        """Write an event of the transactional id (group type "transaction"), if events are on."""
        events = self.events
        if events is not None:
            detail: dict[str, str | int | list[str]] = {
                "producer_id": meta.producer_id,
                "partitions": [f"{t}-{p}" for t, p in sorted(meta.partitions)]}
            if meta.groups:
                detail["groups"] = sorted(meta.groups)
            record = events.event(self.now, meta.transactional_id, "transaction", kind, cause,
                                  "", detail)
            self._tail.append(record)
            self._unfolded.append(record)

    def _new_producer_id(self) -> int:
        """The next producer id; ids are reserved in durable blocks, so none is handed out
        twice across restarts (ids of a block begun before a restart are skipped)."""
        self._journal.on_undo(self._put_ids, self._next_id, self._block_end, self._allocating)
        if not self._allocating:
            self._allocating = True
            self._next_id = max(self._next_id, self._block_end)
        if self._next_id >= self._block_end:
            record = Record(ProducerIdBlockKey(),
                            ProducerIdBlockValue(self._next_id + PRODUCER_ID_BLOCK))
            self._tail.append(record)
            self.apply(record)
        pid = self._next_id
        self._next_id += 1
        return pid

    # -- one call's effects: all or nothing ------------------------------------

    def _step(self, step: Callable[[], R], what: str) -> R | None:
        """Run `step`; one that raises is undone, reported, and gives None. Records go only
        to the tail and endings only at the end, so cutting both back drops what it wrote."""
        journal = self._journal
        tail, endings = self._tail, len(self._endings)
        written, unfolded = len(tail), len(self._unfolded)
        journal.begin()
        try:
            result = step()
        except Exception as exc:
            journal.rollback()
            del tail[written:]
            del self._endings[endings:]
            del self._unfolded[unfolded:]
            self._tail = tail
            self._failures.append(Failure(what, exc))
            return None
        journal.commit()
        return result

    def _request(self, api_key: int, version: int, request: _Request, token: object,
                 handler: Callable[[int, _Request], Struct]) -> Outcome:
        """One request, all or nothing: a handler that raises changes nothing and its request
        is answered UNKNOWN_SERVER_ERROR."""
        response = self._step(lambda: handler(version, request),
                              f"{api(api_key).name} v{version}")
        if response is None:
            response = error_answer(api_key, version, request, E.UNKNOWN_SERVER_ERROR)
        return self._take([(token, response)])

    def _take(self, responses: list[tuple[object, Struct | None]] | None = None) -> Outcome:
        out = Outcome(responses or [], self._records, self._failures, self._endings)
        self._records, self._endings, self._failures = [], [], []
        self._tail = self._records
        if self._unfolded:
            assert self.events is not None
            for record in self._unfolded:
                self.events.apply(record)
            self._unfolded.clear()
        return out

    # -- time -------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        """The earliest time the shell should tick at; 0 (at once) until a first tick."""
        return self.deadlines.earliest_ms if self._started else 0

    def tick(self, now_ms: int) -> Outcome:
        """Abort, with a bumped epoch that fences their producer, the transactions that
        outlived their time-out (Kafka's abortTimedOutTransactions). The first tick first
        finishes what replay left ending (`_recover`)."""
        self.now = max(self.now, now_ms)
        if not self._started:
            self._started = True
            self._recover()
        while True:
            due = self.deadlines.pop_due(now_ms)
            if due is None:
                break
            _, key, _ = due
            meta = self.txns.get(key.group_id)
            if meta is not None and meta.state is S.ONGOING:
                self._step(partial(self._time_out, meta),
                           f"aborting timed-out transaction {key.group_id!r}")
        return self._take()

    def _recover(self) -> None:
        """After replay: finish the transactions whose log ends between Prepare and Complete,
        and name again the completed ones, whose markers may not all have been written
        (the shell writes a marker only where the transaction is still open)."""
        for meta in list(self.txns.values()):
            if meta.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                self._step(partial(self._ending, meta, meta.state is S.PREPARE_COMMIT, True),
                           f"finishing transaction {meta.transactional_id!r}")
            elif meta.state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT) and meta.partitions:
                self._hand_over(meta, meta.state is S.COMPLETE_COMMIT, recovering=True)

    # -- requests ---------------------------------------------------------------

    def init_producer_id(self, version: int, request: InitProducerIdRequest, now_ms: int,
                         token: object = None) -> Outcome:
        self.now = max(self.now, now_ms)
        return self._request(22, version, request, token, self._init_producer_id)

    def _init_producer_id(self, version: int,
                          request: InitProducerIdRequest) -> InitProducerIdResponse:
        txn_id = request.transactional_id
        if txn_id is None:
            return self._idempotent(version, request)
        timeout = request.transaction_timeout_ms
        if timeout <= 0 or timeout > self.config.transaction_max_timeout_ms:
            return _init(E.INVALID_TRANSACTION_TIMEOUT)
        meta = self.txns.get(txn_id)
        if meta is None:
            new = TxnMetadata(txn_id, self._new_producer_id(), 0, timeout, S.EMPTY,
                              update_ms=self.now)
            self._write(new)
            return _init(E.NONE, new.producer_id, 0)
        expected_pid = request.producer_id if version >= 3 else -1
        expected_epoch = request.producer_epoch if version >= 3 else -1
        if expected_pid >= 0 and (expected_pid, expected_epoch) != (meta.producer_id,
                                                                    meta.producer_epoch):
            return _init(fenced(22, version))
        does = INIT_RULES[meta.state]
        if does is Init.RETRY:
            return _init(E.CONCURRENT_TRANSACTIONS)
        if does is Init.FENCE:
            # The open transaction is aborted with a bumped epoch, fencing the old producer.
            meta = self._end(meta, commit=False, bump=True, cause="fenced")
        pid, epoch = meta.producer_id, meta.producer_epoch + 1
        if meta.epoch_exhausted():
            pid, epoch = self._new_producer_id(), 0
        self._write(meta.moved_to(S.EMPTY, self.now, producer_id=pid, producer_epoch=epoch,
                                  timeout_ms=timeout, partitions=set(), groups=set(),
                                  start_ms=-1))
        return _init(E.NONE, pid, epoch)

    def _idempotent(self, version: int, request: InitProducerIdRequest) -> InitProducerIdResponse:
        if version >= 3 and request.producer_id >= 0:
            # KIP-360: an idempotent producer bumps its own epoch to reset its sequences.
            epoch = request.producer_epoch + 1
            if epoch < 32767:
                return _init(E.NONE, request.producer_id, epoch)
        return _init(E.NONE, self._new_producer_id(), 0)

    def _check(self, api_key: int, version: int, txn_id: str, pid: int,
               epoch: int) -> tuple[int, TxnMetadata | None]:
        meta = self.txns.get(txn_id)
        if meta is None or meta.producer_id != pid:
            return E.INVALID_PRODUCER_ID_MAPPING, None
        if epoch != meta.producer_epoch:
            return fenced(api_key, version), None
        return E.NONE, meta

    def _add(self, meta: TxnMetadata, partitions: set[tuple[str, int]],
             groups: set[str], client_version: int) -> int:
        """Add to the open transaction (beginning one at rest); `client_version` is the
        transaction version the request speaks (2 for KIP-890 part 2's requests)."""
        does = ADD_RULES[meta.state]
        if does is Add.RETRY:
            return E.CONCURRENT_TRANSACTIONS
        if meta.state is S.ONGOING and partitions <= meta.partitions and groups <= meta.groups:
            return E.NONE
        if meta.state is S.ONGOING:
            new = meta.moved_to(S.ONGOING, self.now, partitions=meta.partitions | partitions,
                                groups=meta.groups | groups, client_version=client_version)
        else:
            new = meta.moved_to(S.ONGOING, self.now, partitions=set(partitions),
                                groups=set(groups), start_ms=self.now,
                                client_version=client_version)
            self._event(new, "transaction-begun")
        self._write(new)
        return E.NONE

    def add_partitions(self, version: int, request: AddPartitionsToTxnRequest, now_ms: int,
                       token: object = None) -> Outcome:
        self.now = max(self.now, now_ms)
        return self._request(24, version, request, token, self._add_partitions)

    def _add_partitions(self, version: int,
                        request: AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse:
        if version >= 4:
            results = [
                _APResult(transactional_id=t.transactional_id,
                          topic_results=self._add_to_txn(
                              version, t.transactional_id, t.producer_id, t.producer_epoch,
                              t.topics, t.verify_only))
                for t in request.transactions]
            return AddPartitionsToTxnResponse(throttle_time_ms=0, error_code=0,
                                              results_by_transaction=results)
        topics = self._add_to_txn(
            version, request.v3_and_below_transactional_id, request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch, request.v3_and_below_topics, False)
        return AddPartitionsToTxnResponse(throttle_time_ms=0,
                                          results_by_topic_v3_and_below=topics)

    def _add_to_txn(self, version: int, txn_id: str, pid: int, epoch: int,
                    topics: list[_APRequestTopic], verify_only: bool) -> list[_APTopic]:
        unknown: set[tuple[str, int]] = set()
        wanted: set[tuple[str, int]] = set()
        for t in topics:
            count = self.topics.partition_count(t.name)
            for p in t.partitions:
                (wanted if count is not None and 0 <= p < count else unknown).add((t.name, p))
        if unknown:
            error_of: dict[tuple[str, int], int] = dict.fromkeys(unknown, E.UNKNOWN_TOPIC_OR_PARTITION)
            error_of.update(dict.fromkeys(wanted, E.OPERATION_NOT_ATTEMPTED))
        elif verify_only:
            error_of = self._verify(version, txn_id, pid, epoch, wanted)
        else:
            error, meta = self._check(24, version, txn_id, pid, epoch)
            if meta is not None:
                # v4+ comes from a broker adding for a TV2 client (Kafka's
                # transactionVersionForAddPartitionsToTxn); earlier versions from a client.
                error = self._add(meta, wanted, set(), 2 if version >= 4 else 0)
            error_of = dict.fromkeys(wanted, error)
        by_topic: dict[str, list[_APPartition]] = {}
        for t in topics:
            parts = by_topic.setdefault(t.name, [])
            for p in t.partitions:
                parts.append(_APPartition(partition_index=p,
                                          partition_error_code=error_of[(t.name, p)]))
        return [_APTopic(name=name, results_by_partition=parts) for name, parts in by_topic.items()]

    def _verify(self, version: int, txn_id: str, pid: int, epoch: int,
                wanted: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """AddPartitionsToTxn's `verify_only` (v4+, what a broker asks before appending a
        transactional batch): whether each partition is in the producer's open
        transaction, changing nothing (Kafka's handleVerifyPartitionsInTransaction)."""
        error, meta = self._check(24, version, txn_id, pid, epoch)
        if meta is not None and meta.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            error = E.CONCURRENT_TRANSACTIONS
        if meta is None or error:
            return dict.fromkeys(wanted, error)
        return {tp: (E.NONE if meta.state is S.ONGOING and tp in meta.partitions
                     else E.TRANSACTION_ABORTABLE) for tp in wanted}

    def add_offsets(self, version: int, request: AddOffsetsToTxnRequest, now_ms: int,
                    token: object = None) -> Outcome:
        self.now = max(self.now, now_ms)
        return self._request(25, version, request, token, self._add_offsets)

    def _add_offsets(self, version: int,
                     request: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse:
        error, meta = self._check(25, version, request.transactional_id, request.producer_id,
                                  request.producer_epoch)
        if meta is not None:
            error = self._add(meta, set(), {request.group_id}, 0)
        return AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=error)

    def end_txn(self, version: int, request: EndTxnRequest, now_ms: int,
                token: object = None) -> Outcome:
        self.now = max(self.now, now_ms)
        return self._request(26, version, request, token, self._end_txn)

    def _end_txn(self, version: int, request: EndTxnRequest) -> EndTxnResponse:
        if version >= 5:
            return self._end_txn_v2(request)
        error, meta = self._check(26, version, request.transactional_id, request.producer_id,
                                  request.producer_epoch)
        if meta is None:
            return _end_response(error)
        does = END_RULES[(meta.state, bool(request.committed))]
        if does is End.RETRY:
            return _end_response(E.CONCURRENT_TRANSACTIONS)
        if does is End.INVALID:
            return _end_response(E.INVALID_TXN_STATE)
        if does is End.END:
            meta = self._end(meta, bool(request.committed), bump=False)
        return _end_response(E.NONE, meta.producer_id, meta.producer_epoch)

    def _end_txn_v2(self, request: EndTxnRequest) -> EndTxnResponse:
        """KIP-890 part 2 (EndTxn v5+, Kafka's transactionVersionForEndTxn): every end bumps
        the epoch and answers the producer id and epoch of the next transaction; a retry of
        an end that completed (the epoch before, or the last epoch of the id an overflow
        left) is answered with them again."""
        meta = self.txns.get(request.transactional_id)
        pid, epoch, commit = request.producer_id, request.producer_epoch, bool(request.committed)
        if meta is None:
            return _end_response(E.INVALID_PRODUCER_ID_MAPPING)
        retry_overflow = (meta.previous_producer_id == pid and epoch == MAX_EPOCH - 1
                          and meta.producer_epoch == 0)
        if meta.producer_id != pid and not retry_overflow:
            return _end_response(E.INVALID_PRODUCER_ID_MAPPING)
        retry = retry_overflow or meta.producer_epoch == epoch + 1
        if meta.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            valid = retry
        elif meta.state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            valid = retry or epoch == meta.producer_epoch
        else:
            valid = epoch == meta.producer_epoch
        if not valid:
            return _end_response(E.PRODUCER_FENCED)
        does = END_V2_RULES[(meta.state, commit, retry)]
        if does is End.RETRY:
            return _end_response(E.CONCURRENT_TRANSACTIONS)
        if does is End.INVALID:
            return _end_response(E.INVALID_TXN_STATE)
        if does is End.END:
            meta = self._end_bumped(meta, commit)
        elif does is End.BUMP:  # nothing to end: the previous transaction's are not ours
            meta = self._end_bumped(meta, commit, partitions=set(), groups=set(),
                                    start_ms=self.now)
        return _end_response(E.NONE, meta.producer_id, meta.producer_epoch)

    def _end_bumped(self, meta: TxnMetadata, commit: bool, **changes: object) -> TxnMetadata:
        """Prepare a transactions-v2 end with the epoch bumped (the markers carry it); at the
        last epoch a new producer id is reserved, which the Complete record moves to."""
        next_pid = self._new_producer_id() if meta.epoch_exhausted() else -1
        bumped = meta.moved_to(S.PREPARE_COMMIT if commit else S.PREPARE_ABORT, self.now,
                               producer_epoch=meta.producer_epoch + 1,
                               next_producer_id=next_pid, client_version=2, **changes)
        self._write(bumped)
        return self._ending(bumped, commit)

    def _time_out(self, meta: TxnMetadata) -> None:
        """Abort a transaction that outlived its time-out, fencing its producer."""
        self._event(meta, "transaction-timed-out", "timeout")
        self._end(meta, commit=False, bump=True, cause="timeout")

    def _end(self, meta: TxnMetadata, commit: bool, bump: bool,
             cause: str = "request") -> TxnMetadata:
        """Prepare the end (bumping the epoch when asked), then hand the markers to the shell."""
        if bump and not commit:
            meta = meta.moved_to(S.PREPARE_EPOCH_FENCE, self.now)
        epoch = meta.producer_epoch + 1 if bump else meta.producer_epoch
        pid = meta.producer_id
        if bump and meta.epoch_exhausted():
            pid, epoch = meta.producer_id, meta.producer_epoch  # markers keep the old epoch
        prepared = meta.moved_to(S.PREPARE_COMMIT if commit else S.PREPARE_ABORT, self.now,
                                 producer_id=pid, producer_epoch=epoch)
        self._write(prepared)
        return self._ending(prepared, commit, cause=cause)

    def _ending(self, prepared: TxnMetadata, commit: bool,
                recovering: bool = False, cause: str = "request") -> TxnMetadata:
        self._hand_over(prepared, commit, recovering)
        # The Complete record keeps the partitions: a restart before the markers were all
        # written finds where they are still due (`_recover`).
        state = S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT
        if prepared.client_version >= 2:
            # Transactions v2: the epoch the Prepare bumped stays, or an overflow moves to
            # the id reserved then, at epoch 0 (Kafka's prepareComplete).
            moved = prepared.next_producer_id >= 0
            done = prepared.moved_to(
                state, self.now, previous_producer_id=prepared.producer_id,
                producer_id=prepared.next_producer_id if moved else prepared.producer_id,
                producer_epoch=0 if moved else prepared.producer_epoch, next_producer_id=-1)
        else:
            done = prepared.moved_to(state, self.now)
        self._write(done)
        if prepared.partitions or prepared.groups:  # else nothing was begun (a bare bump)
            self._event(prepared, "transaction-committed" if commit else "transaction-aborted",
                        cause)
        return done

    def _hand_over(self, meta: TxnMetadata, commit: bool, recovering: bool = False) -> None:
        """Hand the rest of the transaction's end to the shell (`Ending`): the records
        written from here on (its Complete record first) follow the groups' offsets."""
        ending = Ending(meta.transactional_id, meta.producer_id, meta.producer_epoch, commit,
                        sorted(meta.partitions), sorted(meta.groups), recovering=recovering)
        self._endings.append(ending)
        self._tail = ending.then

    # -- what the data plane checks and adds -------------------------------------------

    def adds_implicitly(self, api_key: int, version: int) -> bool:
        """Whether a request adds to the producer's transaction itself (KIP-890 part 2):
        Produce v12+ and TxnOffsetCommit v5+, which only a client on transactions v2 sends,
        while `transaction.version` 2 is finalized."""
        return self.config.transaction_version >= 2 and version >= _IMPLICIT_SINCE[api_key]

    def add_produced(self, txn_id: str, pid: int, epoch: int, topic: str, partition: int,
                     now_ms: int) -> tuple[int, Outcome]:
        """A transactional batch of Produce v12+ adds its partition to the producer's
        transaction, beginning one at rest (the records to make durable before the batch
        is acknowledged are the outcome's); the error is Produce's, as Kafka's broker
        translates the coordinator's (ReplicaManager, AddPartitionsToTxnManager)."""
        self.now = max(self.now, now_ms)

        def add() -> int:
            error, meta = self._check(24, 5, txn_id, pid, epoch)
            if meta is not None:
                error = self._add(meta, {(topic, partition)}, set(), 2)
            return _AS_PRODUCE_ERROR.get(error, error)

        error = self._step(add, f"adding {topic}-{partition} to {txn_id!r} from Produce")
        return (E.UNKNOWN_SERVER_ERROR if error is None else error), self._take()

    def add_committed_group(self, version: int, request: TxnOffsetCommitRequest,
                            now_ms: int) -> tuple[int, Outcome]:
        """TxnOffsetCommit v5+ adds its group to the producer's transaction itself, as
        AddOffsetsToTxn would have (the client on transactions v2 sends none)."""
        self.now = max(self.now, now_ms)

        def add() -> int:
            error, meta = self._check(28, version, request.transactional_id,
                                      request.producer_id, request.producer_epoch)
            if meta is not None:
                error = self._add(meta, set(), {request.group_id}, 2)
            return error

        error = self._step(add, f"adding group {request.group_id!r} to "
                                f"{request.transactional_id!r} from TxnOffsetCommit")
        return (E.UNKNOWN_SERVER_ERROR if error is None else error), self._take()


    def check_produce(self, txn_id: str, pid: int, epoch: int, topic: str,
                      partition: int) -> int:
        """A transactional batch is accepted only into a partition of the producer's open
        transaction (Kafka's verification, which keeps hanging transactions out)."""
        meta = self.txns.get(txn_id)
        if meta is None or meta.producer_id != pid:
            return E.INVALID_PRODUCER_ID_MAPPING
        if epoch < meta.producer_epoch:
            return E.INVALID_PRODUCER_EPOCH
        if meta.state is not S.ONGOING or (topic, partition) not in meta.partitions:
            return E.INVALID_TXN_STATE
        return E.NONE

    # -- admin --------------------------------------------------------------------

    def describe(self, request: DescribeTransactionsRequest) -> DescribeTransactionsResponse:
        R = DescribeTransactionsResponse
        out = []
        for txn_id in request.transactional_ids:
            meta = self.txns.get(txn_id)
            if meta is None:
                # Kafka leaves the other fields at their zero values.
                out.append(R.TransactionState(
                    error_code=E.TRANSACTIONAL_ID_NOT_FOUND, transactional_id=txn_id,
                    transaction_state="", transaction_timeout_ms=0,
                    transaction_start_time_ms=0, producer_id=0, producer_epoch=0, topics=[]))
                continue
            value = meta.to_value()
            if meta.state not in _OPEN:
                value.txn_partitions = []  # the last transaction's partitions are not shown
            out.append(R.TransactionState(
                error_code=0, transactional_id=txn_id, transaction_state=meta.state.value,
                transaction_timeout_ms=meta.timeout_ms,
                transaction_start_time_ms=meta.start_ms, producer_id=meta.producer_id,
                producer_epoch=meta.producer_epoch,
                topics=[R.TopicData(topic=tp.topic, partitions=tp.partitions)
                        for tp in value.txn_partitions]))
        return R(throttle_time_ms=0, transaction_states=out)

    def list(self, version: int, request: ListTransactionsRequest,
             now_ms: int) -> ListTransactionsResponse:
        R = ListTransactionsResponse
        known = {s.value for s in TxnState}
        states = set(request.state_filters)
        pids = set(request.producer_id_filters)
        duration = request.duration_filter if version >= 1 else -1
        pattern = request.transactional_id_pattern if version >= 2 else None
        try:
            matches = re.compile(pattern).fullmatch if pattern else None
        except re.error:
            return R(throttle_time_ms=0, error_code=E.INVALID_REGULAR_EXPRESSION,
                     unknown_state_filters=[], transaction_states=[])
        out = [
            R.TransactionState(transactional_id=txn_id, producer_id=meta.producer_id,
                               transaction_state=meta.state.value)
            for txn_id, meta in sorted(self.txns.items())
            if (not states or meta.state.value in states)
            and (not pids or meta.producer_id in pids)
            and (matches is None or matches(txn_id) is not None)
            and (duration < 0 or (meta.state is S.ONGOING
                                  and now_ms - meta.start_ms > duration))]
        return R(throttle_time_ms=0, error_code=0,
                 unknown_state_filters=sorted(states - known), transaction_states=out)

    def producer_epochs(self) -> dict[str, tuple[int, int, str]]:
        """(producer id, epoch, state) by transactional id: for tests and tools."""
        return {t: (m.producer_id, m.producer_epoch, m.state.value) for t, m in self.txns.items()}


def _init(error: int, pid: int = -1, epoch: int = -1) -> InitProducerIdResponse:
    return InitProducerIdResponse(throttle_time_ms=0, error_code=error, producer_id=pid,
                                  producer_epoch=epoch)


def _end_response(error: int, pid: int = -1, epoch: int = -1) -> EndTxnResponse:
    return EndTxnResponse(throttle_time_ms=0, error_code=error, producer_id=pid,
                          producer_epoch=epoch)
