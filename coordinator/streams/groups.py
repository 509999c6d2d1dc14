"""Changes to a streams group shared by heartbeats, timers and admin calls: the group
epoch and the target for it, fencing a member, and a member's two timers (its session,
which every heartbeat pushes back, and its rebalance time-out to revoke tasks by).

Each change reads `view`, the group as the records this call has written will make it:
they fold in only once the call returns. A view is a shallow copy with the members and
targets a call changed; it is for reading, never for the fold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..shared import emit
from ..shared.timers import (
    TimerKey,
    streams_initial_delay_key,
    streams_rebalance_key,
    streams_session_key,
)
from .assignor import MemberSpec, assign
from .internal_topics import (
    Configured,
    TopicsState,
    configure,
    metadata_hash,
    required_topics,
    topics_state,
)
from .model import EMPTY_TASKS, MemberState, StreamsGroup, StreamsMember, TaskTuple
from .pausing import paused_tasks
from .records import (
    current_record,
    epoch_record,
    member_tombstones,
    target_epoch_record,
    target_record,
)
from .task_offsets import TaskOffsets
from .topology import InvalidTopology

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kcsim.coordinator.records import StreamsGroupTopologyValue

    from ..shared.paused import PausedSet
    from ..shared.runtime import GroupRuntime

    # A topology as configured (None: the group has none) and the hash of its topics.
    Known = tuple[Configured | None, int]
    # What a target is computed with, as recorded with the group epoch.
    AssignmentConfigs = tuple[tuple[str, str], ...]


class _Cached(NamedTuple):
    """A group's topology as last configured, against the state of its topics then."""

    topology: StreamsGroupTopologyValue
    names: tuple[str, ...]
    state: TopicsState
    hash: int
    configured: Configured


def view_of(group: StreamsGroup, old: StreamsMember | None,
            new: StreamsMember | None) -> StreamsGroup:
    """A copy of the group with one member added, changed or removed (for reading)."""
    view = StreamsGroup(group.group_id)
    for name in StreamsGroup.__slots__:
        setattr(view, name, getattr(group, name))
    view.members = dict(group.members)
    view.static_members = dict(group.static_members)
    view.target = dict(group.target)
    if old is not None:
        view.index_member(old, None)
        del view.members[old.member_id]
        if new is None or new.member_id != old.member_id:
            view.target.pop(old.member_id, None)
    if new is not None:
        view.index_member(None, new)
        view.members[new.member_id] = new
    return view


