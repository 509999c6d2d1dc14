"""ShareGroupHeartbeat and ShareGroupDescribe: a share group's membership (KIP-932).

Membership is KIP-848's without revocation. A member joins with epoch 0 and the id it
made itself, heartbeats with its current epoch (any other is FENCED_MEMBER_EPOCH) and
leaves with -1. A new member, a changed subscription or a change of the subscribed
topics' partitions bumps the group epoch; the next heartbeat then computes the target
with the simple assignor, and each member takes its target at once, with the epoch it
was computed at: a partition may be shared, so nobody waits for anybody to let go. A
member whose session runs out (share.session.timeout.ms, on the coordinator's clock) is
removed as if it had left. A member that goes gives back the records it holds in the
group's share partitions, uncounted (:meth:`~.partitions.SharePartitions.release_member`).

The handlers only write records; the group changes as they fold in
(:class:`~.model.ShareGroups`), the same live and at replay.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from kcsim.coordinator.records import (
    ShareGroupCurrentMemberAssignmentKey,
    ShareGroupMemberKey,
    ShareGroupMetadataKey,
    ShareGroupMetadataValue,
    ShareGroupStatePartitionMetadataKey,
    ShareGroupTargetAssignmentMemberKey,
    ShareGroupTargetAssignmentMetadataKey,
)
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.share_group import (
    ShareGroupDescribeResponse,
    ShareGroupHeartbeatResponse,
)
from kcsim.storage.records import Record

from ..shared import emit
from ..shared.describing import describe_each, not_found_message
from ..shared.interface import kafka_client_host
from ..shared.java import hash_map_order, timeline_hash_map_order
from ..shared.timers import share_session_key
from .assignor import simple_assign
from .model import ShareGroup, ShareGroups, ShareMember, member_records, target_records

if TYPE_CHECKING:
    import uuid
    from collections.abc import Iterable

    from kcsim.protocol.messages.share_group import (
        ShareGroupDescribeRequest,
        ShareGroupHeartbeatRequest,
    )

    from ..shared.interface import RequestContext
    from ..shared.runtime import GroupRuntime
    from ..shared.timers import TimerKey
    from .assignor import Assignment
    from .partitions import SharePartitions

E = ErrorCode
HeartbeatResponse = ShareGroupHeartbeatResponse
DescribeResponse = ShareGroupDescribeResponse
ASSIGNOR_NAME = "simple"
SHARE_KIND = "share"
LEAVE_EPOCH = -1
MAX_MEMBER_ID_LENGTH = 36  # a UUID's string form
# The record kinds of a share group (not its partitions' state).
SHARE_GROUP_KEYS = (ShareGroupMetadataKey, ShareGroupMemberKey,
                    ShareGroupTargetAssignmentMetadataKey, ShareGroupTargetAssignmentMemberKey,
                    ShareGroupCurrentMemberAssignmentKey, ShareGroupStatePartitionMetadataKey)


def _error(code: ErrorCode, message: str | None = None) -> ShareGroupHeartbeatResponse:
    return HeartbeatResponse(error_code=code, error_message=message, member_epoch=0,
                             heartbeat_interval_ms=0)


def not_share_message(rt: GroupRuntime, group_id: str) -> str:
    return not_found_message(group_id, SHARE_KIND, rt.group_exists(group_id))


class ShareMembership:
    def __init__(self, runtime: GroupRuntime, partitions: SharePartitions) -> None:
        self.rt = runtime
        self.partitions = partitions
        self.fold = ShareGroups(runtime.share_groups)

    def register(self) -> None:
        for key in SHARE_GROUP_KEYS:
            self.rt.folds[key] = self._apply

    def _apply(self, record: Record) -> None:
        self.fold.apply(record)
        group_id: str = getattr(record.key, "group", "")
        if group_id in self.rt.share_groups:
            self.rt.mark_loaded(group_id)

    # -- ShareGroupHeartbeat ----------------------------------------------------------

    def heartbeat(
        self, version: int, request: ShareGroupHeartbeatRequest, ctx: RequestContext
    ) -> ShareGroupHeartbeatResponse:
        if not valid_member_id(request.member_id):
            return _error(E.INVALID_REQUEST)  # Kafka's request handler: no message
        problem = _invalid(request)
        if problem:
            return _error(E.INVALID_REQUEST, problem)
        rt = self.rt
        group_id, member_id, epoch = request.group_id, request.member_id, request.member_epoch
        group = rt.share_groups.get(group_id)
        if group is None and (epoch != 0 or rt.group_exists(group_id)):
            return _error(E.GROUP_ID_NOT_FOUND, not_share_message(rt, group_id))
        if epoch == LEAVE_EPOCH:
            assert group is not None
            if member_id not in group.members:
                return _error(E.UNKNOWN_MEMBER_ID, _not_a_member(member_id, group_id))
            self.remove_member(group, member_id, "leave-request")
            return HeartbeatResponse(member_id=member_id, member_epoch=LEAVE_EPOCH,
                                     heartbeat_interval_ms=0)
        if group is None:
            group = ShareGroup(group_id)
            emit.event(rt, group_id, "share", "group-created")
        member = group.members.get(member_id)
        if member is None:
            if epoch != 0:
                return _error(E.UNKNOWN_MEMBER_ID, _not_a_member(member_id, group_id))
            if len(group.members) >= rt.config.share_group_max_size:
                return _error(E.GROUP_MAX_SIZE_REACHED,
                              f"The share group has reached its maximum capacity of "
                              f"{rt.config.share_group_max_size} members.")
        elif epoch not in (0, member.member_epoch):
            return _error(E.FENCED_MEMBER_EPOCH, _fenced(epoch, member.member_epoch))
        return self._beat(group, member, request, ctx)

    def _beat(self, group: ShareGroup, member: ShareMember | None,
              request: ShareGroupHeartbeatRequest, ctx: RequestContext
              ) -> ShareGroupHeartbeatResponse:
        rt = self.rt
        group_id, member_id = group.group_id, request.member_id
        old = member if member is not None else ShareMember(member_id)
        new = ShareMember(
            member_id,
            rack_id=request.rack_id if request.rack_id is not None else old.rack_id,
            client_id=ctx.client_id,
            client_host=kafka_client_host(ctx.client_host),
            subscribed_topic_names=(frozenset(request.subscribed_topic_names)
                                    if request.subscribed_topic_names is not None
                                    else old.subscribed_topic_names),
            member_epoch=old.member_epoch,
            previous_member_epoch=old.previous_member_epoch,
            assigned=old.assigned,
        )
        members = dict(group.members)
        members[member_id] = new
        meta_hash = self._metadata_hash(members.values())
        group_epoch = group.epoch
        if (member is None or new.subscribed_topic_names != old.subscribed_topic_names
                or meta_hash != group.metadata_hash):
            group_epoch += 1
            rt.write(Record(ShareGroupMetadataKey(group_id),
                            ShareGroupMetadataValue(group_epoch, meta_hash)))
            if member is None:
                emit.event(rt, group_id, "share", "member-joined", member=member_id)
            cause = ("member-joined" if member is None
                     else "subscription-changed"
                     if new.subscribed_topic_names != old.subscribed_topic_names
                     else "metadata-changed")
            emit.event(rt, group_id, "share", "epoch-bumped", cause, detail={"epoch": group_epoch})
        targets: dict[str, Assignment] = group.targets
        if group_epoch > group.assignment_epoch:
            targets = self._assign(group, members)
            for record in target_records(group_id, group_epoch, targets, rt.now):
                rt.write(record)
        target = targets.get(member_id, {})
        changed = new.member_epoch != group_epoch or new.assigned != target
        if changed:
            new.previous_member_epoch, new.member_epoch = new.member_epoch, group_epoch
            if new.assigned != target and rt.config.events:
                self._assignment_changed(group_id, member_id, new.assigned, target)
            new.assigned = target
        if changed or member is None or (new.rack_id, new.client_id, new.client_host,
                                         new.subscribed_topic_names) != (
                old.rack_id, old.client_id, old.client_host, old.subscribed_topic_names):
            for record in member_records(group_id, new):
                rt.write(record)
        rt.deadlines.schedule(share_session_key(group_id, member_id),
                              rt.now + rt.group_configs.share_session_timeout_ms(group_id))
        assignment = None
        if changed or request.member_epoch == 0:
            assignment = HeartbeatResponse.Assignment(topic_partitions=[
                HeartbeatResponse.TopicPartitions(topic_id=t, partitions=sorted(ps))
                for t, ps in sorted(target.items(), key=lambda kv: kv[0].bytes)])
        return HeartbeatResponse(
            member_id=member_id, member_epoch=new.member_epoch,
            heartbeat_interval_ms=rt.group_configs.share_heartbeat_interval_ms(group_id),
            assignment=assignment)

    def _assignment_changed(self, group_id: str, member_id: str, before: Assignment,
                            after: Assignment) -> None:
        def named(assignment: Assignment) -> set[tuple[str, int]]:
            return {(self.rt.topics.topic_name(t) or str(t), p)
                    for t, ps in assignment.items() for p in ps}

        was, now = named(before), named(after)
        emit.event(self.rt, group_id, "share", "assignment-changed", member=member_id,
                   detail={"added": emit.partitions(now - was),
                           "removed": emit.partitions(was - now)})

    def _metadata_hash(self, members: Iterable[ShareMember]) -> int:
        """A stable hash of the subscribed topics' ids and partition counts: a change of
        them (a topic made, deleted or grown) bumps the group epoch."""
        topics = self.rt.topics
        names: set[str] = set()
        for m in members:
            names |= m.subscribed_topic_names
        parts = []
        for name in sorted(names):
            topic_id, count = topics.topic_id(name), topics.partition_count(name)
            if topic_id is not None and count:
                parts.append(f"{name}:{topic_id}:{count}")
        return zlib.crc32(";".join(parts).encode()) if parts else 0

    def _assign(self, group: ShareGroup, members: dict[str, ShareMember]) -> dict[str, Assignment]:
        """The simple assignor's targets for `members` (the group's, with the heartbeating
        one's update, a new one last). Kafka hands it the members in the order its table of
        the group lists them, the heartbeating member already in it, and a HashMap of them
        then orders them again (ties within a bucket kept in that order)."""
        topics = self.rt.topics
        counts: dict[uuid.UUID, int] = {}
        subscriptions: dict[str, frozenset[uuid.UUID]] = {}
        for member_id in timeline_hash_map_order(members, max(group.peak_members, len(members))):
            m = members[member_id]
            ids = set()
            for name in m.subscribed_topic_names:
                topic_id, count = topics.topic_id(name), topics.partition_count(name)
                if topic_id is not None and count:
                    ids.add(topic_id)
                    counts[topic_id] = count
            subscriptions[member_id] = frozenset(ids)
        # Kafka decides the subscription type on names, and lists a member's topics in the
        # order of its HashSet of their names.
        names = {m.subscribed_topic_names for m in members.values()}
        listed = [topics.topic_id(n) for n in hash_map_order(sorted(set().union(*names)))]
        return simple_assign(subscriptions, counts,
                             {m: a for m, a in group.targets.items() if m in members},
                             homogeneous=len(names) <= 1,
                             topic_order=[t for t in listed if t is not None])

    # -- members going ------------------------------------------------------------------

    def remove_member(self, group: ShareGroup, member_id: str, cause: str) -> None:
        """The member leaves (or its session ran out: `cause`): its records go, the group
        epoch moves on, and what it held in the group's share partitions is given back."""
        rt = self.rt
        group_id = group.group_id
        emit.event(rt, group_id, "share", "member-left", cause, member_id)
        emit.event(rt, group_id, "share", "epoch-bumped", "member-left",
                   detail={"epoch": group.epoch + 1})
        if len(group.members) == 1:
            emit.event(rt, group_id, "share", "empty")
        rt.deadlines.cancel(share_session_key(group_id, member_id))
        rt.write(Record(ShareGroupCurrentMemberAssignmentKey(group_id, member_id), None))
        rt.write(Record(ShareGroupTargetAssignmentMemberKey(group_id, member_id), None))
        rt.write(Record(ShareGroupMemberKey(group_id, member_id), None))
        rest = [m for m in group.members.values() if m.member_id != member_id]
        rt.write(Record(ShareGroupMetadataKey(group_id),
                        ShareGroupMetadataValue(group.epoch + 1, self._metadata_hash(rest))))
        for record in self.partitions.release_member(group_id, member_id, rt.now):
            rt.write(record)

    def on_session_expired(self, key: TimerKey, _: object) -> None:
        group = self.rt.share_groups.get(key.group_id)
        if group is not None and key.member_id in group.members:
            self.remove_member(group, key.member_id, "session-timeout")

    def start_loaded(self, group_id: str) -> None:
        """A group read back from the log: each member gets a full session."""
        rt = self.rt
        group = rt.share_groups.get(group_id)
        if group is None:
            return
        timeout = rt.group_configs.share_session_timeout_ms(group_id)
        for member_id in group.members:
            rt.deadlines.schedule(share_session_key(group_id, member_id), rt.now + timeout)

    def delete(self, group: ShareGroup) -> None:
        """DeleteGroups of an empty share group: its records, and its partitions' state."""
        rt = self.rt
        group_id = group.group_id
        for record in self.partitions.delete_group(group_id):
            rt.write(record)
        for member_id in group.targets:
            rt.write(Record(ShareGroupTargetAssignmentMemberKey(group_id, member_id), None))
        rt.write(Record(ShareGroupTargetAssignmentMetadataKey(group_id), None))
        rt.write(Record(ShareGroupMetadataKey(group_id), None))

    # -- ShareGroupDescribe --------------------------------------------------------------

    def describe(
        self, version: int, request: ShareGroupDescribeRequest, ctx: RequestContext
    ) -> ShareGroupDescribeResponse:
        return DescribeResponse(groups=describe_each(
            request.group_ids, self.rt.share_groups, self._describe,
            request.include_authorized_operations))

    def _describe(self, group_id: str, group: ShareGroup | None
                  ) -> ShareGroupDescribeResponse.DescribedGroup:
        Described = DescribeResponse.DescribedGroup
        if group is None:
            return Described(group_id=group_id, error_code=E.GROUP_ID_NOT_FOUND,
                             error_message=not_share_message(self.rt, group_id),
                             group_state="", assignor_name="")
        return Described(
            error_code=E.NONE, group_id=group_id, group_state=group.state,
            group_epoch=group.epoch, assignment_epoch=group.assignment_epoch,
            assignor_name=ASSIGNOR_NAME,
            members=[
                DescribeResponse.Member(
                    member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
                    client_id=m.client_id, client_host=m.client_host,
                    subscribed_topic_names=sorted(m.subscribed_topic_names),
                    assignment=self._assignment(m.assigned))
                for m in group.members.values()
            ])

    def _assignment(self, assignment: Assignment) -> ShareGroupDescribeResponse.Assignment:
        topics = self.rt.topics
        out = []
        for topic_id, partitions in sorted(assignment.items(), key=lambda kv: kv[0].bytes):
            name = topics.topic_name(topic_id)
            if name is not None:
                out.append(DescribeResponse.TopicPartitions(
                    topic_id=topic_id, topic_name=name, partitions=sorted(partitions)))
        return DescribeResponse.Assignment(topic_partitions=out)


