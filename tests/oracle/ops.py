"""Group and topic requests for differential scenarios, one function per API.

Each builds the request with kcsim's codec classes (every field filled, so one
builder serves every version) and sends it through a `Run`, which records the
answer for comparison unless `compare=False`.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import data_codec, request_class
from kcsim.protocol.consumer_protocol import encode_assignment, encode_subscription

if TYPE_CHECKING:
    from .harness import Run

LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR = 2, 3, 8, 9, 10
JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP, DESCRIBE_GROUPS, LIST_GROUPS = 11, 12, 13, 14, 15, 16
CREATE_TOPICS, DELETE_GROUPS, OFFSET_DELETE = 19, 42, 47
CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE = 68, 69

# Newest versions both brokers serve, for the steps that are not the subject of a test.
LATEST = {JOIN_GROUP: 9, SYNC_GROUP: 5, HEARTBEAT: 4, LEAVE_GROUP: 5, DESCRIBE_GROUPS: 6,
          LIST_GROUPS: 5, OFFSET_COMMIT: 9, OFFSET_FETCH: 9, DELETE_GROUPS: 2, OFFSET_DELETE: 0,
          FIND_COORDINATOR: 6, METADATA: 12, CREATE_TOPICS: 7, LIST_OFFSETS: 9,
          CONSUMER_GROUP_HEARTBEAT: 1, CONSUMER_GROUP_DESCRIBE: 1}

_ZERO = uuid.UUID(int=0)
NONE, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, MEMBER_ID_REQUIRED = 0, 25, 27, 79


def v(api_key: int, version: int | None) -> int:
    return LATEST[api_key] if version is None else version


def subscription(*topics: str) -> bytes:
    cls = data_codec("ConsumerProtocolSubscription").cls
    return encode_subscription(cls(topics=list(topics), owned_partitions=[]), 1)


def assignment(partitions: dict[str, list[int]]) -> bytes:
    codec = data_codec("ConsumerProtocolAssignment")
    tp = codec.structs["TopicPartition"]
    return encode_assignment(codec.cls(assigned_partitions=[
        tp(topic=t, partitions=ps) for t, ps in partitions.items()]), 0)


# -- topics -------------------------------------------------------------------------

def create_topic(run: Run, name: str, partitions: int = 1, *, version: int | None = None,
                 compare: bool = True, wait: bool = True) -> Any:
    """CreateTopics, then (by default) wait until Metadata shows every partition led and
    the group coordinator can assign them."""
    cls = request_class(CREATE_TOPICS)
    answer = run.call(CREATE_TOPICS, v(CREATE_TOPICS, version), cls(timeout_ms=30000, topics=[
        cls.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1,
                           assignments=[], configs=[])]), compare=compare)
    if wait:
        wait_for_topic(run, name, partitions)
        wait_assignable(run, name, partitions)
    return answer


def wait_assignable(run: Run, topic: str, partitions: int) -> None:
    """Until a throwaway KIP-848 member is assigned every partition of a new topic.

    Kafka's group coordinator learns of a topic from the metadata image some time after
    CreateTopics answers; a group that subscribes earlier is assigned nothing first and
    bumps its epoch again when the topic appears. Scenarios start after that.
    """
    group = run.group(f"probe-{topic}")
    member = uuid.uuid4().hex
    epoch = 0

    def assigned() -> bool:
        nonlocal epoch
        answer = cg_heartbeat(run, group, member, epoch, topics=[topic], rebalance_ms=30000,
                              owned=[], compare=False, on="poll")
        if answer.error_code:
            return False
        epoch = answer.member_epoch
        got = answer.assignment.topic_partitions if answer.assignment else []
        return sum(len(tp.partitions) for tp in got) == partitions

    run.until(f"the coordinator to assign {topic}", assigned)
    cg_heartbeat(run, group, member, -1, compare=False, on="poll")


def metadata(run: Run, topics: list[str] | None, *, version: int | None = None,
             auto_create: bool = False, compare: bool = True, on: str = "main") -> Any:
    cls = request_class(METADATA)
    return run.call(METADATA, v(METADATA, version), cls(
        topics=None if topics is None else [cls.MetadataRequestTopic(name=t) for t in topics],
        allow_auto_topic_creation=auto_create, include_cluster_authorized_operations=False,
        include_topic_authorized_operations=False), compare=compare, on=on)


def wait_for_topic(run: Run, name: str, partitions: int) -> None:
    def ready() -> bool:
        answer = metadata(run, [name], compare=False, on="poll")
        topic = answer.topics[0]
        return (topic.error_code == 0 and len(topic.partitions) == partitions
                and all(p.error_code == 0 and p.leader_id >= 0 for p in topic.partitions))

    run.until(f"topic {name} with {partitions} led partitions", ready)


def list_offsets(run: Run, topic: str, partitions: list[int], timestamp: int, *,
                 version: int | None = None) -> Any:
    cls = request_class(LIST_OFFSETS)
    return run.call(LIST_OFFSETS, v(LIST_OFFSETS, version), cls(
        replica_id=-1, isolation_level=0, timeout_ms=30000, topics=[cls.ListOffsetsTopic(
            name=topic, partitions=[cls.ListOffsetsPartition(
                partition_index=p, current_leader_epoch=-1, timestamp=timestamp, max_num_offsets=1)
                for p in partitions])]))


def topic_ids(run: Run, *names: str) -> dict[str, Any]:
    """Topic name -> id (uncompared Metadata)."""
    answer = metadata(run, list(names), compare=False, on="poll")
    return {t.name: t.topic_id for t in answer.topics}


# -- coordinator ---------------------------------------------------------------------

def find_coordinator(run: Run, keys: list[str], key_type: int = 0, *,
                     version: int | None = None) -> Any:
    cls = request_class(FIND_COORDINATOR)
    return run.call(FIND_COORDINATOR, v(FIND_COORDINATOR, version),
                    cls(key=keys[0], key_type=key_type, coordinator_keys=keys))


# -- classic groups ------------------------------------------------------------------

def join(run: Run, group: str, member_id: str = "", *, on: str = "main",
         version: int | None = None, instance: str | None = None, session_ms: int = 10000,
         rebalance_ms: int = 10000, topics: tuple[str, ...] = ("t",),
         protocols: tuple[str, ...] = ("range",), protocol_type: str = "consumer",
         send_only: bool = False, label: str = "", compare: bool = True) -> Any:
    cls = request_class(JOIN_GROUP)
    request = cls(group_id=group, session_timeout_ms=session_ms, rebalance_timeout_ms=rebalance_ms,
                  member_id=member_id, group_instance_id=instance, protocol_type=protocol_type,
                  protocols=[cls.JoinGroupRequestProtocol(name=p, metadata=subscription(*topics))
                             for p in protocols], reason=None)
    if send_only:
        run.send(JOIN_GROUP, v(JOIN_GROUP, version), request, on=on, label=label, compare=compare)
        return None
    return run.call(JOIN_GROUP, v(JOIN_GROUP, version), request, on=on, label=label,
                    compare=compare)


def join_new(run: Run, group: str, member_id: str = "", *, on: str = "main",
             version: int | None = None, **kw: Any) -> Any:
    """Join as a new member, answering MEMBER_ID_REQUIRED (v4+) with the id given."""
    answer = join(run, group, member_id, on=on, version=version, **kw)
    if answer.error_code == MEMBER_ID_REQUIRED:
        answer = join(run, group, answer.member_id, on=on, version=version, **kw)
    return answer


def sync(run: Run, group: str, generation: int, member_id: str, *, on: str = "main",
         version: int | None = None, instance: str | None = None,
         assignments: dict[str, bytes] | None = None, protocol_name: str | None = "range",
         protocol_type: str | None = "consumer", send_only: bool = False) -> Any:
    cls = request_class(SYNC_GROUP)
    request = cls(group_id=group, generation_id=generation, member_id=member_id,
                  group_instance_id=instance, protocol_type=protocol_type,
                  protocol_name=protocol_name, assignments=[
                      cls.SyncGroupRequestAssignment(member_id=m, assignment=a)
                      for m, a in (assignments or {}).items()])
    if send_only:
        run.send(SYNC_GROUP, v(SYNC_GROUP, version), request, on=on)
        return None
    return run.call(SYNC_GROUP, v(SYNC_GROUP, version), request, on=on)


def heartbeat(run: Run, group: str, generation: int, member_id: str, *, on: str = "main",
              version: int | None = None, instance: str | None = None,
              compare: bool = True) -> Any:
    cls = request_class(HEARTBEAT)
    return run.call(HEARTBEAT, v(HEARTBEAT, version), cls(
        group_id=group, generation_id=generation, member_id=member_id,
        group_instance_id=instance), on=on, compare=compare)


def leave(run: Run, group: str, members: list[tuple[str, str | None]], *, on: str = "main",
          version: int | None = None) -> Any:
    cls = request_class(LEAVE_GROUP)
    return run.call(LEAVE_GROUP, v(LEAVE_GROUP, version), cls(
        group_id=group, member_id=members[0][0] if members else "",
        members=[cls.MemberIdentity(member_id=m, group_instance_id=i, reason=None)
                 for m, i in members]), on=on)


def describe(run: Run, groups: list[str], *, version: int | None = None,
             compare: bool = True, on: str = "main") -> Any:
    cls = request_class(DESCRIBE_GROUPS)
    return run.call(DESCRIBE_GROUPS, v(DESCRIBE_GROUPS, version),
                    cls(groups=groups, include_authorized_operations=False),
                    compare=compare, on=on)


def state_of(run: Run, group: str) -> str:
    return str(describe(run, [group], compare=False, on="poll").groups[0].group_state)


def list_groups(run: Run, *, version: int | None = None, states: list[str] | None = None,
                types: list[str] | None = None) -> Any:
    """ListGroups; the answer keeps only this scenario's groups (Kafka is shared)."""
    cls = request_class(LIST_GROUPS)
    answer = run.call(LIST_GROUPS, v(LIST_GROUPS, version),
                      cls(states_filter=states or [], types_filter=types or []), compare=False)
    answer.groups = [g for g in answer.groups if g.group_id.startswith(run.prefix + "-")
                     and not g.group_id.startswith(run.group("probe-"))]
    run.record(LIST_GROUPS, v(LIST_GROUPS, version), answer)
    return answer


