"""Which rights each API needs, and what a request lacking them is answered: Kafka's
KafkaApis (and AuthHelper), as a table.

Only with an authorizer (`--authorizer`): the dispatcher then asks `ACCESS[api_key]`
before the handler runs. An entry is made of

- `needs`: rights the request needs as a whole, in Kafka's order (the transactional id
  before the group before the topics); the first one missing answers the request with
  its error everywhere the API has room for one (`error_answer`);
- `each`: a right each entry of one list of the request needs (each topic of a Produce,
  each group of a DeleteGroups): the handler serves the entries allowed, and the others
  are answered the error beside them, as Kafka answers per topic;
- `after`: what read-only APIs do to the handler's answer (hide the topics and groups
  the principal may not describe, answer per entry, fill `authorized_operations`).

A check answers None (served as it came), `Refused` or `Narrowed`. Handlers and the
coordinators never see the authorizer.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

import msgspec

from kcsim.protocol.codecs import codec
from kcsim.protocol.error_answers import error_answer
from kcsim.protocol.errors import ErrorCode

from ..acl.authorizer import right
from ..acl.model import CLUSTER_NAME, Operation, ResourceType
from ..state.answers import finished

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..acl.authorizer import Authorizer
    from ..state.broker_state import BrokerState
    from .context import RequestContext

TOPIC, GROUP, CLUSTER, TXN = (ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER,
                              ResourceType.TRANSACTIONAL_ID)
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = (
    Operation.READ, Operation.WRITE, Operation.CREATE, Operation.DELETE, Operation.ALTER,
    Operation.DESCRIBE)
TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
INT32_MIN = -(2**31)
_ZERO_ID = uuid.UUID(int=0)


class Need(NamedTuple):
    """A right a request needs as a whole: `name(request, version)` names the resource
    (None: this request does not need it)."""

    operation: Operation
    resource_type: ResourceType
    name: Callable[[Any, int], str | None]
    error: int


class Each(NamedTuple):
    """A right each entry of `field` needs; refused entries are answered `error` in the
    response's `answers` list. `unless`: a right that allows every entry at once."""

    field: str
    answers: str
    operation: Operation
    resource_type: ResourceType
    name: Callable[[Any, BrokerState], str | None]  # None: unknown (the handler says so)
    error: int
    unless: tuple[Operation, ResourceType] | None = None


class Refused(NamedTuple):
    response: Any


class Narrowed(NamedTuple):
    """The request the handler serves instead, and what completes its answer."""

    request: Any
    finish: Callable[[Any], Any]


class Asker(NamedTuple):
    """Who asks (the principal and its host): what every check hands the authorizer."""

    authorizer: Authorizer
    principal: str
    host: str

    def may(self, operation: Operation, resource_type: ResourceType, name: str) -> bool:
        return self.authorizer.authorize(self.principal, self.host, operation,
                                         resource_type, name)

    def operations(self, resource_type: ResourceType, name: str) -> int:
        return self.authorizer.authorized_operations(self.principal, self.host,
                                                     resource_type, name)


After: TypeAlias = "Callable[[Asker, Any, Any, int, BrokerState], Any]"  # (asker, request, response, v)


class Access(NamedTuple):
    needs: tuple[Need, ...] = ()
    each: Each | None = None
    after: After | None = None


