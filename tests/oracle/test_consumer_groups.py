"""KIP-848 consumer groups, kcsim against Kafka: ConsumerGroupHeartbeat and
ConsumerGroupDescribe at every version both serve, and groups of one type met
through the other type's APIs."""

from __future__ import annotations

import base64
import uuid
from typing import TYPE_CHECKING, Any

from . import ops
from .ops import CONSUMER_GROUP_DESCRIBE, CONSUMER_GROUP_HEARTBEAT
from .test_classic_groups import stable_member
from .test_configs import GROUP, SET, incremental

if TYPE_CHECKING:
    from .harness import Run

Across = Any
REBALANCE_MS = 30000


def new_member_id(version: int) -> str:
    """v0: the coordinator names the member; v1+: the client does (a random UUID)."""
    if version == 0:
        return ""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def owned(answer: Any) -> list[tuple[Any, list[int]]]:
    a = answer.assignment
    return [] if a is None else [(tp.topic_id, sorted(tp.partitions)) for tp in a.topic_partitions]


def join_cg(run: Run, group: str, topics: list[str], version: int, *, on: str = "main",
            instance: str | None = None, regex: str | None = None,
            compare: bool = True) -> tuple[str, int, list[tuple[Any, list[int]]]]:
    """A member joins with epoch 0 and acknowledges its assignment: (id, epoch, owned)."""
    answer = ops.cg_heartbeat(run, group, new_member_id(version), 0, on=on, version=version,
                              topics=topics if regex is None else None, regex=regex,
                              instance=instance, rebalance_ms=REBALANCE_MS, owned=[],
                              compare=compare)
    assert answer.error_code == 0, (
        f"{run.name}: join answered {answer.error_code} {answer.error_message}")
    return answer.member_id, answer.member_epoch, owned(answer)


def cg_lifecycle(run: Run, version: int) -> None:
    """One member joins, gets both partitions, acknowledges, is described, leaves."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, 2, compare=False)
    member, epoch, parts = join_cg(run, group, [topic], version)
    ops.cg_heartbeat(run, group, member, epoch, version=version, owned=parts)
    ops.cg_describe(run, [group])
    ops.describe(run, [group])
    ops.list_groups(run, types=["consumer"])
    ops.cg_heartbeat(run, group, member, -1, version=version)
    ops.cg_describe(run, [group])


def cg_errors(run: Run, version: int) -> None:
    """Unknown member, fenced epochs, bad join requests, an unknown assignor."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, compare=False)
    ops.cg_heartbeat(run, group, new_member_id(1), 5, version=version, topics=[topic])
    ops.cg_heartbeat(run, group, new_member_id(version), 0, version=version, topics=[topic],
                     rebalance_ms=REBALANCE_MS, label="join without topic partitions")
    ops.cg_heartbeat(run, group, new_member_id(version), 0, version=version, topics=[topic])
    ops.cg_heartbeat(run, group, new_member_id(version), 0, version=version,
                     rebalance_ms=REBALANCE_MS)
    ops.cg_heartbeat(run, "", new_member_id(version), 0, version=version, topics=[topic],
                     rebalance_ms=REBALANCE_MS)
    ops.cg_heartbeat(run, group, new_member_id(version), 0, version=version, topics=[topic],
                     rebalance_ms=REBALANCE_MS, assignor="no-such-assignor")
    member, epoch, parts = join_cg(run, group, [topic], version)
    ops.cg_heartbeat(run, group, member, epoch + 1, version=version, owned=parts)
    ops.cg_heartbeat(run, group, member, epoch, version=version, owned=parts)
    ops.cg_heartbeat(run, group, new_member_id(1), -1, version=version)
    ops.cg_describe(run, [group])