def delete_groups(run: Run, groups: list[str], *, version: int | None = None) -> Any:
    cls = request_class(DELETE_GROUPS)
    return run.call(DELETE_GROUPS, v(DELETE_GROUPS, version), cls(groups_names=groups))


# -- offsets ---------------------------------------------------------------------------

def commit(run: Run, group: str, offsets: dict[tuple[str, int], int], *, generation: int = -1,
           member_id: str = "", instance: str | None = None, version: int | None = None,
           metadata: str | None = "", on: str = "main", ids: dict[str, Any] | None = None) -> Any:
    cls = request_class(OFFSET_COMMIT)
    by_topic: dict[str, dict[int, int]] = {}
    for (topic, partition), offset in offsets.items():
        by_topic.setdefault(topic, {})[partition] = offset
    return run.call(OFFSET_COMMIT, v(OFFSET_COMMIT, version), cls(
        group_id=group, generation_id_or_member_epoch=generation, member_id=member_id,
        group_instance_id=instance, retention_time_ms=-1, topics=[
            cls.OffsetCommitRequestTopic(
                name=t, topic_id=(ids or {}).get(t, _ZERO), partitions=[
                    cls.OffsetCommitRequestPartition(
                        partition_index=p, committed_offset=o, committed_leader_epoch=-1,
                        commit_timestamp=-1, committed_metadata=metadata)
                    for p, o in ps.items()])
            for t, ps in by_topic.items()]), on=on)


