"""JoinGroup, SyncGroup, Heartbeat and LeaveGroup for classic groups.

Each handler validates a request the way Kafka's broker and group coordinator
do (in the same order, so the same error wins), then drives the rebalance
protocol. A handler returns its response, or None when the request is parked
(it is answered later through the runtime).
"""

from __future__ import annotations

from sys import intern
from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode

from ..shared import emit
from ..shared.interface import kafka_client_host
from ..shared.record_helpers import consumer_group_tombstones
from ..shared.timers import heartbeat_key
from .classic import ClassicGroup, Member, Protocols
from .fold import persist_group
from .records import group_metadata_value, new_group_metadata_value
from .responses import (
    current_members,
    generation_response,
    heartbeat_response,
    join_error,
    join_response,
    leave_member,
    leave_response,
    sync_response,
)
from .state import RULES, Request, Rule, rule

if TYPE_CHECKING:
    from kcsim.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
    from kcsim.protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
    from kcsim.protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse
    from kcsim.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

    from ..consumer.groups import ConsumerGroups
    from ..shared.interface import RequestContext
    from ..shared.runtime import GroupRuntime, Waiter
    from .rebalance import Rebalancer

E = ErrorCode


def validate_member(group: ClassicGroup, member_id: str, group_instance_id: str | None) -> int:
    """Kafka's ClassicGroup.validateMember: the error for an unknown or fenced member, else NONE."""
    if group_instance_id is not None:
        existing = group.static_members.get(group_instance_id)
        if existing is None:
            return E.UNKNOWN_MEMBER_ID
        if existing != member_id:
            return E.FENCED_INSTANCE_ID
    if member_id not in group.members:
        return E.UNKNOWN_MEMBER_ID
    return E.NONE


class JoinRequest:
    """A JoinGroup request normalised across versions."""

    __slots__ = (
        "client_host",
        "client_id",
        "group_id",
        "group_instance_id",
        "member_id",
        "protocol_type",
        "protocols",
        "rebalance_timeout_ms",
        "session_timeout_ms",
        "token",
        "version",
    )

    def __init__(self, version: int, request: JoinGroupRequest, ctx: RequestContext) -> None:
        self.version = version
        self.token = ctx.token
        self.group_id: str = request.group_id
        self.member_id: str = request.member_id
        self.group_instance_id: str | None = request.group_instance_id if version >= 5 else None
        self.session_timeout_ms: int = request.session_timeout_ms
        # v0 has no rebalance timeout: Kafka uses the session timeout.
        self.rebalance_timeout_ms: int = (
            request.rebalance_timeout_ms if version >= 1 else request.session_timeout_ms
        )
        self.protocol_type: str = request.protocol_type
        self.protocols: Protocols = [(intern(p.name), bytes(p.metadata)) for p in request.protocols]
        self.client_id = ctx.client_id
        self.client_host = kafka_client_host(ctx.client_host)

    def protocol_names(self) -> set[str]:
        return {name for name, _ in self.protocols}


# The rules of the requests every member sends, bound once: reading an Enum member
# is a slow look-up, and rebalances and heartbeats read several per request.
_ON_CAPACITY, _ON_JOIN_NEW, _ON_JOIN, _ON_SYNC, _ON_HEARTBEAT = (
    RULES[r] for r in (Request.CAPACITY, Request.JOIN_NEW, Request.JOIN, Request.SYNC,
                       Request.HEARTBEAT))
_NO_LIMIT, _JOINED_COUNT, _UNAVAILABLE, _UNKNOWN_MEMBER, _REBALANCING = (
    Rule.NO_LIMIT, Rule.JOINED_COUNT, Rule.UNAVAILABLE, Rule.UNKNOWN_MEMBER, Rule.REBALANCING)
_WAIT, _REPEAT_OR_REBALANCE, _REBALANCE_IF_CHANGED, _WAIT_FOR_LEADER, _ALIVE_REBALANCING = (
    Rule.WAIT, Rule.REPEAT_OR_REBALANCE, Rule.REBALANCE_IF_CHANGED, Rule.WAIT_FOR_LEADER,
    Rule.ALIVE_REBALANCING)