def compiled(access: Access) -> Check:
    """`access` as the check the dispatcher runs (see the module's docstring): its rights
    turned into `Decisions` keys once, so that on every request of a client the ACLs allow
    a right costs a lookup or two in its asker's table, and nothing is built."""
    needs = tuple((right(need.operation, need.resource_type), getattr(need.name, "field", None),
                   need.name, need.error) for need in access.needs)
    each, after = access.each, access.after
    each_right, field = (0, "") if each is None else (right(each.operation, each.resource_type),
                                                      each.field)
    # entries whose `name` field, when set, is the resource's name: read without a call
    by_name = each is not None and each.name in (_topic_of, _named)

    def run(authorizer: Authorizer, ctx: RequestContext, request: Any,
            state: BrokerState) -> Refused | Narrowed | None:
        decisions = authorizer.decisions(ctx.principal, ctx.client_host)
        for code, field_name, name_of, error in needs:
            name = (getattr(request, field_name) if field_name is not None
                    else name_of(request, ctx.api_version))
            if name is not None and not decisions[code][name]:
                return Refused(_error(ctx.api_key, ctx.api_version, request, error))
        refused_answers: list[Any] = []
        if each is not None:
            allowed = decisions[each_right]
            for entry in getattr(request, field):
                name = (by_name and getattr(entry, "name", None)) or each.name(entry, state)
                if name is not None and not allowed[name]:
                    asker = Asker(authorizer, ctx.principal, ctx.client_host)
                    if each.unless is None or not asker.may(*each.unless, CLUSTER_NAME):
                        request, refused_answers = _narrow(asker, each, ctx, request, state)
                    break
        if not refused_answers and after is None:
            return None
        return Narrowed(request, _Finish(Asker(authorizer, ctx.principal, ctx.client_host),
                                         request, ctx.api_version, state, each,
                                         refused_answers, after))
    return run


def _narrow(asker: Asker, each: Each, ctx: RequestContext, request: Any,
            state: BrokerState) -> tuple[Any, list[Any]]:
    """The request without the entries `each` refuses, and their answers."""
    allowed: list[Any] = []
    refused: list[Any] = []
    for entry in getattr(request, each.field):
        name = each.name(entry, state)
        ok = name is None or asker.may(each.operation, each.resource_type, name)
        (allowed if ok else refused).append(entry)
    if not refused:
        return request, []
    answered = getattr(_error(ctx.api_key, ctx.api_version,
                                    _with(request, each.field, refused), each.error),
                       each.answers)
    return _with(request, each.field, allowed), answered


class _Finish:
    """What completes a narrowed request's answer: the refused entries' answers added,
    then the API's `after`."""

    __slots__ = ("after", "answers", "asker", "each", "refused", "request", "state", "version")

    def __init__(self, asker: Asker, request: Any, version: int, state: BrokerState,
                 each: Each | None, refused: list[Any], after: After | None) -> None:
        self.asker, self.request, self.version, self.state = asker, request, version, state
        self.answers = each.answers if each is not None else ""
        self.refused, self.after = refused, after

    def __call__(self, response: Any) -> Any:
        if self.refused:
            getattr(response, self.answers).extend(self.refused)
        if self.after is not None:
            response = self.after(self.asker, self.request, response, self.version, self.state)
        return response


def _error(api_key: int, version: int, request: Any, error: int) -> Any:
    """The answer refusing all of `request` with `error` (as a fault rule's error is)."""
    return error_answer(api_key, version, request, error)


def _with(request: Any, field: str, entries: list[Any]) -> Any:
    return msgspec.structs.replace(request, **{field: entries})


# -- how requests name their resources ------------------------------------------------------


class _Field:
    """The request's field that names the resource (read by `compiled` without a call)."""

    __slots__ = ("field",)

    def __init__(self, field: str) -> None:
        self.field = field

    def __call__(self, request: Any, version: int) -> str | None:
        return getattr(request, self.field)  # type: ignore[no-any-return]


def _cluster(request: Any, version: int) -> str:
    return CLUSTER_NAME


def _topic_of(entry: Any, state: BrokerState) -> str | None:
    """A topic entry's name, or the name of the topic its id names (None: no such topic)."""
    name = getattr(entry, "name", None)
    if name:
        return str(name)
    topic_id: Any = getattr(entry, "topic_id", None)
    topic = state.topics.by_id.get(topic_id)
    return None if topic is None else str(topic.name)


def _entry_name(entry: Any, state: BrokerState) -> str:
    return str(entry)


