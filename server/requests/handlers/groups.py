"""Group APIs: the wire side of the group coordinator.

The coordinator is pure: it takes the request and the time and returns an
Outcome (responses, records). The request's own answer goes out once the
records are durable; answers of parked requests it completed (a JoinGroup
barrier) are released at that point too. A request the change did not answer
yet parks until a later request or the timer completes it.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import trio

from kcsim.coordinator import SUPPORTED_VERSIONS
from kcsim.protocol.error_answers import error_answer
from kcsim.protocol.errors import ErrorCode

from ...state.answers import Durable, Pending
from ...state.config_defs import ConfigProblem
from ...state.failures import log_failures
from ...state.topic_configs import check_topic_configs
from ...state.topics import topic_name_problem
from ..routes import serves
from .topic_admin import topic_record

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kcsim.coordinator.shared.interface import NewTopic
    from kcsim.storage.records import Record

    from ...state.broker_state import BrokerState as Broker
    from ..context import RequestContext


CONSUMER_GROUP_HEARTBEAT = 68
SHARE_GROUP_HEARTBEAT = 76
STREAMS_GROUP_HEARTBEAT = 88


def handle_group_request(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    if ctx.api_key == CONSUMER_GROUP_HEARTBEAT and not _consumer_groups_on(broker):
        return error_answer(ctx.api_key, ctx.api_version, request, ErrorCode.UNSUPPORTED_VERSION)
    if (ctx.api_key == SHARE_GROUP_HEARTBEAT
            and broker.config.feature_levels.get("share.version", 0) < 1):
        return error_answer(ctx.api_key, ctx.api_version, request, ErrorCode.UNSUPPORTED_VERSION)
    groups = broker.groups
    assert groups is not None
    outcome = groups.handle(ctx.api_key, ctx.api_version, request, ctx, broker.now_ms)
    if outcome.new_topics:  # a streams group's internal topics, created before its records
        outcome.records[:0] = _create_topics(broker, outcome.new_topics)
    if outcome.failures:
        log_failures(outcome.failures, f"from client {ctx.client_id!r} at {ctx.client_host}")
    responses = outcome.responses
    if len(responses) == 1 and responses[0][0] is ctx:
        if not outcome.records:
            return responses[0][1]
        return Durable(responses[0][1], outcome.records, [])
    own = [r for t, r in responses if t is ctx]
    if own:
        return Durable(own[0], outcome.records, [(t, r) for t, r in responses if t is not ctx])
    ctx.waiter = trio.Event()
    return Pending(_parked(broker, ctx), outcome.records, responses,
                   abandon=lambda: groups.cancel(ctx))


def _consumer_groups_on(broker: Broker) -> bool:
    """KIP-848 groups need group.version >= 1; pinned to 0 (`--feature group.version=0`),
    ConsumerGroupHeartbeat answers UNSUPPORTED_VERSION, as Kafka's does."""
    return broker.config.feature_levels.get("group.version", 0) >= 1


def handle_streams_heartbeat(broker: Broker, ctx: RequestContext, request: Any) -> Any:
    """KIP-1071 groups need streams.version >= 1 (`--feature streams.version=0` turns them
    off: StreamsGroupHeartbeat answers UNSUPPORTED_VERSION, as Kafka's does)."""
    if broker.config.feature_levels.get("streams.version", 0) < 1:
        return error_answer(ctx.api_key, ctx.api_version, request, ErrorCode.UNSUPPORTED_VERSION)
    return handle_group_request(broker, ctx, request)


def _create_topics(broker: Broker, wanted: Sequence[NewTopic]) -> list[Record]:
    """The topics a streams group asked for (its internal topics), created as CreateTopics
    would, with the configs of theirs kcsim knows: the records, already applied."""
    records = []
    for topic in wanted:
        if broker.topics.get(topic.name) is not None or topic_name_problem(topic.name):
            continue
        configs = {}
        for name, value in topic.configs.items():
            try:
                check_topic_configs({name: value})
            except ConfigProblem:
                continue
            configs[name] = value
        record = topic_record(topic.name, uuid.uuid4(), topic.partitions, configs)
        broker.apply(record)
        records.append(record)
    return records


async def _parked(broker: Broker, ctx: RequestContext) -> Any:
    """Wait for a parked request's answer; a connection gone meanwhile withdraws it."""
    assert ctx.waiter is not None
    try:
        await ctx.waiter.wait()
    finally:
        if not ctx.waiter.is_set() and broker.groups is not None:
            broker.groups.cancel(ctx)
    return ctx.response


TXN_OFFSET_COMMIT = 28  # checked against its transaction first (handlers/transactions.py)

for _key, (_lo, _hi) in SUPPORTED_VERSIONS.items():
    if _key not in (TXN_OFFSET_COMMIT, STREAMS_GROUP_HEARTBEAT):
        serves(_key, _lo, _hi, group=True)(handle_group_request)
serves(STREAMS_GROUP_HEARTBEAT, *SUPPORTED_VERSIONS[STREAMS_GROUP_HEARTBEAT],
       group=True)(handle_streams_heartbeat)
