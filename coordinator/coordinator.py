"""The group coordinator the server shell drives: classic groups, KIP-848 consumer
groups, KIP-1071 streams groups and KIP-1249 paused partitions, over one group-id
namespace and one offset store.

`handle` answers one decoded request at `now_ms`; `tick` fires the time-outs
that are due; both return an Outcome. `apply` folds a record into the state
(the shell calls it at start-up replay); live records fold in through the same
`apply` once the handler (or timer) that wrote them has returned, before they
appear in an Outcome. Before anything else happens at a given time, every
deadline due by then fires, as Kafka's timer would have fired it.

Each request and each timer firing is all or nothing: one that raises is
undone and answered UNKNOWN_SERVER_ERROR (a timer's group fails); a record
whose fold raises fails its group, which then answers COORDINATOR_NOT_AVAILABLE.
Both are reported in the Outcome for the shell to log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from kcsim.coordinator.records import (
    GroupConfigKey,
    GroupEventKey,
    OffsetCommitValue,
    PausedTopicPartitionsKey,
    ShareSnapshotKey,
    ShareUpdateKey,
)
from kcsim.protocol.codecs import api
from kcsim.protocol.error_answers import error_answer
from kcsim.protocol.errors import ErrorCode as E
from kcsim.protocol.named_groups import groups_of

from .admin import AdminHandlers
from .consumer.assignors import assignor_names
from .consumer.describe import DescribeHandler
from .consumer.fold import ConsumerFold
from .consumer.groups import ConsumerGroups
from .consumer.heartbeat import HeartbeatHandler
from .failures import answered_per_group, merge_groups, split_groups
from .groups.fold import ClassicFold
from .groups.membership import MembershipHandlers
from .groups.rebalance import Rebalancer
from .groups.responses import join_error, sync_response
from .offsets import OffsetHandlers
from .pause.handlers import PauseHandlers
from .share.membership import ShareMembership
from .share.offsets import ShareOffsetHandlers
from .share.partitions import SharePartitions
from .shared.ids import random_uuid
from .shared.interface import (
    Failure,
    GroupConfig,
    Outcome,
    RequestContext,
    TopicLookup,
    by_api_key,
)
from .shared.paused import paused_by_name
from .shared.runtime import GroupRuntime
from .shared.timers import (
    HEARTBEAT,
    JOIN,
    REBALANCE,
    RETENTION,
    RETENTION_KEY,
    SESSION,
    SHARE_SESSION,
    STREAMS_INITIAL_DELAY,
    STREAMS_REBALANCE,
    STREAMS_SESSION,
    SYNC,
    TimerKey,
)
from .streams.describe import DescribeHandler as StreamsDescribeHandler
from .streams.fold import StreamsFold
from .streams.groups import StreamsGroups
from .streams.heartbeat import HeartbeatHandler as StreamsHeartbeatHandler
from .txn_offsets import TxnOffsetHandlers

if TYPE_CHECKING:
    import uuid

    from msgspec import Struct

    from kcsim.storage.records import Record

    from .consumer.model import ConsumerGroup
    from .groups.classic import ClassicGroup
    from .share.model import ShareGroup
    from .shared.events import EventHistory
    from .streams.model import StreamsGroup

# (version, request, who asked) -> the response, or None while the request is parked.
Handler = Callable[[int, "Struct", RequestContext], "Struct | None"]

# The versions kcsim serves: the union of Kafka 3.9 and 4.4's, where kcsim implements them.
SUPPORTED_VERSIONS: dict[int, tuple[int, int]] = {
    8: (0, 10),  # OffsetCommit
    9: (0, 10),  # OffsetFetch
    11: (0, 9),  # JoinGroup
    12: (0, 4),  # Heartbeat
    13: (0, 5),  # LeaveGroup
    14: (0, 5),  # SyncGroup
    15: (0, 6),  # DescribeGroups
    16: (0, 5),  # ListGroups
    28: (0, 6),  # TxnOffsetCommit
    42: (0, 3),  # DeleteGroups
    47: (0, 0),  # OffsetDelete
    68: (0, 1),  # ConsumerGroupHeartbeat
    69: (0, 1),  # ConsumerGroupDescribe
    88: (0, 1),  # StreamsGroupHeartbeat
    76: (1, 1),  # ShareGroupHeartbeat
    77: (1, 1),  # ShareGroupDescribe
    90: (0, 1),  # DescribeShareGroupOffsets
    91: (0, 0),  # AlterShareGroupOffsets
    92: (0, 0),  # DeleteShareGroupOffsets
    89: (0, 1),  # StreamsGroupDescribe
    1000: (0, 0),  # PausePartitions (KIP-1249, kcsim extension key)
    1001: (0, 0),  # ResumePartitions
    1002: (0, 0),  # ListPausedPartitions
}


class GroupCoordinator:
    def __init__(
        self,
        config: GroupConfig,
        topics: TopicLookup,
        *,
        new_uuid: Callable[[], uuid.UUID] = random_uuid,
    ) -> None:
        assignor_names(config.consumer_group_assignors)
        rt = self._rt = GroupRuntime(config, topics, new_uuid)
        ClassicFold(rt).register()
        ConsumerFold(rt).register()
        StreamsFold(rt).register()
        rt.folds[PausedTopicPartitionsKey] = rt.paused.apply
        rt.folds[GroupConfigKey] = rt.group_configs.apply
        rt.folds[GroupEventKey] = rt.events.apply
        self.shares = SharePartitions()  # the share partitions' in-flight records
        rt.folds[ShareSnapshotKey] = rt.folds[ShareUpdateKey] = self.shares.apply
        self._share = ShareMembership(rt, self.shares)
        self._share.register()
        self._rebalance = Rebalancer(rt)
        self._consumer = ConsumerGroups(rt)
        self._streams = StreamsGroups(rt)
        self._pauses = PauseHandlers(rt, self._consumer, self._rebalance, self._streams)
        membership = MembershipHandlers(rt, self._rebalance, self._consumer)
        self._offsets = OffsetHandlers(rt, self._rebalance)
        self._txn_offsets = TxnOffsetHandlers(rt)
        self._txn_offsets.register()
        admin = AdminHandlers(rt, self._share)
        share_offsets = ShareOffsetHandlers(rt, self.shares)
        heartbeat = HeartbeatHandler(rt, self._consumer)
        describe = DescribeHandler(rt)
        self._handlers: dict[int, Handler] = {
            8: by_api_key(self._offsets.commit),
            9: by_api_key(self._offsets.fetch),
            11: by_api_key(membership.join_group),
            12: by_api_key(membership.heartbeat),
            13: by_api_key(membership.leave_group),
            14: by_api_key(membership.sync_group),
            15: by_api_key(admin.describe_groups),
            16: by_api_key(admin.list_groups),
            28: by_api_key(self._txn_offsets.commit),
            42: by_api_key(admin.delete_groups),
            47: by_api_key(self._offsets.delete),
            68: by_api_key(heartbeat.heartbeat),
            69: by_api_key(describe.describe),
            76: by_api_key(self._share.heartbeat),
            77: by_api_key(self._share.describe),
            90: by_api_key(share_offsets.describe),
            91: by_api_key(share_offsets.alter),
            92: by_api_key(share_offsets.delete),
            88: by_api_key(StreamsHeartbeatHandler(rt, self._streams).heartbeat),
            89: by_api_key(StreamsDescribeHandler(rt, self._streams).describe),
            1000: by_api_key(self._pauses.pause),
            1001: by_api_key(self._pauses.resume),
            1002: by_api_key(self._pauses.list_paused),
        }
        # What fires a due timer, by the kind of timer.
        self._timers: dict[str, Callable[[TimerKey, object], None]] = {
            HEARTBEAT: self._rebalance.on_heartbeat_expired,
            JOIN: self._rebalance.on_join_timer,
            SYNC: self._rebalance.on_sync_expired,
            SESSION: self._consumer.on_session_expired,
            REBALANCE: self._consumer.on_revocation_expired,
            STREAMS_SESSION: self._streams.on_session_expired,
            STREAMS_REBALANCE: self._streams.on_revocation_expired,
            STREAMS_INITIAL_DELAY: self._streams.on_initial_delay_over,
            SHARE_SESSION: self._share.on_session_expired,
            RETENTION: self._expire_offsets,
        }
        # What starts the timers of a group read back from the log, for each kind of group.
        self._starters = (self._rebalance.start_loaded, self._consumer.start_loaded,
                          self._streams.start_loaded, self._share.start_loaded)

    @property
    def config(self) -> GroupConfig:
        return self._rt.config

    @property
    def events(self) -> EventHistory:
        """The group event log (`coordinator/shared/events.py`), folded from its records."""
        return self._rt.events

    # -- the shell's interface ----------------------------------------------

    def apply(self, record: Record) -> None:
        """Fold one record read back at start-up; records of other coordinators are ignored.

        A record whose fold raises fails its group (reported in the next Outcome)."""
        self._rt.apply_all((record,), 0, self._fold_failed)

    def apply_all(self, records: Sequence[Record]) -> None:
        """Fold records read back at start-up, in order (runs of commits in one call each)."""
        self._rt.apply_all(records, 0, self._fold_failed)

    def handle(
        self, api_key: int, version: int, request: Struct, ctx: RequestContext, now_ms: int
    ) -> Outcome:
        # Versions are checked once, where requests are routed (the shell's table is
        # built from SUPPORTED_VERSIONS); an API the coordinator lacks is a wiring bug.
        handler = self._handlers.get(api_key)
        if handler is None:
            raise ValueError(f"API key {api_key} is not served by the group coordinator")
        rt = self._rt
        due = rt.deadlines.earliest_ms
        if (due is not None and due <= now_ms) or not rt.started or rt.loaded:
            self._advance(now_ms)
        elif now_ms > rt.now:
            rt.now = now_ms  # nothing is due: time just moves on
        if rt.failed and not rt.failed.isdisjoint(groups_of(request)):
            response = self._around_failed(handler, api_key, version, request, ctx)
        else:
            response = self._run(handler, api_key, version, request, ctx)
        if response is not None:
            rt.responses.append((ctx.token, response))
        return rt.finish()

    def tick(self, now_ms: int) -> Outcome:
        self._advance(now_ms)
        return self._rt.finish()

    @property
    def offsets_committed(self) -> int:
        """Partitions' offsets OffsetCommit committed since start-up (the metrics read it)."""
        return self._offsets.committed

    def next_deadline(self) -> int | None:
        """The earliest time the shell should tick at; 0 (at once) until a first tick or request."""
        rt = self._rt
        if not rt.started:
            return 0
        due, locks = rt.deadlines.earliest_ms, self.shares.next_deadline()
        return due if locks is None else locks if due is None else min(due, locks)

    def cancel(self, token: object) -> None:
        """The connection of a parked request is gone: its answer, when it comes, is dropped."""
        self._rt.cancel(token)

    def error_response(self, api_key: int, version: int, request: Struct, error: int) -> Struct:
        """Kafka's answer when the whole request fails with `error`; the state is not touched."""
        if api_key not in self._handlers:
            raise ValueError(f"API key {api_key} is not served by the group coordinator")
        return error_answer(api_key, version, request, error)

    def topic_deleted(self, topic_id: uuid.UUID) -> Outcome:
        """A topic is gone: groups that paused its partitions forget them (KIP-1249).

        Only records come back (no time passes, so no parked request is answered);
        consumer groups subscribed to the topic see the change at their next heartbeat."""
        self._step(lambda: self._pauses.topic_deleted(topic_id), "forgetting a deleted topic")
        return self._rt.finish()

    def complete_transaction(self, producer_id: int, commit: bool, now_ms: int) -> Outcome:
        """A transaction's marker: the producer's pending offsets (TxnOffsetCommit) become
        committed offsets on commit and vanish on abort."""
        rt = self._rt
        if now_ms > rt.now:
            rt.now = now_ms
        self._step(lambda: self._txn_offsets.complete(producer_id, commit),
                   "completing a transaction's offsets")
        return rt.finish()

    def pending_offsets(self, group: str) -> dict[int, dict[tuple[str, int], OffsetCommitValue]]:
        """Offsets committed in open transactions, by producer id (read-only use)."""
        return self._rt.pending.of_group(group)

    def failed_groups(self) -> set[str]:
        """Groups whose fold raised: they answer COORDINATOR_NOT_AVAILABLE until a restart."""
        return set(self._rt.failed)

    # -- one call's effects: all or nothing ------------------------------------

    def _run(
        self, handler: Handler, api_key: int, version: int, request: Struct, ctx: RequestContext
    ) -> Struct | None:
        """Run a handler; its records fold in once it has returned. One that raises changes
        nothing and is answered UNKNOWN_SERVER_ERROR."""
        rt = self._rt
        start = len(rt.records)
        answered = len(rt.responses)
        journal = rt.journal
        journal.open = True  # `Journal.begin`, inline: every request comes here
        journal.call += 1
        try:
            response = handler(version, request, ctx)
        except Exception as exc:
            self._undo(start, answered)
            rt.failures.append(Failure(f"{_api_name(api_key)} v{version}", exc))
            return error_answer(api_key, version, request, E.UNKNOWN_SERVER_ERROR)
        journal.open = False  # `Journal.commit`, inline, when nothing was noted
        if journal.steps:
            journal.commit()
        if (len(rt.records) > start and self._fold_from(start) and response is not None
                and not rt.failed.isdisjoint(groups_of(request))):
            # Its group failed as its records folded in (a parked request was answered so).
            return error_answer(api_key, version, request, E.COORDINATOR_NOT_AVAILABLE)
        return response

    def _around_failed(
        self, handler: Handler, api_key: int, version: int, request: Struct, ctx: RequestContext
    ) -> Struct | None:
        """A request naming a failed group: COORDINATOR_NOT_AVAILABLE for it, the others
        (of an API answering each group on its own) served as usual."""
        unavailable = E.COORDINATOR_NOT_AVAILABLE
        if not answered_per_group(api_key, version):
            return error_answer(api_key, version, request, unavailable)
        healthy, unhealthy = split_groups(api_key, version, request, self._rt.failed)
        failed = error_answer(api_key, version, unhealthy, unavailable)
        if healthy is None:
            return failed
        served = self._run(handler, api_key, version, healthy, ctx)
        assert served is not None  # the APIs answering each group on its own never park
        return merge_groups(api_key, version, request, served, failed)

    def _step(self, step: Callable[[], None], what: str, group_id: str | None = None) -> None:
        """A timer firing (or another change not asked by a request), all or nothing: one that
        raises is undone, reported, and fails the group it concerns."""
        rt = self._rt
        start = len(rt.records)
        answered = len(rt.responses)
        rt.journal.begin()
        try:
            step()
        except Exception as exc:
            self._undo(start, answered)
            self._fail(group_id, exc, what)
            return
        rt.journal.commit()
        self._fold_from(start)

    def _undo(self, start: int, answered: int) -> None:
        rt = self._rt
        rt.journal.rollback()
        dropped = [v.seq for r in rt.records[start:]
                   if type(r.key) is GroupEventKey and (v := r.value) is not None]
        if dropped:
            rt.events.issued = min(dropped)  # the events it wrote are not; their numbers are free
        del rt.records[start:]
        del rt.responses[answered:]

    def _fold_from(self, start: int) -> bool:
        """Fold the records queued since `start` (the one apply path); False unless one raised."""
        rt = self._rt
        known = len(rt.failures)
        rt.apply_all(rt.records, start, self._fold_failed)
        return len(rt.failures) != known

    def _fold_failed(self, record: Record, error: BaseException) -> None:
        self._fail(getattr(record.key, "group", None), error, "folding a record")

    def _fail(self, group_id: str | None, error: BaseException, what: str) -> None:
        """Report a contained bug; a group it concerns fails: its parked requests are answered
        COORDINATOR_NOT_AVAILABLE and so is every later request for it."""
        rt = self._rt
        rt.failures.append(Failure(what, error, group_id))
        if group_id is None or group_id in rt.failed:
            return
        rt.failed.add(group_id)
        group = rt.groups.get(group_id)
        if group is None:
            return
        unavailable = E.COORDINATOR_NOT_AVAILABLE
        try:
            for member in list(group.members.values()):
                if member.join_waiter is not None:
                    rt.respond(member.join_waiter.token,
                               join_error(member.join_waiter.version, unavailable))
                if member.sync_waiter is not None:
                    rt.respond(member.sync_waiter.token, sync_response(unavailable))
        except Exception:  # the group is broken: answering what can be answered is enough
            pass

    # -- time ---------------------------------------------------------------

    def _advance(self, now_ms: int) -> None:
        """Fire every deadline due by now_ms in order, each at its own time, then move to now_ms."""
        rt = self._rt
        if not rt.started:
            rt.started = True
            rt.now = now_ms
            rt.deadlines.schedule(
                RETENTION_KEY, now_ms + rt.config.offsets_retention_check_interval_ms
            )
            self._step(self._pauses.drop_missing_topics, "forgetting pauses of deleted topics")
        if rt.loaded:
            loaded, rt.loaded = rt.loaded, {}
            for group_id in loaded:
                if group_id not in rt.failed:
                    self._step(partial(self._start_loaded, group_id),
                               "starting a loaded group's timers", group_id)
        pop_due = rt.deadlines.pop_due
        while True:
            due = pop_due(now_ms)
            if due is None:
                break
            at, key, payload = due
            rt.now = max(rt.now, at)
            if key.group_id in rt.failed:
                continue
            self._step(partial(self._timers[key.kind], key, payload), f"{key.kind} timer",
                       key.group_id or None)
        if self.shares.unwritten:
            self._step(self._write_share_records, "writing share partitions' records")
        locks = self.shares.next_deadline()
        if locks is not None and locks <= now_ms:
            rt.now = max(rt.now, locks)
            self._step(partial(self._expire_share_locks, now_ms), "share lock time-outs")
        rt.now = max(rt.now, now_ms)

    def _start_loaded(self, group_id: str) -> None:
        for start in self._starters:
            start(group_id)

    def _write_share_records(self) -> None:
        for record in self.shares.take_unwritten():
            self._rt.write(record)

    def _expire_share_locks(self, now_ms: int) -> None:
        for record in self.shares.expire(now_ms):
            self._rt.write(record)

    def _expire_offsets(self, key: TimerKey, _: object) -> None:
        rt = self._rt
        self._offsets.expire_offsets()
        rt.deadlines.schedule(RETENTION_KEY, rt.now + rt.config.offsets_retention_check_interval_ms)

    # -- read helpers (admin, CLI, tests) ---------------------------------------

    def committed_offsets(self, group: str) -> dict[tuple[str, int], OffsetCommitValue]:
        return self._rt.offsets.flat(group)

    def group_state(self, group: str) -> str | None:
        cg = self._rt.consumer_groups.get(group)
        if cg is not None:
            return str(cg.state.value)
        sg = self._rt.streams_groups.get(group)
        if sg is not None:
            return sg.state.value
        shg = self._rt.share_groups.get(group)
        if shg is not None:
            return shg.state
        g = self._rt.groups.get(group)
        return None if g is None else g.state.value

    def groups(self) -> list[str]:
        rt = self._rt
        return (list(rt.groups) + list(rt.consumer_groups) + list(rt.streams_groups)
                + list(rt.share_groups))

    def consumer_group(self, group: str) -> ConsumerGroup | None:
        """The live KIP-848 group (read-only use): epochs, members, targets, owners."""
        return self._rt.consumer_groups.get(group)

    def streams_group(self, group: str) -> StreamsGroup | None:
        """The live KIP-1071 group (read-only use): epochs, topology, members, tasks."""
        return self._rt.streams_groups.get(group)

    def share_configs(self, group: str) -> ShareConfigs:
        """What a share group's partitions take from its configs."""
        configs = self._rt.group_configs
        return ShareConfigs(configs.share_record_lock_duration_ms(group),
                            configs.share_delivery_count_limit(group),
                            configs.share_auto_offset_reset(group) == "earliest",
                            configs.share_read_committed(group))

    def share_group(self, group: str) -> ShareGroup | None:
        """The live KIP-932 group (read-only use): epochs, members, targets."""
        return self._rt.share_groups.get(group)

    def group_configs(self, group: str) -> dict[str, str]:
        """The configs set on this group (IncrementalAlterConfigs), by name."""
        return self._rt.group_configs.overrides(group)

    def paused_partitions(self, group: str) -> dict[str, set[int]]:
        """The group's paused partitions by topic name (topics that still exist)."""
        rt = self._rt
        return {name: set(ps) for name, ps in paused_by_name(rt.paused, rt.topics, group).items()}

    def group(self, group: str) -> ClassicGroup | None:
        """The live group (read-only use): members, generation, protocol."""
        return self._rt.groups.get(group)

    def paused_groups(self) -> list[str]:
        """The groups that have partitions paused (of topics that may be gone since)."""
        return list(self._rt.paused.by_group)

    def groups_by_type(self) -> tuple[Mapping[str, ClassicGroup], Mapping[str, ConsumerGroup],
                                      Mapping[str, StreamsGroup]]:
        """The live classic, KIP-848 and streams groups by id (read-only use: the metrics
        read all of them at each scrape)."""
        rt = self._rt
        return rt.groups, rt.consumer_groups, rt.streams_groups

    def all_committed_offsets(self) -> Mapping[str, Mapping[str, Mapping[int, OffsetCommitValue]]]:
        """Every group's committed offsets by group, topic and partition (read-only use)."""
        return self._rt.offsets.by_group


class ShareConfigs(NamedTuple):
    lock_duration_ms: int
    delivery_count_limit: int
    earliest: bool  # share.auto.offset.reset=earliest
    read_committed: bool


def _api_name(api_key: int) -> str:
    return api(api_key).name
