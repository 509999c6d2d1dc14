"""DescribeConfigs (32), AlterConfigs (33), IncrementalAlterConfigs (44): a resource's configs.

Three kinds of resource: a TOPIC (its overrides live in its topic record), the
BROKER (dynamic broker configs, `state/broker_configs.py`) and a GROUP (KIP-848
group configs, folded and used by the group coordinator). Each resource of a
request is answered on its own, in Kafka's order of checks: the keys, the
resource, the operations, then the whole new set of overrides. AlterConfigs
replaces a resource's overrides; IncrementalAlterConfigs changes the ones it
names. A change is one record with the resource's new overrides; validate_only
writes none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from kcsim.coordinator.records import GroupConfigKey, GroupConfigValue
from kcsim.protocol.codecs import response_class
from kcsim.protocol.errors import ErrorCode
from kcsim.storage.records import Record

from ...state.broker_configs import (
    CLUSTER,
    DYNAMIC_DEFINITIONS,
    Described,
    Synonym,
    check_broker_changes,
)
from ...state.config_defs import ConfigProblem, ConfigSource, ConfigType, OpProblem, apply_ops
from ...state.config_docs import broker_doc, group_doc, topic_doc
from ...state.config_records import BrokerConfigKey, BrokerConfigValue
from ...state.group_configs import (
    BROKER_SYNONYMS,
    GROUP_DEFINITIONS,
    INTERNAL_GROUP_CONFIGS,
    broker_values,
    check_group_configs,
)
from ...state.topic_configs import TOPIC_CONFIGS, TOPIC_DEFINITIONS, check_topic_configs
from ..routes import serves
from .topic_admin import topic_record

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...state.broker_state import BrokerState

DescribeConfigsResponse = response_class(32)
AlterConfigsResponse = response_class(33)
IncrementalAlterConfigsResponse = response_class(44)

TOPIC, BROKER, GROUP = 2, 4, 32
_MALFORMED = ("This most likely occurs because of a request being malformed by the client "
              "library or the message was sent to an incompatible broker. See the broker logs "
              "for more details.")


class Refused(Exception):
    """A resource answered with an error: (code, message)."""

    def __init__(self, error: int, message: str | None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


# -- altering ------------------------------------------------------------------------------


class Change(NamedTuple):
    """A resource's current overrides, and how to write new ones."""

    current: dict[str, str]
    record: Callable[[dict[str, str]], Record]