def cg_two_members(run: Run, version: int) -> None:
    """A second member joins for one of the first member's two topics: the first revokes
    it, the second then receives it; then the first heartbeats with older epochs."""
    group, t1, t2 = run.group(), run.topic("t1"), run.topic("t2")
    ops.create_topic(run, t1, compare=False)
    ops.create_topic(run, t2, compare=False)
    a, a_epoch, a_parts = join_cg(run, group, [t1, t2], version)
    a_epochs = [a_epoch]
    ops.cg_heartbeat(run, group, a, a_epoch, version=version, owned=a_parts)
    b, b_epoch, b_parts = join_cg(run, group, [t2], version, on="b")
    revoke = ops.cg_heartbeat(run, group, a, a_epoch, version=version, owned=a_parts)
    a_epoch, a_parts = revoke.member_epoch, owned(revoke) or a_parts
    ack = ops.cg_heartbeat(run, group, a, a_epoch, version=version, owned=a_parts)
    a_epoch = ack.member_epoch
    a_epochs += [e for e in (revoke.member_epoch, a_epoch) if e != a_epochs[-1]]
    got = ops.cg_heartbeat(run, group, b, b_epoch, version=version, owned=b_parts, on="b")
    b_epoch, b_parts = got.member_epoch, owned(got) or b_parts
    ops.cg_heartbeat(run, group, b, b_epoch, version=version, owned=b_parts, on="b")
    ops.cg_describe(run, [group])
    if len(a_epochs) >= 2:
        ops.cg_heartbeat(run, group, a, a_epochs[-2], version=version, owned=a_parts,
                         label="previous epoch, owning a subset")
        ops.cg_heartbeat(run, group, a, a_epochs[-2], version=version,
                         owned=[*a_parts, *b_parts], label="previous epoch, owning more")
    ops.cg_heartbeat(run, group, a, 0 if a_epoch > 1 else 5, version=version, owned=a_parts)
    ops.cg_describe(run, [group])
    ops.cg_heartbeat(run, group, b, -1, version=version, on="b")
    ops.cg_describe(run, [group])


def cg_static(run: Run, version: int) -> None:
    """A static member leaves for a while (epoch -2) and comes back under a new member id."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, 2, compare=False)
    member, epoch, parts = join_cg(run, group, [topic], version, instance="inst-1")
    ops.cg_heartbeat(run, group, member, epoch, version=version, owned=parts, instance="inst-1")
    ops.cg_heartbeat(run, group, new_member_id(version), 0, version=version, topics=[topic],
                     instance="inst-1", rebalance_ms=REBALANCE_MS, label="instance in use")
    ops.cg_heartbeat(run, group, member, -2, version=version, instance="inst-1")
    ops.cg_describe(run, [group])
    ops.cg_heartbeat(run, group, new_member_id(version), 0, version=version, topics=[topic],
                     instance="inst-1", rebalance_ms=REBALANCE_MS, label="instance back")
    ops.cg_describe(run, [group])


def test_consumer_group_lifecycle(across: Across) -> None:
    assert across(CONSUMER_GROUP_HEARTBEAT, cg_lifecycle)


def test_consumer_group_heartbeat_errors(across: Across) -> None:
    assert across(CONSUMER_GROUP_HEARTBEAT, cg_errors)


def test_consumer_group_two_members(across: Across) -> None:
    assert across(CONSUMER_GROUP_HEARTBEAT, cg_two_members)


def test_consumer_group_static_member(across: Across) -> None:
    assert across(CONSUMER_GROUP_HEARTBEAT, cg_static)


def cg_assignment_interval(run: Run, version: int) -> None:
    """The group's own consumer.assignment.interval.ms (Kafka 4.3+), 15 s: the first member
    is assigned at once; a second member joining within the interval joins at the first
    target's epoch with no partitions, the group shows Assigning, and a heartbeat of the
    first member within the interval changes nothing."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, 2, compare=False)
    incremental(run, GROUP, group, ("consumer.assignment.interval.ms", SET, "15000"))
    a, a_epoch, a_parts = join_cg(run, group, [topic], version)
    ops.cg_heartbeat(run, group, a, a_epoch, version=version, owned=a_parts)
    ops.cg_describe(run, [group])
    b, b_epoch, b_parts = join_cg(run, group, [topic], version, on="b")
    ops.cg_describe(run, [group])
    ops.list_groups(run, types=["consumer"], states=["Assigning"])
    ops.cg_heartbeat(run, group, a, a_epoch, version=version, owned=a_parts)
    ops.cg_heartbeat(run, group, b, b_epoch, version=version, owned=b_parts, on="b")
    ops.cg_describe(run, [group])
    ops.cg_heartbeat(run, group, b, -1, version=version, on="b")
    ops.cg_heartbeat(run, group, a, -1, version=version)


def test_consumer_group_assignment_interval(across: Across) -> None:
    assert across(CONSUMER_GROUP_HEARTBEAT, cg_assignment_interval)