def fetch(run: Run, group: str, topics: dict[str, list[int]] | None, *,
          version: int | None = None, member_id: str | None = None, member_epoch: int = -1,
          require_stable: bool = False, ids: dict[str, Any] | None = None,
          more_groups: dict[str, dict[str, list[int]] | None] | None = None) -> Any:
    """OffsetFetch of one group (v0-7) or several (v8+: `more_groups`)."""
    cls = request_class(OFFSET_FETCH)

    def topic_list(ts: dict[str, list[int]] | None, grouped: bool) -> Any:
        if ts is None:
            return None
        if grouped:
            return [cls.OffsetFetchRequestTopics(name=t, topic_id=(ids or {}).get(t, _ZERO),
                                                 partition_indexes=ps) for t, ps in ts.items()]
        return [cls.OffsetFetchRequestTopic(name=t, partition_indexes=ps) for t, ps in ts.items()]

    groups = {group: topics, **(more_groups or {})}
    return run.call(OFFSET_FETCH, v(OFFSET_FETCH, version), cls(
        group_id=group, topics=topic_list(topics, False), require_stable=require_stable,
        groups=[cls.OffsetFetchRequestGroup(group_id=g, member_id=member_id if g == group else None,
                                            member_epoch=member_epoch if g == group else -1,
                                            topics=topic_list(ts, True))
                for g, ts in groups.items()]))


def offset_delete(run: Run, group: str, topics: dict[str, list[int]], *,
                  version: int | None = None) -> Any:
    cls = request_class(OFFSET_DELETE)
    return run.call(OFFSET_DELETE, v(OFFSET_DELETE, version), cls(group_id=group, topics=[
        cls.OffsetDeleteRequestTopic(name=t, partitions=[
            cls.OffsetDeleteRequestPartition(partition_index=p) for p in ps])
        for t, ps in topics.items()]))


# -- KIP-848 consumer groups -----------------------------------------------------------

def cg_heartbeat(run: Run, group: str, member_id: str, epoch: int, *, on: str = "main",
                 version: int | None = None, topics: list[str] | None = None,
                 regex: str | None = None, instance: str | None = None,
                 rebalance_ms: int = -1, assignor: str | None = None,
                 owned: list[tuple[Any, list[int]]] | None = None, compare: bool = True,
                 label: str = "") -> Any:
    cls = request_class(CONSUMER_GROUP_HEARTBEAT)
    return run.call(CONSUMER_GROUP_HEARTBEAT, v(CONSUMER_GROUP_HEARTBEAT, version), cls(
        group_id=group, member_id=member_id, member_epoch=epoch, instance_id=instance,
        rack_id=None, rebalance_timeout_ms=rebalance_ms, subscribed_topic_names=topics,
        subscribed_topic_regex=regex, server_assignor=assignor,
        topic_partitions=None if owned is None else [
            cls.TopicPartitions(topic_id=t, partitions=ps) for t, ps in owned]),
        on=on, compare=compare, label=label)


def cg_describe(run: Run, groups: list[str], *, version: int | None = None,
                compare: bool = True, on: str = "main") -> Any:
    cls = request_class(CONSUMER_GROUP_DESCRIBE)
    return run.call(CONSUMER_GROUP_DESCRIBE, v(CONSUMER_GROUP_DESCRIBE, version),
                    cls(group_ids=groups, include_authorized_operations=False),
                    compare=compare, on=on)


