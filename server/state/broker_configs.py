"""The broker's configs as DescribeConfigs shows them, and the ones that change at run time.

Static configs are `kcsim serve` settings read once at start (offsets retention, the
group time-outs, auto-creation, ...): DescribeConfigs shows them read-only, and
altering one is refused as Kafka refuses a config it cannot update dynamically.
Dynamic configs are Kafka's dynamic log configs: the broker-wide defaults of topic
configs (log.retention.ms for retention.ms, log.cleanup.policy, message.max.bytes,
...), set cluster-wide (resource name "") or for this node; a topic without an
override of its own takes them. Names the broker does not know are kept and shown
as Kafka shows them (read-only, sensitive, without a value).

`BrokerConfigs` is the fold of broker_config records (`config_records`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from .config_defs import ConfigDef, ConfigProblem, ConfigSource, ConfigType, parse
from .topic_configs import TOPIC_CONFIGS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from kcsim.storage.records import Record

    from ..config import Config

CLUSTER = ""  # the resource name of the cluster-wide default


class Static(NamedTuple):
    type: ConfigType
    value: Callable[[Config], object]  # from the server's settings
    default: str | None  # Kafka's default: a value equal to it shows as the default

    def text(self, config: Config) -> str:
        got = self.value(config)
        return str(got).lower() if isinstance(got, bool) else str(got)


_INT = ConfigType.INT
# Read at start only.
STATIC_CONFIGS: dict[str, Static] = {
    "auto.create.topics.enable": Static(ConfigType.BOOLEAN, lambda c: c.auto_create_topics, "true"),
    "broker.id": Static(_INT, lambda c: c.node_id, "-1"),
    "default.replication.factor": Static(_INT, lambda c: 1, "1"),
    "group.consumer.assignment.interval.ms": Static(
        _INT, lambda c: c.consumer_group_assignment_interval_ms, "1000"),
    "group.consumer.heartbeat.interval.ms": Static(
        _INT, lambda c: c.consumer_group_heartbeat_interval_ms, "5000"),
    "group.consumer.max.assignment.interval.ms": Static(
        _INT, lambda c: c.consumer_group_max_assignment_interval_ms, "15000"),
    "group.consumer.max.heartbeat.interval.ms": Static(
        _INT, lambda c: c.consumer_group_max_heartbeat_interval_ms, "15000"),
    "group.consumer.max.session.timeout.ms": Static(
        _INT, lambda c: c.consumer_group_max_session_timeout_ms, "60000"),
    "group.consumer.min.assignment.interval.ms": Static(
        _INT, lambda c: c.consumer_group_min_assignment_interval_ms, "0"),
    "group.consumer.min.heartbeat.interval.ms": Static(
        _INT, lambda c: c.consumer_group_min_heartbeat_interval_ms, "5000"),
    "group.consumer.min.session.timeout.ms": Static(
        _INT, lambda c: c.consumer_group_min_session_timeout_ms, "45000"),
    "group.consumer.session.timeout.ms": Static(
        _INT, lambda c: c.consumer_group_session_timeout_ms, "45000"),
    "group.initial.rebalance.delay.ms": Static(_INT, lambda c: c.initial_rebalance_delay_ms, "3000"),
    "group.max.session.timeout.ms": Static(_INT, lambda c: c.max_session_timeout_ms, "1800000"),
    "group.min.session.timeout.ms": Static(_INT, lambda c: c.min_session_timeout_ms, "6000"),
    "node.id": Static(_INT, lambda c: c.node_id, None),
    "log.retention.hours": Static(_INT, lambda c: 168, "168"),
    "num.partitions": Static(_INT, lambda c: c.default_partitions, "1"),
    "offsets.retention.minutes": Static(_INT, lambda c: c.offsets_retention_ms // 60000, "10080"),
    "offsets.topic.num.partitions": Static(_INT, lambda c: c.offsets_topic_num_partitions, "50"),
    "offsets.topic.replication.factor": Static(ConfigType.SHORT, lambda c: 1, "3"),
    "transaction.max.timeout.ms": Static(_INT, lambda c: c.transaction_max_timeout_ms, "900000"),
}


class Dynamic(NamedTuple):
    config: ConfigDef
    # The default Kafka lists below a dynamic value instead of this config's own
    # (log.retention.hours=168 below log.retention.ms); None: its own, ("", None): none.
    quiet_default: tuple[str, str | None] | None


def _dynamic() -> dict[str, Dynamic]:
    out = {}
    for topic in TOPIC_CONFIGS.values():
        if topic.synonym is None:
            continue
        # A synonym Kafka lists only below a dynamic value has no default of its own.
        default = None if topic.quiet_default is not None else topic.config.default
        out[topic.synonym] = Dynamic(topic.config._replace(name=topic.synonym, default=default),
                                     topic.quiet_default)
    return out


DYNAMIC_CONFIGS: dict[str, Dynamic] = _dynamic()
DYNAMIC_DEFINITIONS: dict[str, ConfigDef] = {n: d.config for n, d in DYNAMIC_CONFIGS.items()}

Synonym = tuple[str, str | None, ConfigSource]


class Described(NamedTuple):
    """One config of a broker as DescribeConfigs lists it, with its synonyms, nearest first."""

    name: str
    value: str | None
    read_only: bool
    source: ConfigSource
    type: ConfigType
    synonyms: list[Synonym]
    sensitive: bool = False


class BrokerConfigs:
    """The dynamic overrides by resource name ("" cluster-wide, else a node id)."""

    def __init__(self) -> None:
        # A Kafka 4.x cluster is formatted with min.insync.replicas=1 set cluster-wide
        # (where it shows, as the source of every topic's min.insync.replicas); records
        # change it from there as they change any dynamic config.
        self._by_resource: dict[str, dict[str, str]] = {CLUSTER: {"min.insync.replicas": "1"}}

    def apply(self, record: Record) -> None:
        name = record.key.resource_name
        if record.value is None or not record.value.configs:
            self._by_resource.pop(name, None)
        else:
            self._by_resource[name] = dict(record.value.configs)

    def overrides(self, resource_name: str) -> dict[str, str]:
        return dict(self._by_resource.get(resource_name, {}))

    def chain(self, name: str, node_id: int) -> list[Synonym]:
        """A dynamic broker config's values, nearest first: this node's, the cluster's,
        then the default Kafka lists (see `Dynamic.quiet_default`)."""
        out: list[Synonym] = []
        for resource, source in ((str(node_id), ConfigSource.DYNAMIC_BROKER_CONFIG),
                                 (CLUSTER, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)):
            value = self._by_resource.get(resource, {}).get(name)
            if value is not None:
                out.append((name, value, source))
        dynamic = DYNAMIC_CONFIGS.get(name)
        if dynamic is None:
            return out
        if dynamic.quiet_default is None:
            out.append((name, dynamic.config.default, ConfigSource.DEFAULT_CONFIG))
        elif out and dynamic.quiet_default[0]:
            out.append((*dynamic.quiet_default, ConfigSource.DEFAULT_CONFIG))
        return out

    def describe(self, resource_name: str, config: Config) -> list[Described]:
        """A broker's configs (this node's) or the cluster's dynamic defaults ("")."""
        if resource_name == CLUSTER:
            return [self._dynamic(name, [(name, value, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)])
                    for name, value in sorted(self._by_resource.get(CLUSTER, {}).items())]
        out = [_static(name, static, config) for name, static in STATIC_CONFIGS.items()]
        stored = {name for resource in (str(config.node_id), CLUSTER)
                  for name in self._by_resource.get(resource, {}) if name not in STATIC_CONFIGS}
        out += [self._dynamic(name, self.chain(name, config.node_id))
                for name in sorted(stored | set(DYNAMIC_CONFIGS))]
        return sorted(out)

    @staticmethod
    def _dynamic(name: str, chain: list[Synonym]) -> Described:
        dynamic = DYNAMIC_CONFIGS.get(name)
        if dynamic is None:  # a name Kafka does not know: kept, shown as sensitive
            return Described(name, None, True, chain[0][2], ConfigType.UNKNOWN,
                             [(name, None, chain[0][2])], True)
        if chain and chain[0][0] == name:
            return Described(name, chain[0][1], False, chain[0][2], dynamic.config.type, chain)
        return Described(name, dynamic.config.default, False, ConfigSource.DEFAULT_CONFIG,
                         dynamic.config.type, chain)


def _static(name: str, static: Static, config: Config) -> Described:
    value = static.text(config)
    if value == static.default:
        return Described(name, value, True, ConfigSource.DEFAULT_CONFIG, static.type,
                         [(name, value, ConfigSource.DEFAULT_CONFIG)])
    synonyms: list[Synonym] = [(name, value, ConfigSource.STATIC_BROKER_CONFIG)]
    if static.default is not None:
        synonyms.append((name, static.default, ConfigSource.DEFAULT_CONFIG))
    return Described(name, value, True, ConfigSource.STATIC_BROKER_CONFIG, static.type, synonyms)


def check_broker_changes(names: Iterable[str], configs: dict[str, str]) -> None:
    """Kafka's checks of a broker resource's new overrides: no static config among the
    names changed, and each dynamic value valid (ConfigProblem with Kafka's message)."""
    fixed = [name for name in dict.fromkeys(names) if name in STATIC_CONFIGS]
    if fixed:
        raise ConfigProblem("Cannot update these configs dynamically: [" + ", ".join(fixed) + "]")
    for name, value in configs.items():
        definition = DYNAMIC_DEFINITIONS.get(name)
        if definition is not None:
            parse(definition, value)
