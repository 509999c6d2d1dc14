"""Kafka 4.4's topic configs: names, types, defaults, validators and broker synonyms.

A topic's config is its override if it has one, else the broker's dynamic value of
its synonym (per broker, then cluster-wide), else the default; DescribeConfigs
shows the levels as synonyms. `check_topic_configs` validates a topic's whole set of
overrides as Kafka's controller does (unknown names first, then each value).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from .config_defs import ConfigDef, ConfigProblem, ConfigType, at_least, between, one_of, parse

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .config_defs import Check

B, S, INT, L, D, LIST = (ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT, ConfigType.LONG,
                         ConfigType.DOUBLE, ConfigType.LIST)
LONG_MAX = str(2**63 - 1)
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")


class TopicConfig(NamedTuple):
    config: ConfigDef
    synonym: str | None  # the broker config that is its default, if any
    # The default Kafka lists below a dynamic value of a synonym that has none of its own
    # (retention.ms lists log.retention.hours=168 then, nothing otherwise); None: the
    # synonym's own default, always listed; ("", None): nothing is listed.
    quiet_default: tuple[str, str | None] | None = None

    @property
    def name(self) -> str:
        return self.config.name


def _gzip_level(name: str, value: object) -> None:
    if value != -1 and not (isinstance(value, int) and 1 <= value <= 9):
        raise ConfigProblem(f"Invalid value {value} for configuration {name}: "
                            "Value must be between 1 and 9, or equal to -1")


def _topic(name: str, kind: ConfigType, default: str, check: Check | None = None,
           synonym: str | None = None,
           quiet_default: tuple[str, str | None] | None = None) -> TopicConfig:
    return TopicConfig(ConfigDef(name, kind, default, check), synonym, quiet_default)


TOPIC_CONFIGS: dict[str, TopicConfig] = {t.name: t for t in (
    _topic("cleanup.policy", LIST, "delete", one_of("compact", "delete"), "log.cleanup.policy"),
    _topic("compression.gzip.level", INT, "-1", _gzip_level, "compression.gzip.level"),
    _topic("compression.lz4.level", INT, "9", between(1, 17), "compression.lz4.level"),
    _topic("compression.type", S, "producer", one_of(*COMPRESSION_TYPES), "compression.type"),
    _topic("compression.zstd.level", INT, "3", between(-131072, 22), "compression.zstd.level"),
    _topic("delete.retention.ms", L, "86400000", at_least(0), "log.cleaner.delete.retention.ms"),
    _topic("errors.deadletterqueue.group.enable", B, "false"),
    _topic("file.delete.delay.ms", L, "60000", at_least(0), "log.segment.delete.delay.ms"),
    _topic("flush.messages", L, LONG_MAX, at_least(1), "log.flush.interval.messages"),
    _topic("flush.ms", L, LONG_MAX, at_least(0), "log.flush.interval.ms", ("", None)),
    _topic("follower.replication.throttled.replicas", LIST, ""),
    _topic("index.interval.bytes", INT, "4096", at_least(0), "log.index.interval.bytes"),
    _topic("leader.replication.throttled.replicas", LIST, ""),
    _topic("local.retention.bytes", L, "-2", at_least(-2), "log.local.retention.bytes"),
    _topic("local.retention.ms", L, "-2", at_least(-2), "log.local.retention.ms"),
    _topic("max.compaction.lag.ms", L, LONG_MAX, at_least(1), "log.cleaner.max.compaction.lag.ms"),
    _topic("max.decompressed.message.bytes", INT, "2147483639", at_least(0),
           "max.decompressed.message.bytes"),
    _topic("max.message.bytes", INT, "1048588", at_least(0), "message.max.bytes"),
    _topic("message.timestamp.after.max.ms", L, "3600000", at_least(0),
           "log.message.timestamp.after.max.ms"),
    _topic("message.timestamp.before.max.ms", L, LONG_MAX, at_least(0),
           "log.message.timestamp.before.max.ms"),
    _topic("message.timestamp.type", S, "CreateTime", one_of("CreateTime", "LogAppendTime"),
           "log.message.timestamp.type"),
    _topic("min.cleanable.dirty.ratio", D, "0.5", between(0, 1), "log.cleaner.min.cleanable.ratio"),
    _topic("min.compaction.lag.ms", L, "0", at_least(0), "log.cleaner.min.compaction.lag.ms"),
    _topic("min.insync.replicas", INT, "1", at_least(1), "min.insync.replicas"),
    _topic("preallocate", B, "false", None, "log.preallocate"),
    _topic("remote.copy.lag.bytes", L, "-1", None, "log.remote.copy.lag.bytes"),
    _topic("remote.copy.lag.ms", L, "0", None, "log.remote.copy.lag.ms"),
    _topic("remote.log.copy.disable", B, "false"),
    _topic("remote.log.delete.on.disable", B, "false"),
    _topic("remote.storage.enable", B, "false"),
    _topic("retention.bytes", L, "-1", None, "log.retention.bytes"),
    _topic("retention.ms", L, "604800000", at_least(-1), "log.retention.ms",
           ("log.retention.hours", "168")),
    _topic("segment.bytes", INT, "1073741824", at_least(1024 * 1024), "log.segment.bytes"),
    _topic("segment.index.bytes", INT, "10485760", at_least(4), "log.index.size.max.bytes"),
    _topic("segment.jitter.ms", L, "0", at_least(0), "log.roll.jitter.ms", ("", None)),
    _topic("segment.ms", L, "604800000", at_least(1), "log.roll.ms", ("log.roll.hours", "168")),
    _topic("unclean.leader.election.enable", B, "false", None, "unclean.leader.election.enable"),
)}

TOPIC_DEFINITIONS: dict[str, ConfigDef] = {name: t.config for name, t in TOPIC_CONFIGS.items()}


def check_topic_configs(configs: Mapping[str, str]) -> None:
    """Kafka's validation of a topic's overrides (ConfigProblem with its message)."""
    for name in configs:
        if name not in TOPIC_CONFIGS:
            raise ConfigProblem(f"Unknown topic config name: {name}")
    for name, value in configs.items():
        parse(TOPIC_DEFINITIONS[name], value)
