"""Group APIs: the wire side of the group coordinator.

The coordinator is pure; this module hands it each request with the clock,
persists the records it returns, then releases every response it produced
(its own and those of requests that were waiting, e.g. a JoinGroup barrier).
"""

from __future__ import annotations

from typing import Any

import trio

from kcsim.coordinator import SUPPORTED_VERSIONS

from ..context import Durable
from ..dispatch import serves


def handle_group_request(broker: Any, ctx: Any, request: Any) -> Any:
    outcome = broker.groups.handle(ctx.api_key, ctx.api_version, request, ctx, broker.clock_ms())
    broker.wake_timer()
    responses = outcome.responses
    if len(responses) == 1 and responses[0][0] is ctx:
        if not outcome.records:
            return responses[0][1]
        return Durable(responses[0][1], outcome.records, [])
    own = [r for t, r in responses if t is ctx]
    if own:
        return Durable(own[0], outcome.records, [(t, r) for t, r in responses if t is not ctx])
    ctx.waiter = trio.Event()
    return _complete(broker, ctx, outcome)


async def _complete(broker: Any, ctx: Any, outcome: Any) -> Any:
    try:
        await broker.deliver(outcome)
        await ctx.waiter.wait()
    finally:
        if not ctx.waiter.is_set():
            broker.groups.cancel(ctx)
    return ctx.response


for _key, (_lo, _hi) in SUPPORTED_VERSIONS.items():
    serves(_key, _lo, _hi)(handle_group_request)