class MembershipHandlers:
    def __init__(self, runtime: GroupRuntime, rebalancer: Rebalancer,
                 consumer: ConsumerGroups) -> None:
        self.rt = runtime
        self.rb = rebalancer
        self.consumer = consumer

    # -- JoinGroup ----------------------------------------------------------

    def join_group(
        self, version: int, request: JoinGroupRequest, ctx: RequestContext
    ) -> JoinGroupResponse | None:
        config = self.rt.config
        if not request.group_id:
            return join_error(version, E.INVALID_GROUP_ID, request.member_id)
        session = request.session_timeout_ms
        if session < config.min_session_timeout_ms or session > config.max_session_timeout_ms:
            return join_error(version, E.INVALID_SESSION_TIMEOUT, request.member_id)
        join = JoinRequest(version, request, ctx)
        unknown_member = join.member_id == ""
        consumer_group = self.rt.consumer_groups.get(join.group_id)
        if consumer_group is not None:
            # kcsim does not mix classic members into a KIP-848 group (Kafka's online migration);
            # an Empty one gives way to a new classic group, as in Kafka.
            if consumer_group.members:
                return join_error(version, E.INCONSISTENT_GROUP_PROTOCOL, join.member_id)
            if not unknown_member:
                return join_error(version, E.UNKNOWN_MEMBER_ID, join.member_id)
            for record in consumer_group_tombstones(join.group_id, consumer_group.members):
                self.rt.write(record)
        if self.rt.streams_groups and join.group_id in self.rt.streams_groups:
            # A streams group takes no classic members (Kafka: not a classic group).
            return join_error(version, E.INCONSISTENT_GROUP_PROTOCOL, join.member_id)
        group = self.rt.groups.get(join.group_id)
        new_group = group is None
        if group is None:
            if not unknown_member:
                return join_error(version, E.UNKNOWN_MEMBER_ID, join.member_id)
            group = ClassicGroup(join.group_id, self.rt.now, journal=self.rt.journal)
            self.rt.add_group(group)
            emit.classic(self.rt, join.group_id, "group-created")
        written = len(self.rt.records)

        if not self._accept_joining_member(group, join.member_id):
            group.remove(join.member_id)
            response: JoinGroupResponse | None = join_error(version, E.GROUP_MAX_SIZE_REACHED)
        elif unknown_member:
            response = self._join_new_member(group, join)
        else:
            response = self._join_existing_member(group, join)

        if new_group and not emit.changed_since(self.rt, written):
            persist_group(self.rt, group, new_group_metadata_value(group))
        return response

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        max_size = self.rt.config.group_max_size
        counted = _ON_CAPACITY[group.state]
        if counted is _NO_LIMIT:
            return True
        if counted is _JOINED_COUNT:
            member = group.members.get(member_id)
            return (
                member is not None and member.awaiting_join
            ) or group.awaiting_join_count < max_size
        return member_id in group.members or len(group.members) < max_size

    def _join_new_member(self, group: ClassicGroup, join: JoinRequest) -> JoinGroupResponse | None:
        if _ON_JOIN_NEW[group.state] is _UNAVAILABLE:
            return join_error(join.version, E.COORDINATOR_NOT_AVAILABLE)
        if not group.supports_protocols(join.protocol_type, join.protocol_names()):
            return join_error(join.version, E.INCONSISTENT_GROUP_PROTOCOL)
        new_member_id = self.rt.new_member_id(join.group_instance_id or join.client_id)
        if join.group_instance_id is not None:
            existing = group.static_member_id(join.group_instance_id)
            if existing is not None:
                return self._replace_static_member(group, join, existing, new_member_id)
            self._add_member(group, join, new_member_id)
            return None  # parked
        if join.version >= 4:
            # Dynamic members must come back with the id we hand out (KIP-394).
            group.add_pending_member(new_member_id)
            self.rt.deadlines.schedule(
                heartbeat_key(group.group_id, new_member_id), self.rt.now + join.session_timeout_ms
            )
            return join_error(join.version, E.MEMBER_ID_REQUIRED, new_member_id)
        self._add_member(group, join, new_member_id)
        return None  # parked

    def _join_existing_member(
        self, group: ClassicGroup, join: JoinRequest
    ) -> JoinGroupResponse | None:
        member_id = join.member_id
        version = join.version
        does = _ON_JOIN[group.state]
        if does is _UNAVAILABLE:
            return join_error(version, E.COORDINATOR_NOT_AVAILABLE, member_id)
        if not group.supports_protocols(join.protocol_type, join.protocol_names()):
            return join_error(version, E.INCONSISTENT_GROUP_PROTOCOL, member_id)
        if group.is_pending_member(member_id):
            # It comes back with the id the group handed out: a new member (JOIN_NEW).
            if join.group_instance_id is not None:
                # Kafka raises an IllegalStateException here: a pending member is never static.
                return join_error(version, E.UNKNOWN_SERVER_ERROR, member_id)
            self._add_member(group, join, member_id)
            return None  # parked
        error = validate_member(group, member_id, join.group_instance_id)
        if error:
            return join_error(version, error, member_id)

        member = group.members[member_id]
        if does is _WAIT:
            self._update_member(group, member, join)
            return None  # parked
        if does is _REPEAT_OR_REBALANCE:
            if member.matches(join.protocols):
                # A retry of a join whose answer was lost: repeat the current generation.
                members = current_members(group) if group.is_leader(member_id) else None
                return generation_response(version, group, member_id, members=members)
            self._update_member(group, member, join)
            return None  # parked
        if does is _REBALANCE_IF_CHANGED:
            if group.is_leader(member_id) or not member.matches(join.protocols):
                # The leader rejoining, or a member with new metadata, forces a rebalance.
                self._update_member(group, member, join)
                return None  # parked
            return generation_response(version, group, member_id)
        return join_error(version, E.UNKNOWN_MEMBER_ID, member_id)

    def _park(self, join: JoinRequest) -> Waiter:
        return self.rt.park(join.token, join.version)

    def _update_member(self, group: ClassicGroup, member: Member, join: JoinRequest) -> None:
        cause = "request" if member.matches(join.protocols) else "subscription-changed"
        self.rt.drop(member.join_waiter)
        group.update_member(
            member,
            join.protocols,
            join.rebalance_timeout_ms,
            join.session_timeout_ms,
            self._park(join),
        )
        self.rb.maybe_prepare_rebalance_or_complete_join(group, cause)

    def _add_member(self, group: ClassicGroup, join: JoinRequest, member_id: str) -> None:
        member = Member(
            member_id,
            join.group_instance_id,
            join.client_id,
            join.client_host,
            join.rebalance_timeout_ms,
            join.session_timeout_ms,
            join.protocol_type,
            join.protocols,
        )
        member.is_new = True
        if group.in_initial_rebalance():
            group.note_new_member(True)
        group.add(member, self._park(join))
        emit.classic(self.rt, group.group_id, "member-joined", "", member_id)
        # New members cannot heartbeat yet: their parked join times out on its own clock.
        self.rb.reschedule_heartbeat(group, member, self.rt.config.new_member_join_timeout_ms)
        self.rb.maybe_prepare_rebalance_or_complete_join(group, "member-joined")

    def _replace_static_member(
        self, group: ClassicGroup, join: JoinRequest, old_member_id: str, new_member_id: str
    ) -> JoinGroupResponse | None:
        """A known group.instance.id joins with no member id: it takes over (KIP-345)."""
        assert join.group_instance_id is not None
        does = rule(Request.JOIN_STATIC, group.state)
        current_leader = group.leader_id
        old, new = group.replace_static_member(join.group_instance_id, old_member_id, new_member_id)
        emit.classic(self.rt, group.group_id, "member-left", "replaced", old_member_id)
        emit.classic(self.rt, group.group_id, "member-joined", "", new_member_id)
        self._fence(group, old)
        self.rb.cancel_heartbeat(group, old_member_id)
        self.rb.reschedule_heartbeat(group, new)
        group.update_member(
            new,
            join.protocols,
            join.rebalance_timeout_ms,
            join.session_timeout_ms,
            self._park(join),
        )

        if does is Rule.REPLACE_KEEPING_GENERATION:
            if (group.protocol_name or "") == group.select_protocol():
                # Same protocol: no rebalance. Store the new member id and hand back the
                # current generation; the member keeps its assignment through SyncGroup.
                assignments = {m.member_id: m.assignment for m in group.members.values()}
                persist_group(self.rt, group, group_metadata_value(group, assignments))
                waiter = group.take_join_waiter(new)
                assert waiter is not None
                if join.version >= 9:
                    is_leader = group.is_leader(new_member_id)
                    response = generation_response(
                        join.version,
                        group,
                        new_member_id,
                        members=current_members(group) if is_leader else None,
                        skip_assignment=is_leader,
                    )
                else:
                    response = generation_response(
                        join.version, group, new_member_id, leader=current_leader or ""
                    )
                self.rt.respond(waiter.token, response)
            else:
                self.rb.maybe_prepare_rebalance_or_complete_join(group, "member-joined")
        elif does is Rule.REPLACE_AND_REBALANCE:
            # The leader may already hold the old member id: rebalance so assignments match.
            self.rb.prepare_rebalance(group, "member-joined")
        elif does is Rule.REPLACE_AND_WAIT:
            self.rb.maybe_complete_join_phase(group)
        return None

    def _fence(self, group: ClassicGroup, old: Member) -> None:
        waiter = group.take_join_waiter(old)
        if waiter is not None:
            self.rt.respond(
                waiter.token,
                join_response(
                    waiter.version, E.FENCED_INSTANCE_ID, member_id=old.member_id, leader=""
                ),
            )
        sync_waiter = group.take_sync_waiter(old)
        if sync_waiter is not None:
            self.rt.respond(sync_waiter.token, sync_response(E.FENCED_INSTANCE_ID))

    # -- SyncGroup ----------------------------------------------------------

    def sync_group(
        self, version: int, request: SyncGroupRequest, ctx: RequestContext
    ) -> SyncGroupResponse | None:
        if not request.group_id:
            return sync_response(E.INVALID_GROUP_ID)
        protocol_type = request.protocol_type if version >= 5 else None
        protocol_name = request.protocol_name if version >= 5 else None
        if version >= 5 and (protocol_type is None or protocol_name is None):
            return sync_response(E.INCONSISTENT_GROUP_PROTOCOL)
        group = self.rt.groups.get(request.group_id)
        does = _UNKNOWN_MEMBER if group is None else _ON_SYNC[group.state]
        if does is _UNKNOWN_MEMBER:
            return sync_response(E.UNKNOWN_MEMBER_ID)
        assert group is not None
        member_id = request.member_id
        instance_id = request.group_instance_id if version >= 3 else None

        if does is _UNAVAILABLE:
            return sync_response(E.COORDINATOR_NOT_AVAILABLE)
        error = validate_member(group, member_id, instance_id)
        if error:
            return sync_response(error)
        if request.generation_id != group.generation:
            return sync_response(E.ILLEGAL_GENERATION)
        if _inconsistent(protocol_type, group.protocol_type) or _inconsistent(
            protocol_name, group.protocol_name
        ):
            return sync_response(E.INCONSISTENT_GROUP_PROTOCOL)

        if does is _REBALANCING:
            return sync_response(E.REBALANCE_IN_PROGRESS)
        member = group.members[member_id]
        if does is _WAIT_FOR_LEADER:
            self.rt.drop(member.sync_waiter)
            group.park_sync(member, self.rt.park(ctx.token, version))
            self.rb.remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                assignments = {a.member_id: bytes(a.assignment) for a in request.assignments}
                self.rb.complete_sync_from_leader(group, assignments)
            return None
        # ASSIGNMENT: hand back the member's current assignment.
        self.rb.remove_pending_sync_member(group, member_id)
        return sync_response(
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            assignment=member.assignment,
        )

    # -- Heartbeat ----------------------------------------------------------

    def heartbeat(
        self, version: int, request: HeartbeatRequest, ctx: RequestContext
    ) -> HeartbeatResponse:
        if not request.group_id:
            return heartbeat_response(E.INVALID_GROUP_ID)
        group = self.rt.groups.get(request.group_id)
        if group is None:
            return heartbeat_response(E.UNKNOWN_MEMBER_ID)
        does = _ON_HEARTBEAT[group.state]
        if does is _UNAVAILABLE:
            return heartbeat_response(E.COORDINATOR_NOT_AVAILABLE)
        member_id = request.member_id
        error = validate_member(
            group, member_id, request.group_instance_id if version >= 3 else None
        )
        if error:
            return heartbeat_response(error)
        if request.generation_id != group.generation:
            return heartbeat_response(E.ILLEGAL_GENERATION)
        if does is _UNKNOWN_MEMBER:
            return heartbeat_response(E.UNKNOWN_MEMBER_ID)
        self.rb.reschedule_heartbeat(group, group.members[member_id])
        if does is _ALIVE_REBALANCING:
            return heartbeat_response(E.REBALANCE_IN_PROGRESS)
        return heartbeat_response()

    # -- LeaveGroup ---------------------------------------------------------

    def leave_group(
        self, version: int, request: LeaveGroupRequest, ctx: RequestContext
    ) -> LeaveGroupResponse:
        if not request.group_id:
            return leave_response(version, E.INVALID_GROUP_ID, ())
        if version >= 3:
            identities = [(m.member_id, m.group_instance_id) for m in request.members]
            causes = [_leave_cause(m.member_id, m.reason if version >= 5 else None)
                      for m in request.members]
        else:
            identities = [(request.member_id, None)]
            causes = ["leave-request"]
        group = self.rt.groups.get(request.group_id)
        if group is None:
            consumer = self.rt.consumer_groups.get(request.group_id)
            errors = ([E.UNKNOWN_MEMBER_ID] * len(identities) if consumer is None
                      else self.consumer.leave_classic(consumer, identities))
            return leave_response(version, E.NONE, [
                leave_member(mid, iid, error) for (mid, iid), error in zip(identities, errors)])
        does = rule(Request.LEAVE, group.state)
        if does is Rule.UNAVAILABLE:
            return leave_response(version, E.COORDINATOR_NOT_AVAILABLE, ())

        results = []
        left_any = False
        for (member_id, instance_id), cause in zip(identities, causes):
            if member_id == "":
                # Admin removal of a static member by its instance id alone.
                if instance_id is not None and instance_id in group.static_members:
                    self._remove_current_member(group, group.static_members[instance_id], cause)
                    results.append(leave_member(member_id, instance_id))
                    left_any = True
                else:
                    results.append(leave_member(member_id, instance_id, E.UNKNOWN_MEMBER_ID))
            elif group.is_pending_member(member_id):
                group.remove(member_id)
                self.rb.cancel_heartbeat(group, member_id)
                results.append(leave_member(member_id, instance_id))
                left_any = True
            else:
                error = validate_member(group, member_id, instance_id)
                if error:
                    results.append(leave_member(member_id, instance_id, error))
                else:
                    self._remove_current_member(group, member_id, cause)
                    results.append(leave_member(member_id, instance_id))
                    left_any = True

        if left_any:
            if does is Rule.LEAVE_REBALANCE:
                self.rb.maybe_prepare_rebalance_or_complete_join(group, "member-left")
            elif does is Rule.LEAVE_JOIN_MAY_END:
                self.rb.maybe_complete_join_phase(group)
        return leave_response(version, E.NONE, results)

    def _remove_current_member(self, group: ClassicGroup, member_id: str, cause: str) -> None:
        member = group.members[member_id]
        emit.classic(self.rt, group.group_id, "member-left", cause, member_id)
        self.rb.cancel_heartbeat(group, member_id)
        waiter = group.take_join_waiter(member)
        if waiter is not None:
            self.rt.respond(waiter.token, join_error(waiter.version, E.UNKNOWN_MEMBER_ID))
        self.rt.drop(group.take_sync_waiter(member))
        group.remove(member_id)


def _leave_cause(member_id: str, reason: str | None) -> str:
    """Why a member named in a LeaveGroup leaves: removed by an admin (named by its
    instance id alone, or with the admin client's reason), else its own leave request."""
    if not member_id or (reason is not None and "admin" in reason):
        return "removed"
    return "leave-request"


def _inconsistent(requested: str | None, actual: str | None) -> bool:
    return requested is not None and actual is not None and requested != actual