def _named(entry: Any, state: BrokerState) -> str:
    return str(entry.name)


# -- what read-only APIs do to their answers ------------------------------------------------


def _metadata_after(asker: Asker, request: Any, response: Any, version: int,
                    state: BrokerState) -> Any:
    listed = request.topics is None or (version == 0 and not request.topics)
    shown = []
    for topic in response.topics:
        name = topic.name if topic.name is not None else _topic_of(topic, state)
        if name is None or topic.error_code == TOPIC_DENIED:
            shown.append(topic)
        elif not asker.may(DESCRIBE, TOPIC, name):
            if not listed:  # named, it is refused; listed, it is not there
                shown.append(_denied_topic(response, topic, version))
        else:
            if request.include_topic_authorized_operations and topic.error_code == 0:
                topic.topic_authorized_operations = asker.operations(TOPIC, name)
            shown.append(topic)
    response.topics = shown
    if response.cluster_authorized_operations != INT32_MIN:
        response.cluster_authorized_operations = (
            asker.operations(CLUSTER, CLUSTER_NAME)
            if asker.may(DESCRIBE, CLUSTER, CLUSTER_NAME) else 0)
    return response


def _denied_topic(response: Any, topic: Any, version: int) -> Any:
    # By name: no topic id, as Kafka does not tell it; by id (v12+) the id is kept.
    by_id = topic.name is None
    return type(topic)(error_code=TOPIC_DENIED, name=topic.name,
                       topic_id=topic.topic_id if by_id else _ZERO_ID,
                       is_internal=False, partitions=[])


def _fetch_after(asker: Asker, request: Any, response: Any, version: int,
                 state: BrokerState) -> Any:
    for topic in response.responses:
        name = topic.topic or _topic_of(topic, state)
        if name is not None and not asker.may(READ, TOPIC, name):
            part = type(topic.partitions[0]) if topic.partitions else None
            if part is not None:
                topic.partitions = [
                    part(partition_index=p.partition_index, error_code=TOPIC_DENIED,
                         high_watermark=-1, last_stable_offset=-1, log_start_offset=-1,
                         aborted_transactions=None, preferred_read_replica=-1, records=b"")
                    for p in topic.partitions]
    return response


def _per_partition(operation: Operation, topics: str, name: str = "name",
                   partitions: str = "partitions") -> After:
    """An answer whose topics the principal may not `operation` are answered
    TOPIC_AUTHORIZATION_FAILED in each partition (their data cleared)."""
    def after(asker: Asker, request: Any, response: Any, version: int,
              state: BrokerState) -> Any:
        for topic in getattr(response, topics):
            topic_name = getattr(topic, name)
            if topic_name is not None and not asker.may(operation, TOPIC, topic_name):
                parts = getattr(topic, partitions)
                if parts:
                    kind = type(parts[0])
                    index = "partition_index" if hasattr(parts[0], "partition_index") \
                        else "partition"
                    setattr(topic, partitions, [
                        kind(**{index: getattr(p, index), "error_code": TOPIC_DENIED})
                        for p in parts])
        return response
    return after


def _offset_fetch_after(asker: Asker, request: Any, response: Any, version: int,
                        state: BrokerState) -> Any:
    if version >= 8:
        asked = {g.group_id: g.topics for g in request.groups}
        groups = []
        for group in response.groups:
            if not asker.may(DESCRIBE, GROUP, group.group_id):
                groups.append(type(group)(group_id=group.group_id, topics=[],
                                          error_code=GROUP_DENIED))
                continue
            group.topics = _fetched_topics(asker, group.topics, asked.get(group.group_id))
            groups.append(group)
        response.groups = groups
        return response
    response.topics = _fetched_topics(asker, response.topics, request.topics)
    return response


