"""StreamsGroupHeartbeat (KIP-1071): join, heartbeat, leave, in Kafka's order of checks.

Every check that can fail runs before the first record is written (the request's
shape by `rules.CARRIES`, the topology, the group, the member and its epoch). Then a
heartbeat, reading the group as its records will make it: (1) creates or updates the
member and, for the first member, stores the topology (`rules.ON_TOPOLOGY`); (2) bumps
the group epoch when a member's metadata, the topics the topology names or its
readiness changed, or when a static member back under a new id still lacks its target
(`StreamsGroups.next_epoch`); (3) computes a new target when the group epoch is ahead of
it; (4) moves the member one step towards its target. The answer
carries the statuses Kafka sends: a stale topology, missing source or internal topics
(which the broker is asked to create), incorrectly partitioned topics, a shutdown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.streams_group import StreamsGroupHeartbeatResponse

from ..shared import emit
from ..shared.describing import not_found_message
from ..shared.interface import kafka_client_host
from ..shared.record_helpers import group_record
from ..shared.refusal import Refused, not_blank, take_over, unknown_member
from ..shared.states import EMPTY as CLASSIC_EMPTY
from .groups import StreamsGroups, view_of
from .internal_topics import Status
from .model import (
    EMPTY_TASKS,
    LEAVE_GROUP_STATIC_EPOCH,
    MemberState,
    StreamsGroup,
    StreamsMember,
    Tasks,
    in_task_order,
)
from .reconcile import is_subset, owned_tasks, reconcile
from .records import (
    current_record,
    member_record,
    member_tombstones,
    target_record,
    topology_record,
)
from .rules import (
    CARRIES,
    ON_TOPOLOGY,
    TOPOLOGY_UPDATE_REFUSED,
    Field,
    Kind,
    OnTopology,
    kind_of,
)
from .task_offsets import parse as parse_offsets
from .topology import InvalidTopology, compare, from_request, problem, regex_problem

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from kcsim.coordinator.records import StreamsGroupTopologyValue
    from kcsim.protocol.messages.streams_group import StreamsGroupHeartbeatRequest

    from ..shared.interface import NewTopic, RequestContext
    from ..shared.runtime import GroupRuntime
    from .model import TaskTuple
    from .reconcile import Owner

E = ErrorCode
Response = StreamsGroupHeartbeatResponse
ResponseTaskIds = Response.TaskIds
ResponseStatus = Response.Status


INITIAL_DELAY_DETAIL = "Assignment delayed due to the configured initial rebalance delay."
INTERVAL_DETAIL = "Assignment delayed due to the configured assignment interval."


def error_response(code: int, message: str | None = None) -> Response:
    return Response(error_code=code, error_message=message)


def response_tasks(tasks: Tasks) -> list[ResponseTaskIds]:
    return [ResponseTaskIds(subtopology_id=s, partitions=ps) for s, ps in in_task_order(tasks)]


# How each condition of `rules.CARRIES` reads a request.
_MEETS: dict[Field, Callable[[StreamsGroupHeartbeatRequest], bool]] = {
    Field.REBALANCE_TIMEOUT: lambda r: r.rebalance_timeout_ms != -1,
    # Kafka 4.4 wants them empty, and given: a null list fails too.
    Field.NO_ACTIVE_TASKS: lambda r: r.active_tasks == [],
    Field.NO_STANDBY_TASKS: lambda r: r.standby_tasks == [],
    Field.NO_WARMUP_TASKS: lambda r: r.warmup_tasks == [],
    Field.TOPOLOGY: lambda r: r.topology is not None,
    Field.INSTANCE_ID: lambda r: r.instance_id is not None,
    Field.NO_TOPOLOGY: lambda r: r.topology is None,
}


def not_streams_message(rt: GroupRuntime, group_id: str) -> str:
    return not_found_message(group_id, "streams", rt.group_exists(group_id))


class HeartbeatHandler:
    def __init__(self, runtime: GroupRuntime, groups: StreamsGroups) -> None:
        self.rt = runtime
        self.ops = groups

    def heartbeat(self, version: int, request: StreamsGroupHeartbeatRequest,
                  ctx: RequestContext) -> Response:
        try:
            kind, topology = self._validate(request)
            if kind in (Kind.LEAVE, Kind.LEAVE_STATIC):
                return self._leave(request)
            return self._heartbeat(version, request, ctx, topology)
        except Refused as refused:
            return error_response(refused.code, refused.message)
        except InvalidTopology as invalid:
            return error_response(E.STREAMS_INVALID_TOPOLOGY, str(invalid))

    # -- validation (Kafka's throwIfStreamsGroupHeartbeatRequestIsInvalid) ---------

    def _validate(self, req: StreamsGroupHeartbeatRequest
                  ) -> tuple[Kind, StreamsGroupTopologyValue | None]:
        if req.topology is not None:
            regex = regex_problem(req.topology)
            if regex:
                raise Refused(E.INVALID_REQUEST, regex)
        not_blank(req.member_id, "MemberId can't be empty.")
        not_blank(req.group_id, "GroupId can't be empty.")
        not_blank(req.instance_id, "InstanceId can't be empty.")
        not_blank(req.rack_id, "RackId can't be empty.")
        kind = kind_of(req.member_epoch)
        if kind is Kind.INVALID:
            raise Refused(E.INVALID_REQUEST, f"MemberEpoch is {req.member_epoch}, but must be "
                          "greater than or equal to -2.")
        topology = None
        for condition in CARRIES[kind]:
            if not _MEETS[condition](req):
                raise Refused(E.INVALID_REQUEST, condition.value)
            if condition is Field.TOPOLOGY and req.topology is not None:
                topology = from_request(req.topology)
                invalid = problem(topology)
                if invalid:
                    raise Refused(E.STREAMS_INVALID_TOPOLOGY, invalid)
        tasks = (req.active_tasks, req.standby_tasks, req.warmup_tasks)
        if any(t is not None for t in tasks) and any(t is None for t in tasks):
            raise Refused(E.INVALID_REQUEST, "If one task-type is non-null, all must be non-null.")
        return kind, topology

    # -- leaving ----------------------------------------------------------------

    def _leave(self, req: StreamsGroupHeartbeatRequest) -> Response:
        group = self.rt.streams_groups.get(req.group_id)
        if group is None:
            raise Refused(E.GROUP_ID_NOT_FOUND, not_streams_message(self.rt, req.group_id))
        member_id, epoch = req.member_id, req.member_epoch
        if req.instance_id is None:
            if member_id not in group.members:
                raise unknown_member(member_id, group.group_id)
            self.ops.fence(group, member_id, "leave-request")
        else:
            member = self._static_owner(group, member_id, req.instance_id)
            if epoch == LEAVE_GROUP_STATIC_EPOCH:
                leaving = member.copy()
                leaving.member_epoch = LEAVE_GROUP_STATIC_EPOCH
                leaving.pending_revocation = EMPTY_TASKS
                self.rt.write(current_record(group.group_id, leaving))
            else:
                self.ops.fence(group, member_id, "leave-request")
        return Response(member_id=member_id, member_epoch=epoch)

    @staticmethod
    def _static_owner(group: StreamsGroup, member_id: str, instance_id: str) -> StreamsMember:
        member = group.static_member(instance_id)
        if member is None:
            raise Refused(E.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if member.member_id != member_id:
            raise Refused(E.FENCED_INSTANCE_ID, f"Static member {member_id} with instance id "
                          f"{instance_id} was fenced by member {member.member_id}.")
        return member

    # -- a regular heartbeat -------------------------------------------------------

    def _heartbeat(self, version: int, req: StreamsGroupHeartbeatRequest, ctx: RequestContext,
                   sent: StreamsGroupTopologyValue | None) -> Response:
        rt = self.rt
        gid = req.group_id
        joining = req.member_epoch == 0
        group, convert = self._group(gid, joining)
        member_id = req.member_id
        max_size = rt.config.streams_group_max_size
        if joining and member_id not in group.members and len(group.members) >= max_size:
            raise Refused(E.GROUP_MAX_SIZE_REACHED, "The streams group has reached its maximum "
                          f"capacity of {max_size} members.")
        owned = owned_tasks(req.active_tasks, req.standby_tasks, req.warmup_tasks)
        if req.instance_id is None:
            member, replaced = self._dynamic_member(group, member_id, req.member_epoch, owned), None
        else:
            member, replaced = self._static_member(group, member_id, req, owned)
        updated = _updated(member, req, ctx)
        if member.state is MemberState.UNKNOWN and (owned is None or not owned.is_empty()):
            raise Refused(E.FENCED_MEMBER_EPOCH, "The streams group member is in a unknown "
                          "state. The member must abandon all its tasks and rejoin.")
        offsets = parse_offsets(req.task_offsets)
        end_offsets = parse_offsets(req.task_end_offsets)
        on_topology = OnTopology.KEEP
        if sent is not None:
            on_topology = ON_TOPOLOGY[compare(group.topology, sent)]
            if on_topology is OnTopology.REFUSE:
                raise Refused(E.INVALID_REQUEST, TOPOLOGY_UPDATE_REFUSED)
        known = self.ops.configured(gid, sent if on_topology is OnTopology.STORE
                                    else group.topology, strict=True)
        if known[0] is not None and known[0].task_counts is not None:
            _check_tasks(known[0].task_counts, req)
        inherited = EMPTY_TASKS if replaced is None else group.target.get(replaced.member_id,
                                                                           EMPTY_TASKS)

        # Nothing can fail from here on: write. The records fold in once the call returns.
        if convert:
            rt.write(group_record(gid, None))
        events = rt.config.events
        if events and not group.members and gid not in rt.streams_groups:
            emit.streams(rt, gid, "group-created")
        view = group
        cause = "subscription-changed"
        if on_topology is OnTopology.STORE and sent is not None:
            rt.write(topology_record(gid, sent))
            view = view_of(group, None, None)
            view.topology = sent
            cause = "topology-changed"
        if replaced is not None:
            for record in member_tombstones(gid, replaced.member_id):
                rt.write(record)
            emit.streams(rt, gid, "member-left", "replaced", replaced.member_id)
            emit.streams(rt, gid, "member-joined", "", member_id)
            rt.write(member_record(gid, updated))
            rt.write(target_record(gid, member_id, inherited))
            rt.write(current_record(gid, updated))
            view = view_of(view_of(view, replaced, None), None, updated)
            view.target[member_id] = inherited
            bump = False
        else:
            changed = updated.metadata() != member.metadata() or member_id not in group.members
            if changed:
                rt.write(member_record(gid, updated))
                view = view_of(view, group.members.get(member_id), updated)
            bump = changed or _short_of_target(group, member)
        if events and replaced is None and member_id not in group.members:
            emit.streams(rt, gid, "member-joined", "", member_id)
            cause = "member-joined"
        configs = rt.group_configs.streams_assignment_configs(gid)
        epoch, configured = self.ops.next_epoch(view, bump, known, configs, cause)
        delayed = None
        if epoch > view.assignment_epoch:
            if self.ops.assignment_delayed(view, first_member=not group.members):
                delayed = INITIAL_DELAY_DETAIL
            elif not self.ops.assignment_due(view):
                delayed = INTERVAL_DETAIL
        targets: Mapping[str, TaskTuple]
        if delayed is INITIAL_DELAY_DETAIL:
            target_epoch, targets = max(1, view.assignment_epoch), {}
        elif delayed is INTERVAL_DETAIL:
            target_epoch, targets = view.assignment_epoch, view.target
        else:
            target_epoch, targets = self.ops.targets(view, epoch, configured)
        owner: Owner = view.owner
        if replaced is not None:
            owner = _renamed_owner(view, replaced.member_id, member_id)
        target = targets.get(member_id, EMPTY_TASKS)
        if replaced is not None and target_epoch <= view.assignment_epoch:
            target = EMPTY_TASKS  # see _short_of_target
        nxt = reconcile(updated, target_epoch, target, owner, owned)
        if nxt is not updated:
            self.ops.write_current(gid, nxt)
            if events:
                self._reconciled_events(view, nxt, member, target_epoch, epoch)
        self.ops.schedule_session(gid, member_id)
        if req.shutdown_application:
            self.ops.request_shutdown(group, member_id)
        if replaced is not None:
            self.ops.task_offsets.forget(gid, replaced.member_id)
        self.ops.task_offsets.report(gid, member_id, offsets, end_offsets)

        response = Response(
            member_id=member_id, member_epoch=nxt.member_epoch,
            heartbeat_interval_ms=rt.group_configs.streams_heartbeat_interval_ms(gid),
            acceptable_recovery_lag=rt.group_configs.streams_acceptable_recovery_lag(gid),
            task_offset_interval_ms=rt.group_configs.streams_task_offset_interval_ms(gid),
        )
        if joining or nxt.assigned != member.assigned:
            _set_tasks(response, nxt.assigned)
        statuses = []
        topology = view.topology
        if topology is not None and nxt.topology_epoch < topology.epoch:
            statuses.append(ResponseStatus(
                status_code=Status.STALE_TOPOLOGY,
                status_detail=f"The member's topology epoch {nxt.topology_epoch} is behind the "
                              f"group's topology epoch {topology.epoch}."))
        if delayed is not None:
            statuses.append(ResponseStatus(status_code=Status.ASSIGNMENT_DELAYED,
                                           status_detail=delayed))
        if configured is not None and configured.status is not None:
            code, detail = configured.status
            statuses.append(ResponseStatus(status_code=code, status_detail=detail))
            for topic in configured.missing:
                self._ask_for(topic)
        requester = group.shutdown_requested_by
        if requester is not None:
            statuses.append(ResponseStatus(
                status_code=Status.SHUTDOWN_APPLICATION,
                status_detail=f"Streams group member {requester} encountered a fatal error and "
                              "requested a shutdown for the entire application."))
        if statuses:
            response.status = statuses
        return response

    def _reconciled_events(self, view: StreamsGroup, nxt: StreamsMember, before: StreamsMember,
                           target_epoch: int, epoch: int) -> None:
        """The member's active tasks moved (`assignment-changed`: "subtopology_partition"
        gained and lost), and the group is `stable` once every member holds its target."""
        rt, gid = self.rt, view.group_id
        if nxt.assigned.active != before.assigned.active:
            emit.streams(rt, gid, "assignment-changed", "", nxt.member_id,
                         emit.moved(before.assigned.active, nxt.assigned.active, "_"))
        if emit.became_stable(view.members.values(), before, nxt, target_epoch, epoch):
            emit.streams(rt, gid, "stable")

    def _ask_for(self, topic: NewTopic) -> None:
        """Ask the broker for a missing internal topic (undone if the call raises)."""
        rt = self.rt
        if topic.name not in rt.new_topics:
            rt.new_topics[topic.name] = topic

            def undo() -> None:
                del rt.new_topics[topic.name]

            rt.journal.on_undo(undo)

    def _group(self, group_id: str, create: bool) -> tuple[StreamsGroup, bool]:
        """The streams group (a fresh, not yet written one when joining a new id), and
        whether an Empty classic group under the id must give way to it."""
        rt = self.rt
        group = rt.streams_groups.get(group_id)
        if group is not None:
            return group, False
        classic = rt.groups.get(group_id)
        if classic is None and group_id not in rt.consumer_groups:
            if not create:
                raise Refused(E.GROUP_ID_NOT_FOUND, f"Streams group {group_id} not found.")
            return StreamsGroup(group_id), False
        if create and classic is not None and classic.state is CLASSIC_EMPTY:
            return StreamsGroup(group_id), classic.persisted is not None
        raise Refused(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")

    def _dynamic_member(self, group: StreamsGroup, member_id: str, epoch: int,
                        owned: TaskTuple | None) -> StreamsMember:
        member = group.members.get(member_id)
        if member is None:
            if epoch != 0:
                raise unknown_member(member_id, group.group_id)
            return StreamsMember(member_id)
        if epoch != 0:
            check_epoch(member, epoch, owned)
        return member

    def _static_member(self, group: StreamsGroup, member_id: str,
                       req: StreamsGroupHeartbeatRequest, owned: TaskTuple | None
                       ) -> tuple[StreamsMember, StreamsMember | None]:
        instance_id = req.instance_id
        assert instance_id is not None  # the caller's test: a static member
        existing = group.static_member(instance_id)
        if req.member_epoch == 0:
            if existing is None or existing.member_id == member_id:
                member = group.members.get(member_id)
                return (member if member is not None else StreamsMember(member_id)), None
            return take_over(existing, member_id, instance_id), existing
        existing = self._static_owner(group, member_id, instance_id)
        check_epoch(existing, req.member_epoch, owned)
        return existing, None


def _updated(member: StreamsMember, req: StreamsGroupHeartbeatRequest,
             ctx: RequestContext) -> StreamsMember:
    """The member with what the request changed (a null field: unchanged)."""
    updated = member.copy()
    if req.instance_id is not None:
        updated.instance_id = req.instance_id
    if req.rack_id is not None:
        updated.rack_id = req.rack_id
    if req.rebalance_timeout_ms != -1:
        updated.rebalance_timeout_ms = req.rebalance_timeout_ms
    if req.topology is not None:
        updated.topology_epoch = req.topology.epoch
    if req.process_id is not None:
        updated.process_id = req.process_id
    if req.user_endpoint is not None:
        updated.user_endpoint = (req.user_endpoint.host, req.user_endpoint.port)
    if req.client_tags is not None:
        updated.client_tags = tuple(sorted((kv.key, kv.value) for kv in req.client_tags))
    updated.client_id = ctx.client_id
    updated.client_host = kafka_client_host(ctx.client_host)
    return updated


def _check_tasks(task_counts: Mapping[str, int], req: StreamsGroupHeartbeatRequest) -> None:
    """Kafka's throwIfRequestContainsInvalidTasks: once the topology is ready, every task a
    member reports must be one of its tasks."""
    for ids in (req.active_tasks, req.standby_tasks, req.warmup_tasks):
        for t in ids or ():
            count = task_counts.get(t.subtopology_id)
            if count is None:
                raise Refused(E.INVALID_REQUEST,
                              f"Subtopology {t.subtopology_id} does not exist in the topology.")
            for p in t.partitions:
                if not 0 <= p < count:
                    raise Refused(E.INVALID_REQUEST, f"Task {p} for subtopology "
                                  f"{t.subtopology_id} is invalid. Number of tasks for this "
                                  f"subtopology: {count}")


def _set_tasks(response: Response, tasks: TaskTuple) -> None:
    response.active_tasks = response_tasks(tasks.active)
    response.standby_tasks = response_tasks(tasks.standby)
    response.warmup_tasks = response_tasks(tasks.warmup)


def _short_of_target(group: StreamsGroup, member: StreamsMember) -> bool:
    """Whether the member is reconciled to the group's target epoch without its target: a
    static member back under a new id. Kafka 4.4 answers that rejoin at the target epoch
    with no tasks (the group stays Stable) though the target it writes for the new id
    holds the old member's tasks, as if it read the target under the new id before the
    replacement's records were in; the member's next heartbeat bumps the group epoch, and
    the new target hands the tasks back."""
    return (member.is_reconciled_to(group.assignment_epoch)
            and member.assigned != group.target.get(member.member_id, EMPTY_TASKS))


def _renamed_owner(group: StreamsGroup, old_id: str, new_id: str) -> Owner:
    def owner(subtopology: str, partition: int) -> str | None:
        holder = group.owner(subtopology, partition)
        return new_id if holder == old_id else holder

    return owner


def check_epoch(member: StreamsMember, epoch: int, owned: TaskTuple | None) -> None:
    """FENCED_MEMBER_EPOCH unless the epoch is the member's, or its previous one with a
    subset of its tasks (the answer that bumped the epoch was lost). Kafka 4.4's message
    speaks of partitions, as for a consumer group."""
    if epoch > member.member_epoch:
        raise Refused(E.FENCED_MEMBER_EPOCH, "The streams group member has a greater member "
                      f"epoch ({epoch}) than the one known by the group coordinator "
                      f"({member.member_epoch}). The member must abandon all its partitions and "
                      "rejoin.")
    if epoch < member.member_epoch and not (
            epoch == member.previous_member_epoch and is_subset(owned, member.assigned)):
        raise Refused(E.FENCED_MEMBER_EPOCH, "The streams group member has a smaller member "
                      f"epoch ({epoch}) than the one known by the group coordinator "
                      f"({member.member_epoch}). The member must abandon all its partitions and "
                      "rejoin.")
