"""Requests sent to the wrong node, when one kcsim plays several brokers: Kafka's answers.

The dispatcher of a several-broker kcsim serves its routes through these guards (`placed`);
one broker's routes are left as they are, so it pays nothing for them. Which node
leads or coordinates what is the state's topology (`state/topology.py`); the node a
request reached is its listener's (`RequestContext.listener.node`).

- A request naming a group (the group APIs, TxnOffsetCommit) or a transactional id
  (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, DescribeTransactions, a transactional
  InitProducerId) at a node that does not coordinate it is answered NOT_COORDINATOR, and
  COORDINATOR_LOAD_IN_PROGRESS while its new coordinator loads: as a whole, or, by an
  API answering each group on its own (DescribeGroups, DeleteGroups, OffsetFetch v8+,
  ConsumerGroupDescribe, StreamsGroupDescribe) or DescribeTransactions, for those
  groups or ids only, the others served here.
- Produce, Fetch, ListOffsets, ShareFetch and ShareAcknowledge serve the partitions led here
  (and a consumer's Fetch v11+ those this node is a replica of: KIP-392's fetch from a
  follower, which Kafka allows once the request carries the client's rack); every other
  partition is answered NOT_LEADER_OR_FOLLOWER, with its leader (CurrentLeader) and the leaders'
  addresses (NodeEndpoints) in the versions that carry them (KIP-951). A Fetch with such
  a partition does not wait for data, so the client hears at once.
- ListGroups and ListTransactions list what this node coordinates, as each of Kafka's
  brokers does.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from kcsim.coordinator.failures import answered_per_group, merge_groups, split_groups
from kcsim.protocol.error_answers import error_answer
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.messages.fetch import FetchResponse
from kcsim.protocol.messages.list_offsets import ListOffsetsResponse
from kcsim.protocol.messages.produce import ProduceResponse
from kcsim.protocol.messages.share_group import ShareAcknowledgeResponse, ShareFetchResponse
from kcsim.protocol.named_groups import groups_of

from ..state.answers import finished
from ..state.routing import node_address
from ..state.topology import GROUP_KEY, TRANSACTION_KEY

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..state.broker_state import BrokerState
    from ..state.topology import Topology
    from .context import RequestContext
    from .routes import Route

    Handler = Callable[[BrokerState, RequestContext, Any], Any]

PRODUCE, FETCH, LIST_OFFSETS, LIST_GROUPS = 0, 1, 2, 16
SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79
INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN = 22, 24, 25, 26
TXN_OFFSET_COMMIT, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = 28, 65, 66
NOT_LEADER = int(ErrorCode.NOT_LEADER_OR_FOLLOWER)


def placed(routes: dict[int, Route]) -> dict[int, Route]:
    """The routes of a several-broker kcsim: each guarded as the module doc says."""
    out = dict(routes)
    for key, route in routes.items():
        guard: Handler | None = None
        if key in _SHAPES:
            guard = _led(route.fn, _SHAPES[key])
        elif key in (LIST_GROUPS, LIST_TRANSACTIONS):
            guard = _listed_here(route.fn, key)
        elif route.group or key == TXN_OFFSET_COMMIT:
            guard = _coordinated(route.fn, groups_of, GROUP_KEY)
        elif key in (INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN,
                     DESCRIBE_TRANSACTIONS):
            guard = _coordinated(route.fn, _transactional_ids, TRANSACTION_KEY)
        if guard is not None:
            out[key] = dataclasses.replace(route, fn=guard)
    return out


def _topology(state: BrokerState) -> Topology:
    topology = state.topology
    assert topology is not None, "placed routes serve a several-broker kcsim"
    return topology


# -- coordinators -----------------------------------------------------------------------


def _transactional_ids(request: Any) -> tuple[str, ...]:
    one = getattr(request, "transactional_id", None) or getattr(
        request, "v3_and_below_transactional_id", None)
    if one:
        return (one,)
    many = getattr(request, "transactional_ids", None)
    if many:
        return tuple(many)
    return tuple(t.transactional_id for t in getattr(request, "transactions", ()) or ())


def _coordinated(fn: Handler, keys_of: Callable[[Any], tuple[str, ...]],
                 key_type: int) -> Handler:
    def guarded(state: BrokerState, ctx: RequestContext, request: Any) -> Any:
        topology = _topology(state)
        node = ctx.listener.node
        errors: dict[str, ErrorCode] = {}
        for key in keys_of(request):
            if topology.coordinator(key, key_type) != node:
                errors[key] = ErrorCode.NOT_COORDINATOR
            elif topology.loading(key, key_type, state.now_ms):
                errors[key] = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if not errors:
            return fn(state, ctx, request)
        api_key, version = ctx.api_key, ctx.api_version
        if api_key == DESCRIBE_TRANSACTIONS:
            return _per_transactional_id(fn, state, ctx, request, errors)
        if key_type != GROUP_KEY or not answered_per_group(api_key, version):
            return error_answer(api_key, version, request, int(next(iter(errors.values()))))
        return _per_group(fn, state, ctx, request, errors)
    return guarded


def _per_transactional_id(fn: Handler, state: BrokerState, ctx: RequestContext, request: Any,
                          errors: dict[str, ErrorCode]) -> Any:
    """DescribeTransactions naming ids coordinated elsewhere or loading: each of those
    answered with its error, the rest served here, in the request's order."""
    api_key, version = ctx.api_key, ctx.api_version
    ids = list(request.transactional_ids)
    blank: Any = error_answer(api_key, version, request, 0)
    answered = {t.transactional_id: t for t in blank.transaction_states
                if t.transactional_id in errors}
    for t in answered.values():
        t.error_code = int(errors[t.transactional_id])
    here = [i for i in ids if i not in errors]

    def merged(served: Any) -> Any:
        by_id = {t.transactional_id: t for t in served.transaction_states}
        served.transaction_states = [answered.get(i) or by_id[i] for i in ids]
        return served

    if not here:
        return merged(blank)
    return finished(fn(state, ctx, msgspec.structs.replace(request, transactional_ids=here)),
                    merged)