def cg_regex(run: Run, version: int) -> None:
    """v1+: a regex subscription; Kafka resolves it in the background, so the scenario
    heartbeats (uncompared) until the assignment covers both matching topics."""
    group, t1, t2 = run.group(), run.topic("rx-a"), run.topic("rx-b")
    ops.create_topic(run, t1, compare=False)
    ops.create_topic(run, t2, compare=False)
    ops.create_topic(run, run.topic("other"), compare=False)
    regex = f"{run.prefix}-rx-.*"
    member, epoch, parts = join_cg(run, group, [], version, regex=regex, compare=False)

    def assigned_both() -> bool:
        nonlocal epoch, parts
        answer = ops.cg_heartbeat(run, group, member, epoch, version=version, owned=parts,
                                  compare=False)
        epoch, parts = answer.member_epoch, owned(answer) or parts
        return len(parts) == 2

    run.until("the regex subscription's assignment", assigned_both)
    ops.cg_heartbeat(run, group, member, epoch, version=version, owned=parts)
    ops.cg_describe(run, [group])


def test_consumer_group_regex_subscription(across: Across) -> None:
    assert 1 in across(CONSUMER_GROUP_HEARTBEAT, lambda run, v: cg_regex(run, v) if v >= 1 else None)


def cg_describe_cases(run: Run, version: int) -> None:
    """Unknown groups, a classic group, an empty and a live consumer group."""
    group, classic, topic = run.group(), run.group("classic"), run.topic()
    ops.create_topic(run, topic, compare=False)
    ops.cg_describe(run, [run.group("unknown")], version=version)
    stable_member(run, classic, topic)
    member, epoch, parts = join_cg(run, group, [topic], 1)
    ops.cg_heartbeat(run, group, member, epoch, owned=parts)
    ops.cg_describe(run, [group, classic, run.group("unknown")], version=version)
    ops.cg_heartbeat(run, group, member, -1)
    ops.cg_describe(run, [group], version=version)


def test_consumer_group_describe(across: Across) -> None:
    assert across(CONSUMER_GROUP_DESCRIBE, cg_describe_cases)


def mixed_group_types(run: Run, version: int) -> None:
    """Classic APIs on a consumer group and ConsumerGroupHeartbeat on a classic group."""
    group, classic, topic = run.group(), run.group("classic"), run.topic()
    ops.create_topic(run, topic, compare=False)
    member, epoch, parts = join_cg(run, group, [topic], version)
    ops.cg_heartbeat(run, group, member, epoch, version=version, owned=parts)
    ops.describe(run, [group])
    ops.heartbeat(run, group, epoch, member)
    ops.sync(run, group, epoch, member)
    ops.leave(run, group, [(member, None)])
    ops.list_groups(run)
    ops.list_groups(run, types=["Consumer"], states=["STABLE"])
    ops.delete_groups(run, [group])
    c_member, c_gen = stable_member(run, classic, topic)
    ops.cg_heartbeat(run, classic, new_member_id(version), 0, version=version, topics=[topic],
                     rebalance_ms=REBALANCE_MS)
    ops.cg_describe(run, [classic])
    ops.heartbeat(run, classic, c_gen, c_member)


def test_mixed_classic_and_consumer_group_ids(across: Across) -> None:
    assert across(CONSUMER_GROUP_HEARTBEAT, mixed_group_types)


def consumer_group_offsets(run: Run, version: int) -> None:
    """Commits and fetches of a consumer group's member: its epoch, stale and unknown ones."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, compare=False)
    ids = ops.topic_ids(run, topic)
    member, epoch, parts = join_cg(run, group, [topic], 1)
    ops.cg_heartbeat(run, group, member, epoch, owned=parts)
    ops.commit(run, group, {(topic, 0): 4}, generation=epoch, member_id=member, version=version,
               ids=ids)
    ops.commit(run, group, {(topic, 0): 5}, generation=epoch + 1, member_id=member,
               version=version, ids=ids)
    ops.commit(run, group, {(topic, 0): 6}, generation=epoch - 1, member_id=member,
               version=version, ids=ids)
    ops.commit(run, group, {(topic, 0): 7}, generation=epoch, member_id="nobody",
               version=version, ids=ids)
    ops.commit(run, group, {(topic, 0): 8}, version=version, ids=ids)
    ops.fetch(run, group, {topic: [0]}, ids=ids, member_id=member, member_epoch=epoch)
    ops.fetch(run, group, {topic: [0]}, ids=ids, member_id=member, member_epoch=epoch + 1)
    ops.fetch(run, group, {topic: [0]}, ids=ids, member_id="nobody", member_epoch=epoch)
    ops.fetch(run, group, {topic: [0]}, ids=ids)
    ops.offset_delete(run, group, {topic: [0]})
    ops.delete_groups(run, [group])


def test_consumer_group_offsets(across: Across) -> None:
    assert across(ops.OFFSET_COMMIT, consumer_group_offsets)
