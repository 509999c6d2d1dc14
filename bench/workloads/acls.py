"""The cost of the authorizer's check, in process, with 1,000 ACLs (literal, prefixed and
wildcard ones, for 100 principals, among them the grants of the principal asking). The
headline is what the request layer adds to one OffsetCommit its ACLs allow (its group and
its topic checked, through `requests/access.py`, with a handler that does nothing): what
each request pays once the ACLs are still. Beside it, one check through
`Authorizer.authorize` (a decision already cached) and what a decision costs when the ACLs
just changed (read from the index).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class
from kcsim.server.acl.authorizer import Authorizer
from kcsim.server.acl.index import AclIndex
from kcsim.server.acl.model import AclBinding, Operation, PatternType, Permission, ResourceType
from kcsim.server.requests.access import ACCESS, served

from ..registry import Figure, at_most, workload

if TYPE_CHECKING:
    from ..harness import RunContext

ACLS = 1000
TARGET_US = 1.0
PRINCIPAL, HOST = "User:app-7", "10.0.0.7"
REPEATS = 5  # the best of: other processes' load falls on some rounds


def acls(count: int = ACLS) -> AclIndex:
    """`count` ACLs across topics and groups: per topic and group for 100 principals, a
    prefix per team, and wildcard reads; `PRINCIPAL` may read its team's topics and groups."""
    index = AclIndex()
    for kind in (ResourceType.TOPIC, ResourceType.GROUP):
        index.add(AclBinding(kind, "team-7-", PatternType.PREFIXED, PRINCIPAL, "*",
                             Operation.READ, Permission.ALLOW))
    kinds = (ResourceType.TOPIC, ResourceType.GROUP)
    i = 0
    while len(index) < count:
        kind = kinds[i % 2]
        pattern = PatternType.PREFIXED if i % 5 == 0 else PatternType.LITERAL
        name = f"team-{i % 37}-" if pattern is PatternType.PREFIXED else f"orders-{i}"
        index.add(AclBinding(kind, name, pattern, f"User:app-{i % 100}", "*",
                             Operation.READ if i % 3 else Operation.WRITE,
                             Permission.DENY if i % 50 == 0 else Permission.ALLOW))
        i += 1
    index.add(AclBinding(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:*", "*",
                         Operation.DESCRIBE, Permission.ALLOW))
    return index


def _best_ns(fn: Any, n: int) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter_ns()
        fn(n)
        best = min(best, (time.perf_counter_ns() - start) / n)
    return best


class _Ctx:
    api_key, api_version, principal, client_host = 8, 8, PRINCIPAL, HOST


class _State:
    topics = None


def _offset_commit() -> Any:
    cls = request_class(8)
    return cls(group_id="team-7-app", generation_id_or_member_epoch=1, member_id="m",
               group_instance_id=None, topics=[cls.OffsetCommitRequestTopic(
                   name="team-7-orders", partitions=[cls.OffsetCommitRequestPartition(
                       partition_index=0, committed_offset=1)])])


@workload("acl_check", "acls", order=95, in_process=True)
def acl_check(ctx: RunContext) -> list[Figure]:
    """One ACL check and one OffsetCommit's checks with 1,000 ACLs, in process."""
    if "kcsim" not in ctx.sides:
        return []
    index = acls()
    authorizer = Authorizer(index)
    topic, read = ResourceType.TOPIC, Operation.READ
    names = [f"team-{i % 37}-orders" for i in range(64)]
    authorize, decide = authorizer.authorize, authorizer.decide

    def cached(n: int) -> None:
        for i in range(n):
            authorize(PRINCIPAL, HOST, read, topic, names[i & 63])

    def uncached(n: int) -> None:
        for i in range(n):
            decide(PRINCIPAL, HOST, read, topic, names[i & 63])

    check, request, state, rctx = ACCESS[8], _offset_commit(), _State(), _Ctx()
    assert check(authorizer, rctx, request, state) is None, "the OffsetCommit is refused"  # type: ignore[arg-type]

    def handler(state: Any, ctx: Any, request: Any) -> None:
        return None

    def per_request(n: int) -> None:
        for _ in range(n):
            served(check, authorizer, handler, state, rctx, request)  # type: ignore[arg-type]

    def handler_only(n: int) -> None:
        for _ in range(n):
            handler(state, rctx, request)

    ctx.log(f"acl_check: {len(index)} ACLs, best of {REPEATS} rounds")
    check_ns = _best_ns(cached, 200_000)
    decide_ns = _best_ns(uncached, 20_000)
    request_ns = _best_ns(per_request, 100_000) - _best_ns(handler_only, 100_000)
    shape = f"{len(index)} ACLs, in process"
    return [
        Figure("acl_check", f"OffsetCommit's checks (group and topic) per request ({shape})",
               "µs", request_ns / 1000, None, at_most(TARGET_US, "µs")),
        Figure("acl_check", "  one ACL check, decision cached", "µs", check_ns / 1000, None),
        Figure("acl_check", "  one decision read from the ACL index (after a change)", "µs",
               decide_ns / 1000, None),
    ]