def _fetched_topics(asker: Asker, topics: list[Any], asked: Any) -> list[Any]:
    """The committed offsets of the topics the principal may describe; topics asked for by
    name and not described are answered TOPIC_AUTHORIZATION_FAILED, the others hidden."""
    shown = []
    for topic in topics:
        if asker.may(DESCRIBE, TOPIC, topic.name):
            shown.append(topic)
        elif asked is not None:
            for p in topic.partitions:
                p.committed_offset, p.committed_leader_epoch = -1, -1
                p.metadata, p.error_code = "", TOPIC_DENIED
            shown.append(topic)
    return shown


def _find_coordinator_after(asker: Asker, request: Any, response: Any, version: int,
                            state: BrokerState) -> Any:
    kind, error = (TXN, TXN_DENIED) if request.key_type == 1 else (GROUP, GROUP_DENIED)
    if version < 4:
        if not asker.may(DESCRIBE, kind, request.key):
            return type(response)(error_code=error, error_message=None, node_id=-1, host="",
                                  port=-1)
        return response
    for coordinator in response.coordinators:
        if not asker.may(DESCRIBE, kind, coordinator.key):
            coordinator.node_id, coordinator.host, coordinator.port = -1, "", -1
            coordinator.error_code, coordinator.error_message = error, None
    return response


def _describe_groups_after(asker: Asker, request: Any, response: Any, version: int,
                           state: BrokerState) -> Any:
    ops = getattr(request, "include_authorized_operations", False)
    groups = []
    for group in response.groups:
        if not asker.may(DESCRIBE, GROUP, group.group_id):
            group = _error(15, version, msgspec.structs.replace(
                request, groups=[group.group_id]), GROUP_DENIED).groups[0]
        elif ops:
            group.authorized_operations = asker.operations(GROUP, group.group_id)
        groups.append(group)
    response.groups = groups
    return response


def _described_groups_after(api_key: int) -> After:
    """ConsumerGroupDescribe, ShareGroupDescribe and StreamsGroupDescribe: each group not
    described refused."""
    def after(asker: Asker, request: Any, response: Any, version: int,
              state: BrokerState) -> Any:
        groups = []
        for group in response.groups:
            if not asker.may(DESCRIBE, GROUP, group.group_id):
                group = _error(api_key, version, msgspec.structs.replace(
                    request, group_ids=[group.group_id]), GROUP_DENIED).groups[0]
            elif request.include_authorized_operations:
                group.authorized_operations = asker.operations(GROUP, group.group_id)
            groups.append(group)
        response.groups = groups
        return response
    return after


def _share_offsets_after(asker: Asker, request: Any, response: Any, version: int,
                         state: BrokerState) -> Any:
    """DescribeShareGroupOffsets: a group not described refused, and the partitions of a
    topic not described."""
    for group in response.groups:
        if not asker.may(DESCRIBE, GROUP, group.group_id):
            group.topics, group.error_code, group.error_message = [], GROUP_DENIED, None
            continue
        for topic in group.topics:
            if not asker.may(DESCRIBE, TOPIC, topic.topic_name):
                for p in topic.partitions:
                    p.start_offset, p.lag, p.error_code, p.error_message = -1, -1, TOPIC_DENIED, None
    return response


def _list_groups_after(asker: Asker, request: Any, response: Any, version: int,
                       state: BrokerState) -> Any:
    if not asker.may(DESCRIBE, CLUSTER, CLUSTER_NAME):
        response.groups = [g for g in response.groups if asker.may(DESCRIBE, GROUP, g.group_id)]
    return response


def _describe_cluster_after(asker: Asker, request: Any, response: Any, version: int,
                            state: BrokerState) -> Any:
    if request.include_cluster_authorized_operations:
        response.cluster_authorized_operations = (
            asker.operations(CLUSTER, CLUSTER_NAME)
            if asker.may(DESCRIBE, CLUSTER, CLUSTER_NAME) else 0)
    return response