def _per_group(fn: Handler, state: BrokerState, ctx: RequestContext, request: Any,
               errors: dict[str, ErrorCode]) -> Any:
    """A request naming several groups, some coordinated elsewhere or loading: each of
    those answered with its error, the rest served here, as Kafka answers per group."""
    api_key, version = ctx.api_key, ctx.api_version
    here, rest = split_groups(api_key, version, request, errors)
    answers = []
    for error in dict.fromkeys(errors.values()):
        _, these = split_groups(api_key, version, rest,
                                [g for g, e in errors.items() if e == error])
        answers.append(error_answer(api_key, version, these, int(error)))
    if here is None:
        return merge_groups(api_key, version, request, *answers)
    return finished(fn(state, ctx, here),
                    lambda served: merge_groups(api_key, version, request, served, *answers))


def _listed_here(fn: Handler, key: int) -> Handler:
    field, name, key_type = (("groups", "group_id", GROUP_KEY) if key == LIST_GROUPS
                             else ("transaction_states", "transactional_id", TRANSACTION_KEY))

    def here(state: BrokerState, ctx: RequestContext, response: Any) -> Any:
        topology = _topology(state)
        node = ctx.listener.node
        setattr(response, field, [x for x in getattr(response, field)
                                   if topology.coordinator(getattr(x, name), key_type) == node])
        return response

    def listed(state: BrokerState, ctx: RequestContext, request: Any) -> Any:
        return finished(fn(state, ctx, request), lambda response: here(state, ctx, response))
    return listed


# -- partition leaders ----------------------------------------------------------------------


class _Shape(NamedTuple):
    """Where an API's request and response name their topics and partitions."""

    topics: str  # the request's list of topics
    topic: str  # a request topic's name
    partitions: str  # a request topic's list of partitions
    number: str  # a request partition's index
    answers: str  # the response's list of topics
    away: Callable[[int, Any, str, list[tuple[int, int]]], Any]  # a topic's errors


def _produce_away(version: int, topic: Any, name: str, led: list[tuple[int, int]]) -> Any:
    R = ProduceResponse
    return R.TopicProduceResponse(name=name, topic_id=topic.topic_id, partition_responses=[
        R.PartitionProduceResponse(index=i, error_code=NOT_LEADER, base_offset=-1,
                                   current_leader=R.LeaderIdAndEpoch(leader_id=n, leader_epoch=0))
        for i, n in led])


def _fetch_away(version: int, topic: Any, name: str, led: list[tuple[int, int]]) -> Any:
    R = FetchResponse
    return R.FetchableTopicResponse(topic=name, topic_id=topic.topic_id, partitions=[
        R.PartitionData(partition_index=i, error_code=NOT_LEADER, high_watermark=-1,
                        current_leader=R.LeaderIdAndEpoch(leader_id=n, leader_epoch=0))
        for i, n in led])


def _list_offsets_away(version: int, topic: Any, name: str, led: list[tuple[int, int]]) -> Any:
    R = ListOffsetsResponse
    return R.ListOffsetsTopicResponse(name=name, partitions=[
        R.ListOffsetsPartitionResponse(partition_index=i, error_code=NOT_LEADER)
        for i, _ in led])


def _share_fetch_away(version: int, topic: Any, name: str, led: list[tuple[int, int]]) -> Any:
    R = ShareFetchResponse
    return R.ShareFetchableTopicResponse(topic_id=topic.topic_id, partitions=[
        R.PartitionData(partition_index=i, error_code=NOT_LEADER,
                        current_leader=R.LeaderIdAndEpoch(leader_id=n, leader_epoch=0))
        for i, n in led])