def _change(broker: BrokerState, kind: int, name: str,
            pending: dict[tuple[int, str], dict[str, str]]) -> Change:
    """What the resource holds now (after earlier resources of the same request)."""
    if kind == TOPIC:
        if not name:
            raise Refused(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
        topic = broker.topics.get(name)
        if topic is None:
            raise Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        current = pending.get((kind, name), topic.configs)
        return Change(dict(current), lambda new: topic_record(
            topic.name, topic.topic_id, len(topic.partitions), new))
    if kind == BROKER:
        _check_node(broker, name, "")
        current = pending.get((kind, name), broker.broker_configs.overrides(name))
        return Change(dict(current), lambda new: Record(BrokerConfigKey(name),
                                                         BrokerConfigValue(new) if new else None))
    if kind == GROUP:
        if not name:
            raise Refused(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
        groups = broker.groups
        known = groups.group_configs(name) if groups is not None else {}
        current = pending.get((kind, name), known)
        return Change(dict(current), lambda new: Record(GroupConfigKey(name),
                                                        GroupConfigValue(new) if new else None))
    raise Refused(ErrorCode.INVALID_REQUEST, f"Unknown resource type {kind}")


def _check_node(broker: BrokerState, name: str, or_empty: str) -> None:
    if name == CLUSTER:
        return
    node = broker.config.node_id
    if not name.lstrip("-").isdigit():
        raise Refused(ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}")
    if int(name) not in broker.config.node_ids:  # each node of a several-broker kcsim
        raise Refused(ErrorCode.INVALID_REQUEST,
                      f"Unexpected broker id, expected {node}{or_empty}, but received {name}")


def _validate(broker: BrokerState, kind: int, names: list[str], new: dict[str, str]) -> None:
    try:
        if kind == TOPIC:
            check_topic_configs(new)
        elif kind == BROKER:
            check_broker_changes(names, new)
        elif broker.groups is not None:
            check_group_configs(new, broker.groups.config)
    except ConfigProblem as problem:
        # Kafka answers a bad broker config as an invalid request.
        error = ErrorCode.INVALID_REQUEST if kind == BROKER else ErrorCode.INVALID_CONFIG
        raise Refused(error, str(problem)) from None


def _definitions(kind: int) -> dict[str, Any]:
    return {TOPIC: TOPIC_DEFINITIONS, BROKER: DYNAMIC_DEFINITIONS}.get(kind, GROUP_DEFINITIONS)


def _alter(broker: BrokerState, request: Any, R: Any, incremental: bool) -> Any:
    results, records = [], []
    pending: dict[tuple[int, str], dict[str, str]] = {}
    for res in request.resources:
        kind, name = res.resource_type, res.resource_name
        names = [c.name for c in res.configs]
        try:
            if len(set(names)) < len(names):
                raise Refused(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
            change = _change(broker, kind, name, pending)
            new = _new_overrides(res, change.current, kind, incremental)
            _validate(broker, kind, names, new)
        except Refused as refused:
            results.append(R.AlterConfigsResourceResponse(
                error_code=refused.error, error_message=refused.message,
                resource_type=kind, resource_name=name))
            continue
        if not request.validate_only:
            pending[kind, name] = new
            records.append(change.record(new))
        results.append(R.AlterConfigsResourceResponse(
            error_code=0, error_message=None, resource_type=kind, resource_name=name))
    return broker.change(records, R(throttle_time_ms=0, responses=results))


def _new_overrides(res: Any, current: dict[str, str], kind: int, incremental: bool) -> dict[str, str]:
    if not incremental:
        for c in res.configs:
            if c.value is None:
                raise Refused(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {c.name}")
        return {c.name: c.value for c in res.configs}
    try:
        return apply_ops(current, [(c.name, c.config_operation, c.value) for c in res.configs],
                         _definitions(kind), invalid_config=ErrorCode.INVALID_CONFIG,
                         invalid_request=ErrorCode.INVALID_REQUEST,
                         unknown_error=ErrorCode.UNKNOWN_SERVER_ERROR)
    except OpProblem as problem:
        raise Refused(problem.error, problem.message) from None


@serves(33)
def alter_configs(broker: BrokerState, ctx: Any, request: Any) -> Any:
    return _alter(broker, request, AlterConfigsResponse, incremental=False)


@serves(44)
def incremental_alter_configs(broker: BrokerState, ctx: Any, request: Any) -> Any:
    return _alter(broker, request, IncrementalAlterConfigsResponse, incremental=True)


# -- describing ----------------------------------------------------------------------------


def _topic_entries(broker: BrokerState, name: str) -> list[Described]:
    topic = broker.topics.get(name)
    if topic is None:
        raise Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "")
    node = broker.config.node_id
    out = []
    for key, spec in TOPIC_CONFIGS.items():
        synonyms: list[Synonym] = []
        if key in topic.configs:
            synonyms.append((key, topic.configs[key], ConfigSource.DYNAMIC_TOPIC_CONFIG))
        if spec.synonym is not None:
            synonyms += broker.broker_configs.chain(spec.synonym, node)
        _, value, source = synonyms[0] if synonyms else (key, spec.config.default,
                                                        ConfigSource.DEFAULT_CONFIG)
        out.append(Described(key, value, False, source, spec.config.type, synonyms))
    # Overrides kcsim keeps that Kafka has no definition of (a log from before validation).
    out += [Described(key, value, False, ConfigSource.DYNAMIC_TOPIC_CONFIG, ConfigType.UNKNOWN,
                      [(key, value, ConfigSource.DYNAMIC_TOPIC_CONFIG)])
            for key, value in sorted(topic.configs.items()) if key not in TOPIC_CONFIGS]
    return out


def _broker_entries(broker: BrokerState, name: str) -> list[Described]:
    _check_node(broker, name, " or empty string")
    return broker.broker_configs.describe(name, broker.config)


def _group_entries(broker: BrokerState, name: str) -> list[Described]:
    if not name:
        raise Refused(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
    groups = broker.groups
    if groups is None:
        return []
    own = groups.group_configs(name)
    served = broker_values(groups.config)
    out = []
    for key, definition in GROUP_DEFINITIONS.items():
        if key in INTERNAL_GROUP_CONFIGS:
            continue
        synonym = BROKER_SYNONYMS[key]
        synonyms: list[Synonym] = [(synonym, definition.default, ConfigSource.DEFAULT_CONFIG)]
        if str(served[key]) != definition.default:  # as Kafka shows a broker config left unset
            synonyms.insert(0, (synonym, str(served[key]), ConfigSource.STATIC_BROKER_CONFIG))
        if key in own:
            synonyms.insert(0, (key, own[key], ConfigSource.GROUP_CONFIG))
        _, value, source = synonyms[0]
        out.append(Described(key, value, False, source, definition.type, synonyms))
    return out


_DESCRIBERS: dict[int, Callable[[BrokerState, str], list[Described]]] = {
    TOPIC: _topic_entries, BROKER: _broker_entries, GROUP: _group_entries}
# kcsim's one-line description of a config (`state/config_docs.py`), for include_documentation.
_DOCS: dict[int, Callable[[str], str | None]] = {
    TOPIC: topic_doc, BROKER: broker_doc, GROUP: group_doc}


@serves(32)
def describe_configs(broker: BrokerState, ctx: Any, request: Any) -> Any:
    R = DescribeConfigsResponse
    results = []
    for res in request.resources:
        describe = _DESCRIBERS.get(res.resource_type)
        entries: list[Described] = []
        msg: str | None
        err, msg = 0, ""  # Kafka's message is empty, not null, where all went well
        try:
            if describe is None:
                raise Refused(ErrorCode.INVALID_REQUEST, _MALFORMED)
            entries = describe(broker, res.resource_name)
        except Refused as refused:
            err, msg = refused.error, refused.message
        if res.configuration_keys is not None:
            keys = set(res.configuration_keys)
            entries = [e for e in entries if e.name in keys]
        results.append(R.DescribeConfigsResult(
            error_code=err, error_message=msg, resource_type=res.resource_type,
            resource_name=res.resource_name,
            configs=[_described(R, e, request.include_synonyms,
                                _DOCS[res.resource_type](e.name)
                                if request.include_documentation else None)
                     for e in entries]))
    return R(throttle_time_ms=0, results=results)


def _described(R: Any, e: Described, synonyms: bool, documentation: str | None) -> Any:
    return R.DescribeConfigsResourceResult(
        name=e.name, value=e.value, read_only=e.read_only, config_source=e.source,
        is_default=e.source == ConfigSource.DEFAULT_CONFIG, is_sensitive=e.sensitive,
        synonyms=[R.DescribeConfigsSynonym(name=n, value=v, source=s) for n, v, s in e.synonyms]
        if synonyms else [],
        config_type=e.type, documentation=documentation)