class StreamsGroups:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.rt = runtime
        # Soft: each group's topology as last configured, against the topics' hash then.
        self._configured: dict[str, _Cached] = {}
        self.task_offsets = TaskOffsets(runtime.journal)

    # -- epochs and targets ----------------------------------------------------

    def configured(self, group_id: str, topology: StreamsGroupTopologyValue | None,
                   strict: bool = False) -> Known:
        """The topology against the topics there are, and the hash of those topics (kept
        while neither changes: a steady heartbeat only looks its topics up). An invalid
        topology raises InvalidTopology if `strict` (a joining member's, refused), else it
        is simply not ready (a timer's view)."""
        if topology is None:
            return None, 0
        rt = self.rt
        cached = self._configured.get(group_id)
        names = cached.names if cached is not None and cached.topology is topology else (
            required_topics(topology))
        state = topics_state(names, rt.topics)
        if cached is not None and cached.topology is topology and cached.state == state:
            return cached.configured, cached.hash
        try:
            configured = configure(topology, rt.topics)
        except InvalidTopology:
            if strict:
                raise
            configured = Configured(None)
        new_hash = metadata_hash(names, state)
        self._configured[group_id] = _Cached(topology, names, state, new_hash, configured)
        return configured, new_hash

    def next_epoch(self, view: StreamsGroup, bump: bool, known: Known | None = None,
                   configs: AssignmentConfigs | None = None,
                   cause: str = "") -> tuple[int, Configured | None]:
        """The group epoch after this call (one more, written, if asked or if the topics the
        topology names or its readiness changed), and the configured topology. A heartbeat
        passes the group's assignment configs now: recorded with the epoch it bumps, and a
        bump of their own where they changed (Kafka 4.4's lastAssignmentConfigs); other
        bumps keep the recorded ones."""
        configured, new_hash = (known if known is not None
                                else self.configured(view.group_id, view.topology))
        topology = view.topology
        validated = (topology.epoch if topology is not None and configured is not None
                     and configured.ready else -1)
        if configs is None:
            configs = view.last_assignment_configs
        if (bump or new_hash != view.metadata_hash or validated != view.validated_topology_epoch
                or configs != view.last_assignment_configs):
            epoch = view.group_epoch + 1
            self.rt.write(epoch_record(view.group_id, epoch, new_hash, validated, configs))
            if self.rt.config.events:
                if not bump:
                    cause = ("metadata-changed" if new_hash != view.metadata_hash
                             else "topology-changed" if validated != view.validated_topology_epoch
                             else "config-changed")
                emit.streams(self.rt, view.group_id, "epoch-bumped", cause,
                             detail={"epoch": epoch})
            return epoch, configured
        return view.group_epoch, configured

    def targets(self, view: StreamsGroup, epoch: int, configured: Configured | None,
                paused: PausedSet | None = None) -> tuple[int, Mapping[str, TaskTuple]]:
        """The target epoch and every member's target after this call: computed (and the
        changed ones written) when `epoch` is newer than the target's. A topology that is
        not ready has no tasks to give; paused tasks go to no one (`paused`: the group's
        paused set as this call wrote it, else as folded)."""
        if epoch <= view.assignment_epoch or not view.members:
            return view.assignment_epoch, view.target
        rt = self.rt
        counts: Mapping[str, int] = {}
        if configured is not None and configured.task_counts is not None:
            counts = configured.task_counts
        specs = [MemberSpec(m.member_id, m.process_id, view.target.get(m.member_id, EMPTY_TASKS))
                 for m in view.members.values()]
        stateful = {s.subtopology_id for s in view.topology.subtopologies
                    if s.state_changelog_topics} if view.topology is not None else set()
        stopped = paused_tasks(view.topology, counts, self._paused_by_name(
            rt.paused.get(view.group_id) if paused is None else paused))
        standby = rt.group_configs.streams_num_standby_replicas(view.group_id)
        new = assign(specs, counts, standby, stateful, stopped)
        targets = dict(view.target)
        for member_id in view.members:
            wanted = new.get(member_id, EMPTY_TASKS)
            if view.target.get(member_id) != wanted:
                rt.write(target_record(view.group_id, member_id, wanted))
                targets[member_id] = wanted
        rt.write(target_epoch_record(view.group_id, epoch, rt.now))
        return epoch, targets

    def reassign_now(self, group: StreamsGroup, paused: PausedSet, cause: str) -> None:
        """A new group epoch and, at once, its target: the group's paused partitions changed
        (`paused`, written in this call). During the initial rebalance delay only the epoch
        moves; the target follows when the delay ends."""
        epoch, configured = self.next_epoch(group, bump=True, cause=cause)
        if streams_initial_delay_key(group.group_id) not in self.rt.deadlines:
            self.targets(group, epoch, configured, paused)

    def _paused_by_name(self, paused: PausedSet) -> dict[str, frozenset[int]]:
        topics = self.rt.topics
        named = ((topics.topic_name(topic_id), partitions)
                 for topic_id, (_, partitions) in paused.items())
        return {name: partitions for name, partitions in named if name is not None}

    def assignment_delayed(self, view: StreamsGroup, first_member: bool) -> bool:
        """Whether the initial rebalance delay holds the group's first target back (Kafka
        4.2+): the first member of an empty group starts it (when it is not 0); until it
        ends, members are given nothing, at target epoch 1."""
        rt = self.rt
        key = streams_initial_delay_key(view.group_id)
        delay = rt.group_configs.streams_initial_rebalance_delay_ms(view.group_id)
        if first_member and delay > 0 and key not in rt.deadlines:
            rt.deadlines.schedule(key, rt.now + delay)
        return key in rt.deadlines

    def assignment_due(self, group: StreamsGroup) -> bool:
        """Whether a new target may be computed now (KIP-1263): none was yet, there is no
        interval, or it has passed since the last one (a last one stamped after now means
        the clock went back over a restart: it does not hold the group back)."""
        last, now = group.assignment_timestamp, self.rt.now
        interval = self.rt.group_configs.streams_assignment_interval_ms(group.group_id)
        return last == 0 or now < last or now >= last + interval

    def on_initial_delay_over(self, key: TimerKey, _: object) -> None:
        """The delay ended: the target for every member that joined meanwhile, at a new
        epoch (members answered during the delay are at epoch 1 with nothing, so a target
        at an epoch they hold would never reach them)."""
        group = self.rt.streams_groups.get(key.group_id)
        if group is not None and group.members and group.group_epoch > group.assignment_epoch:
            epoch, configured = self.next_epoch(group, bump=True, cause="assignment-interval")
            self.targets(group, epoch, configured)

    # -- members ----------------------------------------------------------------

    def write_current(self, group_id: str, member: StreamsMember) -> None:
        """Persist a member's new current assignment; arm or disarm its rebalance time-out."""
        rt = self.rt
        rt.write(current_record(group_id, member))
        if member.state is MemberState.UNREVOKED_TASKS:
            self.schedule_revocation(group_id, member)
        else:
            rt.deadlines.cancel(streams_rebalance_key(group_id, member.member_id))

    def fence(self, group: StreamsGroup, member_id: str, cause: str) -> None:
        """Remove a member (left, or timed out: `cause`) and bump the epoch so the others
        rebalance."""
        rt = self.rt
        for record in member_tombstones(group.group_id, member_id):
            rt.write(record)
        emit.streams(rt, group.group_id, "member-left", cause, member_id)
        self.task_offsets.forget(group.group_id, member_id)
        view = view_of(group, group.members[member_id], None)
        epoch, _ = self.next_epoch(view, bump=True, cause="member-left")
        if not view.members:
            rt.write(target_epoch_record(group.group_id, epoch))
            emit.streams(rt, group.group_id, "empty")
            self._set_shutdown(group, None)  # an empty group forgets the request

    def _set_shutdown(self, group: StreamsGroup, member_id: str | None) -> None:
        """Soft state, as in Kafka: the first member that asked the application to shut
        down, until the group empties (journaled: a call that raises leaves it)."""
        requested = group.shutdown_requested_by
        if requested == member_id or (requested is not None and member_id is not None):
            return

        def undo() -> None:
            group.shutdown_requested_by = requested

        self.rt.journal.on_undo(undo)
        group.shutdown_requested_by = member_id

    def request_shutdown(self, group: StreamsGroup, member_id: str) -> None:
        """A member asked the whole application to shut down; the first request stands."""
        self._set_shutdown(group, member_id)

    def schedule_session(self, group_id: str, member_id: str) -> None:
        rt = self.rt
        rt.deadlines.schedule(streams_session_key(group_id, member_id),
                              rt.now + rt.group_configs.streams_session_timeout_ms(group_id))

    def schedule_revocation(self, group_id: str, member: StreamsMember) -> None:
        rt = self.rt
        rt.deadlines.schedule(streams_rebalance_key(group_id, member.member_id),
                              rt.now + max(member.rebalance_timeout_ms, 0), member.member_epoch)

    # -- timers -------------------------------------------------------------------

    def on_session_expired(self, key: TimerKey, _: object) -> None:
        group = self.rt.streams_groups.get(key.group_id)
        if group is not None and key.member_id in group.members:
            self.fence(group, key.member_id, "session-timeout")

    def on_revocation_expired(self, key: TimerKey, epoch: object) -> None:
        """Fence a member still stuck at the epoch its rebalance time-out was armed for."""
        group = self.rt.streams_groups.get(key.group_id)
        member = None if group is None else group.members.get(key.member_id)
        if group is not None and member is not None and member.member_epoch == epoch:
            self.fence(group, key.member_id, "rebalance-timeout")

    def start_loaded(self, group_id: str) -> None:
        """A group read back from the log: sessions (and pending revocations) start now."""
        group = self.rt.streams_groups.get(group_id)
        if group is None:
            return
        for member in group.members.values():
            self.schedule_session(group_id, member.member_id)
            if member.state is MemberState.UNREVOKED_TASKS:
                self.schedule_revocation(group_id, member)