def _describe_log_dirs_after(asker: Asker, request: Any, response: Any, version: int,
                             state: BrokerState) -> Any:
    if not asker.may(DESCRIBE, CLUSTER, CLUSTER_NAME):
        return _error(35, version, request, CLUSTER_DENIED)
    return response


def _describe_transactions_after(asker: Asker, request: Any, response: Any, version: int,
                                 state: BrokerState) -> Any:
    states = []
    for txn in response.transaction_states:
        if not asker.may(DESCRIBE, TXN, txn.transactional_id):
            txn = _error(65, version, msgspec.structs.replace(
                request, transactional_ids=[txn.transactional_id]), TXN_DENIED
            ).transaction_states[0]
        else:
            txn.topics = [t for t in txn.topics if asker.may(DESCRIBE, TOPIC, t.topic)]
        states.append(txn)
    response.transaction_states = states
    return response


def _list_transactions_after(asker: Asker, request: Any, response: Any, version: int,
                             state: BrokerState) -> Any:
    response.transaction_states = [t for t in response.transaction_states
                                   if asker.may(DESCRIBE, TXN, t.transactional_id)]
    return response


# -- configs: the resource type an entry names ---------------------------------------------

_CONFIG_RESOURCES = {2: (TOPIC, TOPIC_DENIED), 4: (CLUSTER, CLUSTER_DENIED),
                     8: (CLUSTER, CLUSTER_DENIED), 32: (GROUP, GROUP_DENIED)}


def _configs_access(operation: Operation, api_key: int, field: str, answers: str) -> After:
    """DescribeConfigs' answer per resource: a resource not allowed is answered its error
    (the broker's and the logger's are the cluster's)."""
    def after(asker: Asker, request: Any, response: Any, version: int,
              state: BrokerState) -> Any:
        entries = []
        for entry in getattr(response, answers):
            kind, error = _CONFIG_RESOURCES.get(entry.resource_type, (None, 0))
            if kind is not None and not asker.may(
                    operation, kind, CLUSTER_NAME if kind is CLUSTER else entry.resource_name):
                entry.error_code, entry.error_message = error, None
                if hasattr(entry, "configs"):
                    entry.configs = []
            entries.append(entry)
        setattr(response, answers, entries)
        return response
    return after


def _alter_configs_check(api_key: int) -> Callable[..., Refused | Narrowed | None]:
    """AlterConfigs and IncrementalAlterConfigs: the resources not allowed ALTER_CONFIGS are
    left out of what the handler changes and answered their error."""
    def run(authorizer: Authorizer, ctx: RequestContext, request: Any,
            state: BrokerState) -> Refused | Narrowed | None:
        asker = Asker(authorizer, ctx.principal, ctx.client_host)
        allowed: list[Any] = []
        refused: list[Any] = []
        for entry in request.resources:
            kind, error = _CONFIG_RESOURCES.get(entry.resource_type, (None, 0))
            ok = kind is None or asker.may(
                Operation.ALTER_CONFIGS, kind,
                CLUSTER_NAME if kind is CLUSTER else entry.resource_name)
            (allowed if ok else refused).append((entry, error))
        if not refused:
            return None
        answers = []
        for entry, error in refused:
            answers += _error(api_key, ctx.api_version,
                                    _with(request, "resources", [entry]), error).responses

        def finish(response: Any) -> Any:
            response.responses.extend(answers)
            return response
        return Narrowed(_with(request, "resources", [e for e, _ in allowed]), finish)
    return run


# -- the checks that are not a table row ----------------------------------------------------


