"""Listing, describing and deleting groups (ListGroups, ConsumerGroupDescribe/DescribeGroups,
DeleteGroups)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class
from kcsim.protocol.consumer_protocol import decode_assignment
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.primitives import DecodeError

from .coordinators import for_each_group
from .effects import Gather, Step
from .errors import AdminError
from .results import (
    GroupDescription,
    GroupListing,
    MemberDescription,
    Node,
    Outcomes,
    TopicPartition,
)
from .topic_ops import metadata
from .wire import negotiate

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .calls import Call

LIST_GROUPS = 16
DESCRIBE_GROUPS = 15
DELETE_GROUPS = 42
CONSUMER_GROUP_DESCRIBE = 69
ListGroupsRequest = request_class(LIST_GROUPS)
DescribeGroupsRequest = request_class(DESCRIBE_GROUPS)
DeleteGroupsRequest = request_class(DELETE_GROUPS)

STATES_FILTER_VERSION = 4
TYPES_FILTER_VERSION = 5
CLASSIC, CONSUMER = "classic", "consumer"
CONSUMER_PROTOCOL = "consumer"
GROUP_STATES = ("Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Assigning",
                "Reconciling", "NotReady", "Dead")
_CANONICAL_STATE = {s.lower(): s for s in GROUP_STATES}


def canonical_state(state: str) -> str:
    """Kafka's spelling of a group state (brokers and users vary in case)."""
    return _CANONICAL_STATE.get(state.strip().lower(), state)


def list_groups(
    call: Call, states: Iterable[str] = (), types: Iterable[str] = (),
    protocol_types: Iterable[str] = (),
) -> Step[list[GroupListing]]:
    """Every group every broker coordinates, filtered by state, type and protocol type."""
    states = [canonical_state(s) for s in states]
    types = [t.strip().lower() for t in types]
    wanted_protocols = set(protocol_types)
    cluster = yield from metadata(call, [])
    nodes = cluster.brokers or (None,)
    outcomes = yield Gather(tuple(
        call.retrying(partial(_list_groups_on, call, node, states, types)) for node in nodes))
    listings: dict[str, GroupListing] = {}
    for outcome in outcomes:
        if isinstance(outcome, AdminError):
            raise outcome
        for listing in outcome:
            if not wanted_protocols or listing.protocol_type in wanted_protocols:
                listings[listing.group_id] = listing
    return sorted(listings.values(), key=lambda g: g.group_id)


def _list_groups_on(
    call: Call, node: Node | None, states: list[str], types: list[str]
) -> Step[list[GroupListing]]:
    served = yield call.served(node)
    version = negotiate(served, LIST_GROUPS, 0, 5)
    if version is None:
        raise AdminError(ErrorCode.UNSUPPORTED_VERSION, "the broker does not serve ListGroups")
    if states and version < STATES_FILTER_VERSION:
        raise AdminError(ErrorCode.UNSUPPORTED_VERSION,
                         "the broker cannot filter groups by state (ListGroups v4 needed)")

    def build(v: int) -> Any:
        return ListGroupsRequest(states_filter=states, types_filter=types)

    reply = yield call.send(node, LIST_GROUPS, build, (0, 5))
    body = reply.body
    if body.error_code:
        raise AdminError(body.error_code)
    out = []
    for g in body.groups:
        state = canonical_state(g.group_state) if reply.version >= STATES_FILTER_VERSION else None
        kind = g.group_type.lower() if reply.version >= TYPES_FILTER_VERSION else CLASSIC
        if types and kind not in types:
            continue  # a broker too old to filter by type: every group it has is classic
        out.append(GroupListing(g.group_id, g.protocol_type, state, kind))
    return out


def describe_groups(call: Call, groups: Iterable[str]) -> Step[Outcomes[str, GroupDescription]]:
    """Each group's state and members; consumer groups (KIP-848) first, classic ones after."""
    outcomes = yield from for_each_group(call, groups, lambda node, gs: _describe_on(call, node, gs),
                                         batched=True)
    return Outcomes(outcomes)


def _describe_on(call: Call, node: Node, groups: list[str]) -> Step[dict[str, Any]]:
    served = yield call.served(node)
    out: dict[str, Any] = {}
    classic = list(groups)
    if negotiate(served, CONSUMER_GROUP_DESCRIBE, 0, 1) is not None:
        out = yield from _consumer_group_describe(call, node, groups)
        # Kafka answers GROUP_ID_NOT_FOUND for a group of the other protocol: ask again classically.
        classic = [g for g in groups if _is_error(out.get(g), ErrorCode.GROUP_ID_NOT_FOUND)]
    if classic:
        found = yield from _classic_describe(call, node, classic)
        out.update(found)
    return out