def valid_member_id(member_id: str | None) -> bool:
    """Kafka's request handler refuses a share member id that is empty or longer than a
    UUID's 36 characters (INVALID_REQUEST, before the coordinator sees the request)."""
    return member_id is not None and 0 < len(member_id) <= MAX_MEMBER_ID_LENGTH


def _not_a_member(member_id: str, group_id: str) -> str:
    return f"Member {member_id} is not a member of group {group_id}."


def _fenced(epoch: int, known: int) -> str:
    than = "greater" if epoch > known else "smaller"
    return (f"The share group member has a {than} member epoch ({epoch}) than the one known by "
            f"the group coordinator ({known}). The member must abandon all its partitions "
            "and rejoin.")


def _invalid(request: ShareGroupHeartbeatRequest) -> str | None:
    """Kafka's checks of a heartbeat's fields (INVALID_REQUEST with this message)."""
    if not request.group_id:
        return "GroupId can't be empty."
    if not request.member_id:
        return "MemberId can't be empty."
    if request.member_epoch < LEAVE_EPOCH:
        return f"MemberEpoch is {request.member_epoch}, but must be greater than or equal to -1."
    if request.member_epoch == 0 and not request.subscribed_topic_names:
        return "SubscribedTopicNames must be set in first request."
    return None
