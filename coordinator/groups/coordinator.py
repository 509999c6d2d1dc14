"""The group coordinator the server shell drives: classic groups, KIP-848 consumer
groups and KIP-1249 paused partitions, over one group-id namespace and one offset store.

`handle` answers one decoded request at `now_ms`; `tick` fires the time-outs
that are due; both return an Outcome. `apply` folds a record into the state
(the shell calls it at start-up replay; live records are applied before they
appear in an Outcome). Before anything else happens at a given time, every
deadline due by then fires, as Kafka's timer would have fired it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kcsim.coordinator.records import OffsetCommitValue, PausedTopicPartitionsKey

from ..consumer.assignors import ASSIGNORS
from ..consumer.describe import DescribeHandler
from ..consumer.fold import ConsumerFold
from ..consumer.groups import REBALANCE, SESSION, ConsumerGroups
from ..consumer.heartbeat import HeartbeatHandler
from ..pause.handlers import PauseHandlers
from .admin import AUTHORIZED_GROUP_OPERATIONS, AdminHandlers
from .failures import error_response
from .interface import GroupConfig, Outcome, RequestContext, TopicLookup
from .membership import MembershipHandlers
from .offsets import OffsetHandlers
from .rebalance import Rebalancer
from .runtime import HEARTBEAT, JOIN, RETENTION, RETENTION_KEY, SYNC, GroupRuntime

if TYPE_CHECKING:
    from kcsim.storage.records import Record

    from ..consumer.model import ConsumerGroup
    from .classic import ClassicGroup

Handler = Callable[[int, Any, RequestContext], Any]

# The versions kcsim serves: the union of Kafka 3.9 and 4.3.
SUPPORTED_VERSIONS: dict[int, tuple[int, int]] = {
    8: (0, 10),  # OffsetCommit
    9: (0, 10),  # OffsetFetch
    11: (0, 9),  # JoinGroup
    12: (0, 4),  # Heartbeat
    13: (0, 5),  # LeaveGroup
    14: (0, 5),  # SyncGroup
    15: (0, 6),  # DescribeGroups
    16: (0, 5),  # ListGroups
    42: (0, 2),  # DeleteGroups
    47: (0, 0),  # OffsetDelete
    68: (0, 1),  # ConsumerGroupHeartbeat
    69: (0, 1),  # ConsumerGroupDescribe
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
        new_uuid: Callable[[], uuid.UUID] = uuid.uuid4,
    ) -> None:
        unknown = [a for a in config.consumer_group_assignors if a not in ASSIGNORS]
        if unknown or not config.consumer_group_assignors:
            raise ValueError(f"consumer group assignors must be some of {sorted(ASSIGNORS)}, "
                             f"not {list(config.consumer_group_assignors)}")
        rt = self._rt = GroupRuntime(config, topics, new_uuid)
        ConsumerFold(rt).register()
        rt.folds[PausedTopicPartitionsKey] = rt.paused.apply
        self._rebalance = Rebalancer(rt)
        self._consumer = ConsumerGroups(rt)
        self._pauses = PauseHandlers(rt, self._consumer, self._rebalance)
        membership = MembershipHandlers(rt, self._rebalance)
        self._offsets = OffsetHandlers(rt, self._rebalance, self._consumer)
        admin = AdminHandlers(rt, self._offsets, self._consumer, self._pauses)
        heartbeat = HeartbeatHandler(rt, self._consumer)
        describe = DescribeHandler(rt, AUTHORIZED_GROUP_OPERATIONS)
        self._handlers: dict[int, Handler] = {
            8: self._offsets.commit,
            9: self._offsets.fetch,
            11: membership.join_group,
            12: membership.heartbeat,
            13: membership.leave_group,
            14: membership.sync_group,
            15: admin.describe_groups,
            16: admin.list_groups,
            42: admin.delete_groups,
            47: self._offsets.delete,
            68: heartbeat.heartbeat,
            69: describe.describe,
            1000: self._pauses.pause,
            1001: self._pauses.resume,
            1002: self._pauses.list_paused,
        }

    @property
    def config(self) -> GroupConfig:
        return self._rt.config

    # -- the shell's interface ----------------------------------------------

    def apply(self, record: Record) -> None:
        """Fold one record into the state; records of other coordinators are ignored."""
        self._rt.apply(record)

    def handle(
        self, api_key: int, version: int, request: Any, ctx: RequestContext, now_ms: int
    ) -> Outcome:
        handler = self._handlers.get(api_key)
        if handler is None:
            raise ValueError(f"API key {api_key} is not served by the group coordinator")
        lo, hi = SUPPORTED_VERSIONS[api_key]
        if not lo <= version <= hi:
            raise ValueError(f"API key {api_key} version {version} is outside {lo}-{hi}")
        rt = self._rt
        due = rt.deadlines.earliest()
        if (due is not None and due <= now_ms) or not rt.started or rt.loaded or rt.loaded_consumer:
            self._advance(now_ms)
        elif now_ms > rt.now:
            rt.now = now_ms  # nothing is due: time just moves on
        response = handler(version, request, ctx)
        if response is not None:
            self._rt.responses.append((ctx.token, response))
        return self._rt.finish()

    def tick(self, now_ms: int) -> Outcome:
        self._advance(now_ms)
        return self._rt.finish()

    def next_deadline(self) -> int | None:
        """The earliest time the shell should tick at; 0 (at once) until a first tick or request."""
        if not self._rt.started:
            return 0
        return self._rt.deadlines.earliest()

    def cancel(self, token: object) -> None:
        """The connection of a parked request is gone: its answer, when it comes, is dropped."""
        self._rt.cancel(token)

    def error_response(self, api_key: int, version: int, request: Any, error: int) -> Any:
        """Kafka's answer when the whole request fails with `error`; the state is not touched."""
        return error_response(api_key, version, request, error)

    def topic_deleted(self, topic_id: uuid.UUID) -> Outcome:
        """A topic is gone: groups that paused its partitions forget them (KIP-1249).

        Only records come back (no time passes, so no parked request is answered);
        consumer groups subscribed to the topic see the change at their next heartbeat."""
        self._pauses.topic_deleted(topic_id)
        return self._rt.finish()

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
            self._pauses.drop_missing_topics()
        if rt.loaded:
            self._rebalance.start_loaded_sessions()
        if rt.loaded_consumer:
            self._consumer.start_loaded()
        pop_due = rt.deadlines.pop_due
        while True:
            due = pop_due(now_ms)
            if due is None:
                break
            at, key, payload = due
            rt.now = max(rt.now, at)
            self._fire(key, payload)
        rt.now = max(rt.now, now_ms)

    def _fire(self, key: Any, payload: Any) -> None:
        kind = key[0]
        if kind == HEARTBEAT:
            self._rebalance.on_heartbeat_expired(key[1], key[2])
        elif kind == JOIN:
            self._rebalance.on_join_timer(key[1], payload)
        elif kind == SYNC:
            self._rebalance.on_sync_expired(key[1], payload)
        elif kind in (SESSION, REBALANCE):
            self._consumer.fire(key, payload)
        elif kind == RETENTION:
            self._offsets.expire_offsets()
            rt = self._rt
            rt.deadlines.schedule(
                RETENTION_KEY, rt.now + rt.config.offsets_retention_check_interval_ms
            )

    # -- read helpers (admin, CLI, tests) ---------------------------------------

    def committed_offsets(self, group: str) -> dict[tuple[str, int], OffsetCommitValue]:
        return self._rt.offsets.flat(group)

    def group_state(self, group: str) -> str | None:
        cg = self._rt.consumer_groups.get(group)
        if cg is not None:
            return str(cg.state.value)
        g = self._rt.groups.get(group)
        return None if g is None else g.state.value

    def groups(self) -> list[str]:
        return list(self._rt.groups) + list(self._rt.consumer_groups)

    def consumer_group(self, group: str) -> ConsumerGroup | None:
        """The live KIP-848 group (read-only use): epochs, members, targets, owners."""
        return self._rt.consumer_groups.get(group)

    def paused_partitions(self, group: str) -> dict[str, set[int]]:
        """The group's paused partitions by topic name (topics that still exist)."""
        out: dict[str, set[int]] = {}
        for topic_id, (_, partitions) in self._rt.paused.get(group).items():
            name = self._rt.topics.topic_name(topic_id)
            if name is not None:
                out[name] = set(partitions)
        return out

    def group(self, group: str) -> ClassicGroup | None:
        """The live group (read-only use): members, generation, protocol."""
        return self._rt.groups.get(group)