def _init_producer_id(authorizer: Authorizer, ctx: RequestContext, request: Any,
                      state: BrokerState) -> Refused | None:
    """A transactional id needs WRITE on it; without one, IDEMPOTENT_WRITE on the cluster
    or WRITE on some topic (Kafka's authorizeByResourceType)."""
    asker = Asker(authorizer, ctx.principal, ctx.client_host)
    if request.transactional_id is not None:
        if not asker.may(WRITE, TXN, request.transactional_id):
            return Refused(_error(22, ctx.api_version, request, TXN_DENIED))
        return None
    if asker.may(Operation.IDEMPOTENT_WRITE, CLUSTER, CLUSTER_NAME) or \
            authorizer.authorize_by_resource_type(asker.principal, asker.host, WRITE, TOPIC):
        return None
    return Refused(_error(22, ctx.api_version, request, CLUSTER_DENIED))


def _add_partitions_to_txn(authorizer: Authorizer, ctx: RequestContext, request: Any,
                           state: BrokerState) -> Refused | None:
    """v4+ is brokers' (CLUSTER_ACTION); before, WRITE on the transactional id, then WRITE on
    every topic: when one is refused nothing is added (the others OPERATION_NOT_ATTEMPTED)."""
    asker = Asker(authorizer, ctx.principal, ctx.client_host)
    version = ctx.api_version
    if version >= 4:
        if not asker.may(Operation.CLUSTER_ACTION, CLUSTER, CLUSTER_NAME):
            return Refused(_error(24, version, request, CLUSTER_DENIED))
        return None
    if not asker.may(WRITE, TXN, request.v3_and_below_transactional_id):
        return Refused(_error(24, version, request, TXN_DENIED))
    denied = {t.name for t in request.v3_and_below_topics if not asker.may(WRITE, TOPIC, t.name)}
    if not denied:
        return None
    response = _error(24, version, request, ErrorCode.OPERATION_NOT_ATTEMPTED)
    for topic in response.results_by_topic_v3_and_below:
        if topic.name in denied:
            for p in topic.results_by_partition:
                p.partition_error_code = TOPIC_DENIED
    return Refused(response)


def _write_txn_markers(authorizer: Authorizer, ctx: RequestContext, request: Any,
                       state: BrokerState) -> Refused | None:
    """A broker's request: ALTER or CLUSTER_ACTION on the cluster."""
    asker = Asker(authorizer, ctx.principal, ctx.client_host)
    if asker.may(ALTER, CLUSTER, CLUSTER_NAME) or \
            asker.may(Operation.CLUSTER_ACTION, CLUSTER, CLUSTER_NAME):
        return None
    return Refused(_error(27, ctx.api_version, request, CLUSTER_DENIED))


def _group_heartbeat(api_key: int) -> Check:
    """ConsumerGroupHeartbeat and ShareGroupHeartbeat: READ on the group, DESCRIBE on each
    subscribed topic."""
    def check(authorizer: Authorizer, ctx: RequestContext, request: Any,
              state: BrokerState) -> Refused | None:
        asker = Asker(authorizer, ctx.principal, ctx.client_host)
        if not asker.may(READ, GROUP, request.group_id):
            return Refused(_error(api_key, ctx.api_version, request, GROUP_DENIED))
        denied = sorted(t for t in request.subscribed_topic_names or ()
                        if not asker.may(DESCRIBE, TOPIC, t))
        if denied:
            response = _error(api_key, ctx.api_version, request, TOPIC_DENIED)
            response.error_message = ("The following topics are not authorized: "
                                      + ", ".join(denied))
            return Refused(response)
        return None
    return check


