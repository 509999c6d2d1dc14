"""KIP-1071 streams groups, kcsim against Kafka: StreamsGroupHeartbeat and
StreamsGroupDescribe at every version both serve, the refusals of bad requests and
topologies, and a streams group met through the other group APIs.

Kafka creates a group's internal topics in the background, so the scenarios compare the
answers that do not depend on when they land: the first join (which finds them missing),
and, once both brokers have them (heartbeats not compared meanwhile), a stable group.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class

from . import ops
from .ops import CONSUMER_GROUP_DESCRIBE

if TYPE_CHECKING:
    from .harness import Run

Across = Any
HEARTBEAT, DESCRIBE = 88, 89
T = request_class(HEARTBEAT)


def topology(run: Run, epoch: int = 0, changelog_partitions: int = 0,
             regex: bool = False) -> Any:
    """A word count: words in, repartitioned by word, counted in a store."""
    repartition, changelog = run.topic("repartition"), run.topic("changelog")
    return T.Topology(epoch=epoch, subtopologies=[
        T.Subtopology(subtopology_id="0", source_topics=[run.topic("words")],
                      source_topic_regex=[f"{run.prefix}-w.*"] if regex else [],
                      repartition_sink_topics=[repartition]),
        T.Subtopology(
            subtopology_id="1",
            repartition_source_topics=[T.TopicInfo(name=repartition)],
            state_changelog_topics=[T.TopicInfo(name=changelog,
                                                partitions=changelog_partitions)]),
    ])


def sg_heartbeat(run: Run, group: str, member: str, epoch: int, *, version: int,
                 on: str = "main", topology: Any = None, rebalance_ms: int = -1,
                 owned: list[Any] | None = None, instance: str | None = None,
                 compare: bool = True, label: str = "") -> Any:
    joining = epoch == 0
    if joining and owned is None and not label.startswith("null"):
        owned = []  # a joining member names its (no) tasks, as Kafka Streams does
    return run.call(HEARTBEAT, version, T(
        group_id=group, member_id=member, member_epoch=epoch, instance_id=instance,
        rebalance_timeout_ms=rebalance_ms, topology=topology,
        process_id=f"process-{on}" if joining else None,
        active_tasks=owned, standby_tasks=None if owned is None else [],
        warmup_tasks=None if owned is None else []), on=on, compare=compare, label=label)


def sg_describe(run: Run, groups: list[str], *, version: int = 1, compare: bool = True) -> Any:
    return run.call(DESCRIBE, version, request_class(DESCRIBE)(
        group_ids=groups, include_authorized_operations=False), compare=compare)


def bad_topologies(run: Run) -> list[tuple[str, Any]]:
    words = run.topic("words")
    return [
        ("two subtopologies of one id", T.Topology(epoch=0, subtopologies=[
            T.Subtopology(subtopology_id="0", source_topics=[words]),
            T.Subtopology(subtopology_id="0", source_topics=[words])])),
        ("a subtopology without sources", T.Topology(epoch=0, subtopologies=[
            T.Subtopology(subtopology_id="0")])),
        ("a copartition group naming no topic", T.Topology(epoch=0, subtopologies=[
            T.Subtopology(subtopology_id="0", source_topics=[words],
                          copartition_groups=[T.CopartitionGroup(source_topics=[4])])])),
        ("a repartition topic nobody writes", T.Topology(epoch=0, subtopologies=[
            T.Subtopology(subtopology_id="0", repartition_source_topics=[
                T.TopicInfo(name=run.topic("orphan"))])])),
        ("a repartition topic of -1 partitions", T.Topology(epoch=0, subtopologies=[
            T.Subtopology(subtopology_id="0", repartition_source_topics=[
                T.TopicInfo(name=run.topic("negative"), partitions=-1)])])),
    ]


def sg_errors(run: Run, version: int) -> None:
    """Refused heartbeats: each of Kafka's request checks, a topology with a regex or a
    changelog with a partition count, an unknown member, a non-join to an unknown group."""
    group = run.group()
    ops.create_topic(run, run.topic("words"), 2, compare=False)
    member = str(uuid.uuid4())
    sg_heartbeat(run, group, member, 0, version=version, topology=topology(run),
                 label="join without a rebalance time-out")
    sg_heartbeat(run, group, member, 0, version=version, rebalance_ms=30000,
                 label="join without a topology")
    sg_heartbeat(run, group, member, 0, version=version, rebalance_ms=30000,
                 topology=topology(run, regex=True), label="a source topic regex")
    sg_heartbeat(run, group, member, 0, version=version, rebalance_ms=30000,
                 topology=topology(run, changelog_partitions=3), label="a changelog count")
    for label, bad in bad_topologies(run):
        sg_heartbeat(run, group, member, 0, version=version, rebalance_ms=30000, topology=bad,
                     label=label)
    sg_heartbeat(run, group, member, 3, version=version, owned=[], label="unknown group")
    sg_heartbeat(run, group, "", 0, version=version, rebalance_ms=30000,
                 topology=topology(run), label="no member id")
    sg_heartbeat(run, group, member, 0, version=version, rebalance_ms=30000,
                 topology=topology(run), label="null task lists on a join")
    sg_heartbeat(run, group, member, -3, version=version, label="epoch -3")
    sg_heartbeat(run, group, member, -2, version=version, label="static leave, no instance")
    sg_describe(run, [group])


def sg_join_and_describe(run: Run, version: int) -> None:
    """The first member finds the internal topics missing; the group is described, listed,
    and met through DescribeGroups, ConsumerGroupDescribe and DeleteGroups; once both
    brokers created the internal topics, the member is given every task."""
    group = run.group()
    ops.create_topic(run, run.topic("words"), 2, compare=False)
    member = str(uuid.uuid4())
    joined = sg_heartbeat(run, group, member, 0, version=version, rebalance_ms=30000,
                          topology=topology(run))
    epoch = joined.member_epoch
    sg_heartbeat(run, group, str(uuid.uuid4()), 0, version=version, rebalance_ms=30000,
                 topology=topology(run, epoch=1), label="another topology")
    sg_heartbeat(run, group, member, epoch + 1, version=version, owned=[],
                 label="a greater epoch")
    ops.describe(run, [group])
    run.call(CONSUMER_GROUP_DESCRIBE, 1, request_class(CONSUMER_GROUP_DESCRIBE)(
        group_ids=[group], include_authorized_operations=False))
    ops.list_groups(run, types=["streams"])
    ops.delete_groups(run, [group])

    state: dict[str, Any] = {"epoch": epoch, "tasks": None}

    def given_tasks() -> bool:
        answer = sg_heartbeat(run, group, member, state["epoch"], version=version, owned=[],
                              compare=False)
        state["epoch"] = answer.member_epoch
        if answer.active_tasks:
            state["tasks"] = answer.active_tasks
        return state["tasks"] is not None

    run.until("the member's tasks", given_tasks)
    sg_heartbeat(run, group, member, state["epoch"], version=version, owned=state["tasks"])
    sg_describe(run, [group])
    sg_heartbeat(run, group, member, -1, version=version)
    sg_describe(run, [group])
    ops.delete_groups(run, [group])
    sg_describe(run, [group])


def test_streams_group_heartbeat_errors(across: Across) -> None:
    assert across(HEARTBEAT, sg_errors)


def test_streams_group_join_and_describe(across: Across) -> None:
    assert across(HEARTBEAT, sg_join_and_describe)



def sg_two_members(run: Run, version: int) -> None:
    """A second member joins a stable group: the first gives up half of its tasks, the
    second receives them once released; then the second leaves."""
    group = run.group()
    ops.create_topic(run, run.topic("words"), 2, compare=False)
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    joined = sg_heartbeat(run, group, a, 0, version=version, rebalance_ms=30000,
                          topology=topology(run), compare=False)
    held: dict[str, Any] = {a: [], b: []}
    epochs = {a: joined.member_epoch, b: 0}

    def beat(member: str, compare: bool, on: str = "main") -> Any:
        answer = sg_heartbeat(run, group, member, epochs[member], version=version,
                              owned=held[member], on=on, compare=compare)
        epochs[member] = answer.member_epoch
        if answer.active_tasks is not None:
            held[member] = answer.active_tasks
        return answer

    run.until("the first member's tasks", lambda: bool(beat(a, False).active_tasks or held[a]))
    sg_describe(run, [group])
    second = sg_heartbeat(run, group, b, 0, version=version, rebalance_ms=30000,
                          topology=topology(run), on="b")
    epochs[b] = second.member_epoch
    beat(a, True)  # revoke
    beat(a, True)  # released
    beat(b, True, on="b")  # receives
    beat(b, True, on="b")
    beat(a, True)
    sg_describe(run, [group])
    sg_heartbeat(run, group, b, -1, version=version, on="b")
    beat(a, True)
    beat(a, True)
    sg_describe(run, [group])


def test_streams_group_two_members(across: Across) -> None:
    assert across(HEARTBEAT, sg_two_members)


def ready_member(run: Run, group: str, version: int, *, instance: str | None = None
                 ) -> tuple[str, int, list[Any]]:
    """A member joins and heartbeats (uncompared) until it holds its tasks."""
    member = str(uuid.uuid4())
    joined = sg_heartbeat(run, group, member, 0, version=version, rebalance_ms=30000,
                          topology=topology(run), instance=instance, compare=False)
    state: dict[str, Any] = {"epoch": joined.member_epoch, "tasks": []}

    def given() -> bool:
        answer = sg_heartbeat(run, group, member, state["epoch"], version=version,
                              owned=state["tasks"], instance=instance, compare=False)
        state["epoch"] = answer.member_epoch
        if answer.active_tasks:
            state["tasks"] = answer.active_tasks
        return bool(state["tasks"]) and run.call(
            DESCRIBE, 1, request_class(DESCRIBE)(group_ids=[group]),
            compare=False).groups[0].group_state == "Stable"

    run.until("the member's tasks", given)
    return member, state["epoch"], state["tasks"]


def sg_static_and_commits(run: Run, version: int) -> None:
    """A static member commits offsets with its epoch (a stale one, an old OffsetCommit
    version, an unknown member), fetches them, leaves for a while (-2) and comes back under
    a new member id to its tasks; the instance id in use is refused meanwhile."""
    group, words = run.group(), run.topic("words")
    ops.create_topic(run, words, 2, compare=False)
    member, epoch, _ = ready_member(run, group, version, instance="app-1")
    ops.commit(run, group, {(words, 0): 5}, generation=epoch, member_id=member)
    ops.commit(run, group, {(words, 0): 6}, generation=epoch - 1, member_id=member)
    ops.commit(run, group, {(words, 0): 7}, generation=epoch, member_id=member, version=8)
    ops.commit(run, group, {(words, 0): 8}, generation=epoch, member_id="stranger")
    ops.commit(run, group, {(words, 1): 9})
    ops.fetch(run, group, {words: [0, 1]}, member_id=member, member_epoch=epoch)
    ops.fetch(run, group, {words: [0, 1]}, member_id=member, member_epoch=epoch + 5)
    ops.fetch(run, group, {words: [0, 1]})
    sg_heartbeat(run, group, str(uuid.uuid4()), 0, version=version, rebalance_ms=30000,
                 topology=topology(run), instance="app-1", label="instance in use")
    sg_heartbeat(run, group, member, -2, version=version, instance="app-1")
    sg_describe(run, [group])
    back = str(uuid.uuid4())
    rejoined = sg_heartbeat(run, group, back, 0, version=version, rebalance_ms=30000,
                            topology=topology(run), instance="app-1", label="back under a new id")
    sg_describe(run, [group])
    sg_heartbeat(run, group, back, rejoined.member_epoch, version=version, owned=[],
                 instance="app-1", label="the next heartbeat")
    sg_describe(run, [group])


def test_streams_group_static_member_and_commits(across: Across) -> None:
    assert across(HEARTBEAT, sg_static_and_commits)