def _is_error(outcome: Any, code: int) -> bool:
    return isinstance(outcome, AdminError) and outcome.code == code


def describe_each(
    call: Call, node: Node, api_key: int, versions: tuple[int, int], groups: list[str],
    parse: Callable[[Any, Node], Any],
) -> Step[dict[str, Any]]:
    """A KIP-848-style describe (ConsumerGroupDescribe, StreamsGroupDescribe) of `groups` on
    their coordinator: each group's description as `parse` makes it, or its error."""
    cls = request_class(api_key)

    def build(version: int) -> Any:
        return cls(group_ids=groups, include_authorized_operations=False)

    reply = yield call.send(node, api_key, build, versions)
    return {g.group_id: AdminError(g.error_code, g.error_message) if g.error_code
            else parse(g, node) for g in reply.body.groups}


def _consumer_group_describe(call: Call, node: Node, groups: list[str]) -> Step[dict[str, Any]]:
    return describe_each(call, node, CONSUMER_GROUP_DESCRIBE, (0, 1), groups, _consumer_group)


def _consumer_group(g: Any, node: Node) -> GroupDescription:
    members = tuple(
        MemberDescription(
            member_id=m.member_id, client_id=m.client_id, host=m.client_host,
            group_instance_id=m.instance_id,
            assignment=_assigned(m.assignment), target_assignment=_assigned(m.target_assignment),
            member_epoch=m.member_epoch)
        for m in g.members)
    return GroupDescription(
        group_id=g.group_id, state=canonical_state(g.group_state), type=CONSUMER,
        protocol_type=CONSUMER_PROTOCOL, assignment_strategy=g.assignor_name,
        coordinator=node, members=members, group_epoch=g.group_epoch,
        target_assignment_epoch=g.assignment_epoch)


def _assigned(assignment: Any) -> tuple[TopicPartition, ...]:
    if assignment is None:
        return ()
    return tuple(sorted(TopicPartition(t.topic_name, p)
                        for t in assignment.topic_partitions for p in t.partitions))


def _classic_describe(call: Call, node: Node, groups: list[str]) -> Step[dict[str, Any]]:
    def build(version: int) -> Any:
        return DescribeGroupsRequest(groups=groups, include_authorized_operations=False)

    reply = yield call.send(node, DESCRIBE_GROUPS, build, (0, 6))
    out: dict[str, Any] = {}
    for g in reply.body.groups:
        if g.error_code:
            out[g.group_id] = AdminError(g.error_code, getattr(g, "error_message", None))
        elif canonical_state(g.group_state) == "Dead" and not g.members:
            # Before v6 a broker describes a group it does not know as Dead.
            out[g.group_id] = AdminError(ErrorCode.GROUP_ID_NOT_FOUND,
                                         f"Group {g.group_id} not found.")
        else:
            members = tuple(
                MemberDescription(
                    member_id=m.member_id, client_id=m.client_id, host=m.client_host,
                    group_instance_id=getattr(m, "group_instance_id", None),
                    assignment=_classic_assignment(g.protocol_type, m.member_assignment))
                for m in g.members)
            out[g.group_id] = GroupDescription(
                group_id=g.group_id, state=canonical_state(g.group_state), type=CLASSIC,
                protocol_type=g.protocol_type, assignment_strategy=g.protocol_data,
                coordinator=node, members=members)
    return out


def _classic_assignment(protocol_type: str, raw: bytes) -> tuple[TopicPartition, ...]:
    """A consumer member's assignment; other protocols' bytes are opaque to us."""
    if protocol_type != CONSUMER_PROTOCOL or not raw:
        return ()
    try:
        assignment = decode_assignment(raw)
    except DecodeError:
        return ()
    return tuple(sorted(TopicPartition(t.topic, p)
                        for t in assignment.assigned_partitions for p in t.partitions))


def delete_groups(call: Call, groups: Iterable[str]) -> Step[Outcomes[str, None]]:
    outcomes = yield from for_each_group(call, groups, lambda node, gs: _delete_on(call, node, gs),
                                         batched=True)
    return Outcomes(outcomes)


def _delete_on(call: Call, node: Node, groups: list[str]) -> Step[dict[str, Any]]:
    def build(version: int) -> Any:
        return DeleteGroupsRequest(groups_names=groups)

    reply = yield call.send(node, DELETE_GROUPS, build, (0, 2))
    return {r.group_id: AdminError(r.error_code) if r.error_code else None
            for r in reply.body.results}
