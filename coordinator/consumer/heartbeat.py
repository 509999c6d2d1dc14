"""ConsumerGroupHeartbeat (KIP-848): join, heartbeat, leave, in Kafka's order of checks.

Every check that can fail runs before the first record is written, then a
heartbeat (reading the group as its records will make it: they fold in once
it returns): (1) creates or updates the
member, bumping the group epoch when its subscription or the subscribed topics
changed; (2) computes a new target assignment when the group epoch is ahead of
the target's and the group's assignment interval has passed since the last one
(`ConsumerGroups.targets`); (3) moves the member one step towards its target.
Leaving is epoch -1; a static member leaving for a while is epoch -2 (it keeps
its partitions until its session expires or its instance id comes back).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.consumer_group import ConsumerGroupHeartbeatResponse

from ..shared import emit
from ..shared.describing import not_found_message
from ..shared.interface import kafka_client_host
from ..shared.record_helpers import group_record, member_tombstones
from ..shared.refusal import Refused, not_blank, take_over, unknown_member
from ..shared.states import EMPTY as CLASSIC_EMPTY
from .model import (
    EMPTY,
    LEAVE_GROUP_EPOCH,
    LEAVE_GROUP_STATIC_EPOCH,
    Assignment,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
    in_topic_order,
)
from .reconcile import owned_partitions, reconcile
from .records import current_record, member_record, target_record
from .subscriptions import regex_problem

if TYPE_CHECKING:
    import uuid

    from kcsim.protocol.messages.consumer_group import ConsumerGroupHeartbeatRequest

    from ..shared.interface import RequestContext
    from ..shared.runtime import GroupRuntime
    from .groups import ConsumerGroups
    from .reconcile import Owned, Owner

E = ErrorCode
ResponseAssignment = ConsumerGroupHeartbeatResponse.Assignment
ResponseTopicPartitions = ConsumerGroupHeartbeatResponse.TopicPartitions

# ConsumerGroupHeartbeat v1 (KIP-1082): the client generates its member id.
CLIENT_MEMBER_ID_VERSION = 1


def error_response(code: int, message: str | None = None) -> ConsumerGroupHeartbeatResponse:
    return ConsumerGroupHeartbeatResponse(error_code=int(code), error_message=message, member_epoch=0,
                             heartbeat_interval_ms=0)


def response_assignment(assignment: Assignment) -> ResponseAssignment:
    return ResponseAssignment(topic_partitions=[
        ResponseTopicPartitions(topic_id=t, partitions=ps) for t, ps in in_topic_order(assignment)
    ])


class HeartbeatHandler:
    def __init__(self, runtime: GroupRuntime, groups: ConsumerGroups) -> None:
        self.rt = runtime
        self.ops = groups

    def heartbeat(
        self, version: int, request: ConsumerGroupHeartbeatRequest, ctx: RequestContext
    ) -> ConsumerGroupHeartbeatResponse:
        try:
            self._validate(version, request)
            if request.member_epoch in (LEAVE_GROUP_EPOCH, LEAVE_GROUP_STATIC_EPOCH):
                return self._leave(request)
            return self._heartbeat(version, request, ctx)
        except Refused as refused:
            return error_response(refused.code, refused.message)

    # -- validation (Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid) -------

    def _validate(self, version: int, req: ConsumerGroupHeartbeatRequest) -> None:
        epoch = req.member_epoch
        if version >= CLIENT_MEMBER_ID_VERSION or epoch > 0 or epoch == LEAVE_GROUP_EPOCH:
            not_blank(req.member_id, "MemberId can't be empty.")
        not_blank(req.group_id, "GroupId can't be empty.")
        not_blank(req.instance_id, "InstanceId can't be empty.")
        not_blank(req.rack_id, "RackId can't be empty.")
        if epoch == 0:
            if req.rebalance_timeout_ms == -1:
                raise Refused(E.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
            if req.topic_partitions is None or req.topic_partitions:
                raise Refused(E.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
            if req.subscribed_topic_names is None and req.subscribed_topic_regex is None:
                raise Refused(E.INVALID_REQUEST, "Either SubscribedTopicNames or SubscribedTopicRegex "
                              "must be non-null when (re-)joining.")
        elif epoch == LEAVE_GROUP_STATIC_EPOCH:
            if req.instance_id is None:
                raise Refused(E.INVALID_REQUEST, "InstanceId can't be null.")
        elif epoch < LEAVE_GROUP_STATIC_EPOCH:
            raise Refused(E.INVALID_REQUEST, "MemberEpoch is invalid.")
        enabled = list(self.rt.config.consumer_group_assignors)
        if req.server_assignor is not None and req.server_assignor not in enabled:
            raise Refused(E.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {req.server_assignor} is not "
                          f"supported. Supported assignors: {', '.join(enabled)}.")

    # -- leaving --------------------------------------------------------------

    def _leave(self, req: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
        group = self.rt.consumer_groups.get(req.group_id)
        if group is None:
            raise Refused(E.GROUP_ID_NOT_FOUND, not_consumer_message(self.rt, req.group_id))
        member_id, epoch = req.member_id, req.member_epoch
        if req.instance_id is None:
            if member_id not in group.members:
                raise unknown_member(member_id, group.group_id)
            self.ops.fence(group, member_id, "leave-request")
        else:
            member = group.static_member(req.instance_id)
            if member is None:
                raise Refused(E.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown.")
            if member.member_id != member_id:
                raise Refused(E.FENCED_INSTANCE_ID, f"Static member {member_id} with instance id "
                              f"{req.instance_id} was fenced by member {member.member_id}.")
            if epoch == LEAVE_GROUP_STATIC_EPOCH:
                leaving = member.copy()
                leaving.member_epoch = LEAVE_GROUP_STATIC_EPOCH
                leaving.pending_revocation = EMPTY
                self.rt.write(current_record(group.group_id, leaving))
            else:
                self.ops.fence(group, member_id, "leave-request")
        return ConsumerGroupHeartbeatResponse(member_id=member_id, member_epoch=epoch, heartbeat_interval_ms=0)

    # -- a regular heartbeat ---------------------------------------------------

    def _heartbeat(
        self, version: int, req: ConsumerGroupHeartbeatRequest, ctx: RequestContext
    ) -> ConsumerGroupHeartbeatResponse:
        rt = self.rt
        gid = req.group_id
        joining = req.member_epoch == 0
        group, convert = self._group(gid, joining)
        member_id = req.member_id or self._new_member_id()
        max_size = rt.config.consumer_group_max_size
        if len(group.members) >= max_size and (not req.member_id or member_id not in group.members):
            raise Refused(E.GROUP_MAX_SIZE_REACHED, "The consumer group has reached its maximum "
                          f"capacity of {max_size} members.")
        owned = owned_partitions(req.topic_partitions)
        if req.instance_id is None:
            member, replaced = self._dynamic_member(group, member_id, req.member_epoch, owned), None
        else:
            member, replaced = self._static_member(group, member_id, req, owned)

        updated = member.copy()
        if req.instance_id is not None:
            updated.instance_id = req.instance_id
        if req.rack_id is not None:
            updated.rack_id = req.rack_id
        if req.rebalance_timeout_ms != -1:
            updated.rebalance_timeout_ms = req.rebalance_timeout_ms
        if req.server_assignor is not None:
            updated.server_assignor = req.server_assignor
        if req.subscribed_topic_names is not None:
            updated.subscribed_topic_names = frozenset(req.subscribed_topic_names)
        if req.subscribed_topic_regex is not None:
            updated.subscribed_topic_regex = req.subscribed_topic_regex or None
        updated.client_id = ctx.client_id
        updated.client_host = kafka_client_host(ctx.client_host)
        regex_changed = updated.subscribed_topic_regex != member.subscribed_topic_regex
        if regex_changed and updated.subscribed_topic_regex is not None:
            problem = regex_problem(updated.subscribed_topic_regex)
            if problem:
                raise Refused(E.INVALID_REGULAR_EXPRESSION, problem)
        if member.state is MemberState.UNKNOWN and (owned is None or owned):
            raise Refused(E.FENCED_MEMBER_EPOCH, "The consumer group member is in a unknown "
                          "state. The member must abandon all its partitions and rejoin.")
        inherited = EMPTY if replaced is None else group.target.get(replaced.member_id, EMPTY)

        # Nothing can fail from here on: write. The records fold in once the call returns,
        # so what follows reads `view`, the group as they will make it.
        view = group
        events = rt.config.events
        if convert:
            rt.write(group_record(gid, None))
        if events and not group.members and gid not in rt.consumer_groups:
            emit.consumer(rt, gid, "group-created")
        if replaced is not None:
            for record in member_tombstones(gid, replaced.member_id):
                rt.write(record)
            emit.consumer(rt, gid, "member-left", "replaced", replaced.member_id)
            emit.consumer(rt, gid, "member-joined", "", member_id)
            rt.write(member_record(gid, updated))
            rt.write(target_record(gid, member_id, inherited))
            rt.write(current_record(gid, updated))
            view = group.with_member(replaced, None).with_member(None, updated)
            view.target[member_id] = inherited
        elif updated.subscription() != member.subscription() or member_id not in group.members:
            rt.write(member_record(gid, updated))
            view = group.with_member(group.members.get(member_id), updated)
        bump = updated.subscribed_topic_names != member.subscribed_topic_names or regex_changed
        cause = "subscription-changed"
        if events and replaced is None and member_id not in group.members:
            emit.consumer(rt, gid, "member-joined", "", member_id)
            cause = "member-joined"
        if regex_changed:
            self.ops.refresh_regexes(view, force=True)
        epoch = self.ops.next_epoch(view, bump, cause)
        target_epoch, targets = self.ops.targets(view, epoch)

        owner: Owner = view.owner
        if replaced is not None:
            # The replacement holds what the member it replaces held.
            owner = _renamed_owner(view, replaced.member_id, member_id)
        current = updated
        nxt = reconcile(current, target_epoch, targets.get(member_id, EMPTY), owner, owned)
        if nxt is not current:
            self.ops.write_current(gid, nxt)
            if events:
                self._reconciled_events(view, nxt, current, target_epoch, epoch)
        self.ops.schedule_session(gid, member_id)

        final = nxt
        response = ConsumerGroupHeartbeatResponse(
            member_id=member_id,
            member_epoch=final.member_epoch,
            heartbeat_interval_ms=rt.group_configs.heartbeat_interval_ms(gid),
        )
        full = joining or (req.rebalance_timeout_ms != -1
                           and (req.subscribed_topic_names is not None
                                or req.subscribed_topic_regex is not None)
                           and req.topic_partitions is not None)
        if full or final.assigned != member.assigned:
            response.assignment = response_assignment(final.assigned)
        return response

    def _reconciled_events(self, view: ConsumerGroup, nxt: ConsumerMember,
                           current: ConsumerMember, target_epoch: int, epoch: int) -> None:
        """The member's assignment moved (`assignment-changed`: the partitions it gained and
        lost), and the group is `stable` once every member holds its target at the epoch."""
        rt, gid = self.rt, view.group_id
        if nxt.assigned != current.assigned:
            name = rt.topics.topic_name
            emit.consumer(rt, gid, "assignment-changed", "", nxt.member_id, emit.moved(
                {name(t) or str(t): ps for t, ps in current.assigned.items()},
                {name(t) or str(t): ps for t, ps in nxt.assigned.items()}))
        if emit.became_stable(view.members.values(), current, nxt, target_epoch, epoch):
            emit.consumer(rt, gid, "stable")

    def _new_member_id(self) -> str:
        return base64.urlsafe_b64encode(self.rt.new_uuid().bytes).decode().rstrip("=")

    def _group(self, group_id: str, create: bool) -> tuple[ConsumerGroup, bool]:
        """The consumer group (a fresh, not yet written one when joining a new id), and
        whether an Empty classic group under the id must give way to it."""
        rt = self.rt
        group = rt.consumer_groups.get(group_id)
        if group is not None:
            return group, False
        classic = rt.groups.get(group_id)
        if classic is None:
            if not create:
                raise Refused(E.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
            return ConsumerGroup(group_id), False
        if create and classic.state is CLASSIC_EMPTY:
            return ConsumerGroup(group_id), classic.persisted is not None
        raise Refused(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")

    def _dynamic_member(
        self, group: ConsumerGroup, member_id: str, epoch: int, owned: Owned | None
    ) -> ConsumerMember:
        member = group.members.get(member_id)
        if member is None:
            if epoch != 0:
                raise unknown_member(member_id, group.group_id)
            return ConsumerMember(member_id)
        check_epoch(member, epoch, owned)
        return member

    def _static_member(
        self, group: ConsumerGroup, member_id: str, req: ConsumerGroupHeartbeatRequest,
        owned: Owned | None,
    ) -> tuple[ConsumerMember, ConsumerMember | None]:
        instance_id = req.instance_id
        assert instance_id is not None  # the caller's test: a static member
        existing = group.static_member(instance_id)
        if req.member_epoch == 0:
            if existing is None:
                member = group.members.get(member_id)
                return (member if member is not None else ConsumerMember(member_id)), None
            return take_over(existing, member_id, instance_id), existing
        if existing is None:
            raise Refused(E.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing.member_id != member_id:
            raise Refused(E.FENCED_INSTANCE_ID, f"Static member {member_id} with instance id "
                          f"{instance_id} was fenced by member {existing.member_id}.")
        check_epoch(existing, req.member_epoch, owned)
        return existing, None


def _renamed_owner(group: ConsumerGroup, old_id: str, new_id: str) -> Owner:
    def owner(topic_id: uuid.UUID, partition: int) -> str | None:
        holder = group.owner(topic_id, partition)
        return new_id if holder == old_id else holder

    return owner


def check_epoch(member: ConsumerMember, epoch: int, owned: Owned | None) -> None:
    """FENCED_MEMBER_EPOCH unless the epoch is the member's, or its previous one with a
    subset of its partitions (the answer that bumped the epoch was lost)."""
    if epoch > member.member_epoch:
        raise Refused(E.FENCED_MEMBER_EPOCH, "The consumer group member has a greater member "
                      f"epoch ({epoch}) than the one known by the group coordinator "
                      f"({member.member_epoch}). The member must abandon all its partitions "
                      "and rejoin.")
    lost_answer = epoch == member.previous_member_epoch and _subset(owned, member.assigned)
    if epoch < member.member_epoch and not lost_answer:
        raise Refused(E.FENCED_MEMBER_EPOCH, "The consumer group member has a smaller member "
                      f"epoch ({epoch}) than the one known by the group coordinator "
                      f"({member.member_epoch}). The member must abandon all its partitions "
                      "and rejoin.")


def _subset(owned: Owned | None, assigned: Assignment) -> bool:
    if owned is None:
        return False
    for topic_id, partitions in owned.items():
        held = assigned.get(topic_id)
        if held is None or not held.issuperset(partitions):
            return False
    return True


def not_consumer_message(rt: GroupRuntime, group_id: str) -> str:
    return not_found_message(group_id, "consumer", rt.group_exists(group_id))
