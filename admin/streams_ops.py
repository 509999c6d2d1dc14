"""Describing streams groups (KIP-1071's StreamsGroupDescribe).

The rest of what a tool does with a streams group goes through the calls every group
kind shares, as Kafka's Admin does: ListGroups with type "streams", DeleteGroups,
OffsetFetch, OffsetCommit and OffsetDelete by group id, and KIP-1249's pause RPCs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.errors import ErrorCode

from .coordinators import for_each_group
from .errors import AdminError
from .group_ops import canonical_state, describe_each
from .results import (
    Node,
    Outcomes,
    StreamsGroupDescription,
    StreamsMemberDescription,
    Subtopology,
    TaskAssignment,
    TaskIds,
)
from .wire import negotiate

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .calls import Call
    from .effects import Step

STREAMS_GROUP_DESCRIBE = 89


def describe_streams_groups(
    call: Call, groups: Iterable[str]
) -> Step[Outcomes[str, StreamsGroupDescription]]:
    """Each streams group's state, topology, members and their tasks; GROUP_ID_NOT_FOUND for
    a group that does not exist or is of another kind."""
    outcomes = yield from for_each_group(call, groups, lambda node, gs: _describe_on(call, node, gs),
                                         batched=True)
    return Outcomes(outcomes)


def _describe_on(call: Call, node: Node, groups: list[str]) -> Step[dict[str, Any]]:
    served = yield call.served(node)
    if negotiate(served, STREAMS_GROUP_DESCRIBE, 0, 1) is None:
        raise AdminError(ErrorCode.UNSUPPORTED_VERSION,
                         "the broker does not serve StreamsGroupDescribe (streams groups)")

    return (yield from describe_each(call, node, STREAMS_GROUP_DESCRIBE, (0, 1), groups,
                                     _streams_group))


def _streams_group(g: Any, node: Node) -> StreamsGroupDescription:
    topology = g.topology
    return StreamsGroupDescription(
        group_id=g.group_id, state=canonical_state(g.group_state), group_epoch=g.group_epoch,
        target_assignment_epoch=g.assignment_epoch, coordinator=node,
        topology_epoch=topology.epoch if topology is not None else -1,
        subtopologies=tuple(_subtopology(s) for s in (topology.subtopologies or ()))
        if topology is not None else (),
        members=tuple(_member(m) for m in g.members), assignor=g.assignor_name)


def _subtopology(s: Any) -> Subtopology:
    return Subtopology(
        subtopology_id=s.subtopology_id, source_topics=tuple(s.source_topics),
        repartition_sink_topics=tuple(s.repartition_sink_topics),
        repartition_source_topics={t.name: t.partitions for t in s.repartition_source_topics},
        state_changelog_topics={t.name: t.partitions for t in s.state_changelog_topics})


def _tasks(ids: Any) -> tuple[TaskIds, ...]:
    return tuple(TaskIds(t.subtopology_id, tuple(t.partitions)) for t in ids or ())


def _assignment(a: Any) -> TaskAssignment:
    if a is None:
        return TaskAssignment()
    return TaskAssignment(_tasks(a.active_tasks), _tasks(a.standby_tasks), _tasks(a.warmup_tasks))


def _member(m: Any) -> StreamsMemberDescription:
    return StreamsMemberDescription(
        member_id=m.member_id, member_epoch=m.member_epoch, client_id=m.client_id,
        host=m.client_host, process_id=m.process_id, topology_epoch=m.topology_epoch,
        instance_id=m.instance_id, rack_id=m.rack_id, assignment=_assignment(m.assignment),
        target_assignment=_assignment(m.target_assignment), is_classic=m.is_classic)