def _share_acknowledge_away(version: int, topic: Any, name: str,
                            led: list[tuple[int, int]]) -> Any:
    R = ShareAcknowledgeResponse
    return R.ShareAcknowledgeTopicResponse(topic_id=topic.topic_id, partitions=[
        R.PartitionData(partition_index=i, error_code=NOT_LEADER,
                        current_leader=R.LeaderIdAndEpoch(leader_id=n, leader_epoch=0))
        for i, n in led])


_SHAPES = {
    PRODUCE: _Shape("topic_data", "name", "partition_data", "index", "responses", _produce_away),
    FETCH: _Shape("topics", "topic", "partitions", "partition", "responses", _fetch_away),
    LIST_OFFSETS: _Shape("topics", "name", "partitions", "partition_index", "topics",
                         _list_offsets_away),
    # KIP-932's calls name topics by id only ("": no name field)
    SHARE_FETCH: _Shape("topics", "", "partitions", "partition_index", "responses",
                        _share_fetch_away),
    SHARE_ACKNOWLEDGE: _Shape("topics", "", "partitions", "partition_index", "responses",
                              _share_acknowledge_away),
}


def _led(fn: Handler, shape: _Shape) -> Handler:
    def guarded(state: BrokerState, ctx: RequestContext, request: Any) -> Any:
        topology = _topology(state)
        node = ctx.listener.node
        kept: list[Any] = []
        away: list[Any] = []
        leaders: set[int] = set()
        replicas_serve = shape is _SHAPES[FETCH] and _from_a_consumer(ctx.api_version, request)
        for topic in getattr(request, shape.topics):
            name = (shape.topic and getattr(topic, shape.topic)) or _name_by_id(state, topic)
            partitions = getattr(topic, shape.partitions)
            if name is None:
                kept.append(topic)  # unknown: the handler says so
                continue
            here = []
            elsewhere = []
            for p in partitions:
                index = getattr(p, shape.number)
                leader = topology.leader(name, index)
                if leader == node or (replicas_serve and node in topology.replicas(name, index)):
                    here.append(p)
                else:
                    elsewhere.append((index, leader))
                    leaders.add(leader)
            if not elsewhere:
                kept.append(topic)
                continue
            if here:
                kept.append(msgspec.structs.replace(topic, **{shape.partitions: here}))
            away.append(shape.away(ctx.api_version, topic, name, elsewhere))
        if not away:
            return fn(state, ctx, request)
        changes: dict[str, Any] = {shape.topics: kept}
        if shape is _SHAPES[FETCH] or shape is _SHAPES[SHARE_FETCH]:
            changes["max_wait_ms"] = 0
        result = fn(state, ctx, msgspec.structs.replace(request, **changes))
        endpoints = [node_address(topology, n, ctx.listener) for n in sorted(leaders)]
        return finished(result, lambda response: _merged(response, shape, away, endpoints))
    return guarded


def _from_a_consumer(version: int, request: Any) -> bool:
    """A Fetch v11+ (it carries the client's rack) from a consumer, not a replica: one that
    Kafka's followers serve (KIP-392)."""
    if version < 11:
        return False
    state = getattr(request, "replica_state", None) if version >= 15 else None
    replica = state.replica_id if state is not None else request.replica_id
    return bool(replica < 0)


def _name_by_id(state: BrokerState, topic: Any) -> str | None:
    topic_id = getattr(topic, "topic_id", None)
    found = state.topics.by_id.get(topic_id) if topic_id is not None else None
    return None if found is None else str(found.name)


def _merged(response: Any, shape: _Shape, away: list[Any],
            endpoints: list[tuple[int, str, int]]) -> Any:
    """The response with the partitions led elsewhere answered too, each in its topic's
    entry when the response has one."""
    answers = getattr(response, shape.answers)
    for topic in away:
        same = next((t for t in answers if _same_topic(t, topic)), None)
        if same is None:
            answers.append(topic)
        else:
            _partitions_of(same).extend(_partitions_of(topic))
    if hasattr(response, "node_endpoints"):
        cls = type(response).NodeEndpoint
        response.node_endpoints = [cls(node_id=n, host=h, port=p, rack=None)
                                   for n, h, p in endpoints]
    return response


def _same_topic(a: Any, b: Any) -> bool:
    a_name = getattr(a, "name", None) or getattr(a, "topic", None)
    b_name = getattr(b, "name", None) or getattr(b, "topic", None)
    a_id, b_id = getattr(a, "topic_id", None), getattr(b, "topic_id", None)
    return bool(a_name and a_name == b_name) or (a_id is not None and a_id == b_id
                                                  and a_id.int != 0)


def _partitions_of(topic: Any) -> list[Any]:
    parts: list[Any] = (topic.partition_responses if hasattr(topic, "partition_responses")
                        else topic.partitions)
    return parts