def _metadata(authorizer: Authorizer, ctx: RequestContext, request: Any,
              state: BrokerState) -> Narrowed:
    """Topics named and not described, or that Metadata would create without CREATE on the
    cluster or on them, are refused before the handler sees them; every answer is then
    filtered (`_metadata_after`)."""
    asker = Asker(authorizer, ctx.principal, ctx.client_host)
    version = ctx.api_version
    refused: list[str] = []
    if request.topics and not (version == 0 and not request.topics):
        creates = state.config.auto_create_topics and (
            request.allow_auto_topic_creation or version < 4)
        kept = []
        for entry in request.topics:
            name = entry.name
            if name is None:
                kept.append(entry)
            elif not asker.may(DESCRIBE, TOPIC, name) or (
                    creates and state.topics.get(name) is None
                    and not asker.may(CREATE, CLUSTER, CLUSTER_NAME)
                    and not asker.may(CREATE, TOPIC, name)):
                refused.append(name)
            else:
                kept.append(entry)
        if refused:
            request = _with(request, "topics", kept)

    def finish(response: Any) -> Any:
        response = _metadata_after(asker, request, response, version, state)
        if refused:
            kind = type(response).MetadataResponseTopic
            response.topics.extend(kind(error_code=TOPIC_DENIED, name=name, topic_id=_ZERO_ID,
                                        is_internal=False, partitions=[]) for name in refused)
        return response
    return Narrowed(request, finish)


def _offset_delete(authorizer: Authorizer, ctx: RequestContext, request: Any,
                   state: BrokerState) -> Refused | Narrowed | None:
    """DELETE on the group, then READ on each topic: the offsets of a topic not readable
    are not deleted, and its partitions are answered TOPIC_AUTHORIZATION_FAILED."""
    asker = Asker(authorizer, ctx.principal, ctx.client_host)
    if not asker.may(DELETE, GROUP, request.group_id):
        return Refused(_error(47, ctx.api_version, request, GROUP_DENIED))
    refused = [t for t in request.topics if not asker.may(READ, TOPIC, t.name)]
    if not refused:
        return None
    kind: Any = codec(47, "response").cls

    def finish(response: Any) -> Any:
        response.topics.extend(kind.OffsetDeleteResponseTopic(name=t.name, partitions=[
            kind.OffsetDeleteResponsePartition(partition_index=p.partition_index,
                                               error_code=TOPIC_DENIED)
            for p in t.partitions]) for t in refused)
        return response
    return Narrowed(_with(request, "topics", [t for t in request.topics if t not in refused]),
                    finish)


_DELETE_TOPICS = compiled(Access(each=Each("topics", "responses", DELETE, TOPIC, _topic_of,
                                           TOPIC_DENIED)))
_DELETE_TOPICS_BY_NAME = compiled(Access(each=Each("topic_names", "responses", DELETE, TOPIC,
                                                   _entry_name, TOPIC_DENIED)))


def _delete_topics(authorizer: Authorizer, ctx: RequestContext, request: Any,
                   state: BrokerState) -> Refused | Narrowed | None:
    """DELETE on each topic, named in `topic_names` before v6."""
    return (_DELETE_TOPICS if ctx.api_version >= 6 else _DELETE_TOPICS_BY_NAME)(
        authorizer, ctx, request, state)


_GROUP_ID = _Field("group_id")
_TXN_ID = _Field("transactional_id")


def _offset_fetch_group(request: Any, version: int) -> str | None:
    return None if version >= 8 else request.group_id


Check: TypeAlias = "Callable[[Authorizer, RequestContext, Any, BrokerState], Refused | Narrowed | None]"


def _group(operation: Operation) -> Check:
    return compiled(Access(needs=(Need(operation, GROUP, _GROUP_ID, GROUP_DENIED),)))


def _cluster_op(operation: Operation) -> Check:
    return compiled(Access(needs=(Need(operation, CLUSTER, _cluster, CLUSTER_DENIED),)))


ACCESS: dict[int, Check] = {
    0: compiled(Access(
        needs=(Need(WRITE, TXN, _TXN_ID, TXN_DENIED),),
        each=Each("topic_data", "responses", WRITE, TOPIC, _topic_of, TOPIC_DENIED))),
    1: compiled(Access(after=_fetch_after)),
    2: compiled(Access(after=_per_partition(DESCRIBE, "topics"))),
    3: _metadata,
    8: compiled(Access(
        needs=(Need(READ, GROUP, _GROUP_ID, GROUP_DENIED),),
        each=Each("topics", "topics", READ, TOPIC, _topic_of, TOPIC_DENIED))),
    9: compiled(Access(needs=(Need(DESCRIBE, GROUP, _offset_fetch_group, GROUP_DENIED),),
                     after=_offset_fetch_after)),
    10: compiled(Access(after=_find_coordinator_after)),
    11: _group(READ),
    12: _group(READ),
    13: _group(READ),
    14: _group(READ),
    15: compiled(Access(after=_describe_groups_after)),
    16: compiled(Access(after=_list_groups_after)),
    19: compiled(Access(each=Each("topics", "topics", CREATE, TOPIC, _named, TOPIC_DENIED,
                                unless=(CREATE, CLUSTER)))),
    20: _delete_topics,
    21: compiled(Access(each=Each("topics", "topics", DELETE, TOPIC, _named, TOPIC_DENIED))),
    22: _init_producer_id,
    23: compiled(Access(after=_per_partition(DESCRIBE, "topics", "topic"))),
    24: _add_partitions_to_txn,
    25: compiled(Access(needs=(Need(WRITE, TXN, _TXN_ID, TXN_DENIED),
                             Need(READ, GROUP, _GROUP_ID, GROUP_DENIED)))),
    26: compiled(Access(needs=(Need(WRITE, TXN, _TXN_ID, TXN_DENIED),))),
    27: _write_txn_markers,
    28: compiled(Access(
        needs=(Need(WRITE, TXN, _TXN_ID, TXN_DENIED), Need(READ, GROUP, _GROUP_ID, GROUP_DENIED)),
        each=Each("topics", "topics", READ, TOPIC, _named, TOPIC_DENIED))),
    29: _cluster_op(DESCRIBE),
    30: _cluster_op(ALTER),
    31: _cluster_op(ALTER),
    32: compiled(Access(after=_configs_access(Operation.DESCRIBE_CONFIGS, 32, "resources",
                                            "results"))),
    33: _alter_configs_check(33),
    35: compiled(Access(after=_describe_log_dirs_after)),
    37: compiled(Access(each=Each("topics", "results", ALTER, TOPIC, _named, TOPIC_DENIED))),
    42: compiled(Access(each=Each("groups_names", "results", DELETE, GROUP, _entry_name,
                                GROUP_DENIED))),
    44: _alter_configs_check(44),
    47: _offset_delete,
    50: _cluster_op(DESCRIBE),
    51: _cluster_op(ALTER),
    60: compiled(Access(after=_describe_cluster_after)),
    61: compiled(Access(after=_per_partition(READ, "topics"))),
    65: compiled(Access(after=_describe_transactions_after)),
    66: compiled(Access(after=_list_transactions_after)),
    68: _group_heartbeat(68),
    69: compiled(Access(after=_described_groups_after(69))),
    76: _group_heartbeat(76),
    77: compiled(Access(after=_described_groups_after(77))),
    78: _group(READ),
    79: _group(READ),
    88: _group(READ),
    89: compiled(Access(after=_described_groups_after(89))),
    90: compiled(Access(after=_share_offsets_after)),
    91: _group(READ),
    92: _group(DELETE),
    1000: _group(READ),
    1001: _group(READ),
    1002: _group(DESCRIBE),
}
"""API key -> its check. SaslHandshake, SaslAuthenticate and ApiVersions need no right."""


def served(check: Check, authorizer: Authorizer, fn: Callable[..., Any], state: BrokerState,
           ctx: RequestContext, request: Any) -> Any:
    """The handler `fn`'s answer to `request` as `check` lets it through: refused, served
    as it came, or served narrowed and its answer (plain, `Durable` or `Pending`) finished."""
    verdict = check(authorizer, ctx, request, state)
    if verdict is None:
        return fn(state, ctx, request)
    if type(verdict) is Refused:
        return verdict.response
    assert isinstance(verdict, Narrowed)
    return finished(fn(state, ctx, verdict.request), verdict.finish)
