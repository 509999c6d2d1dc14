"""The configs of a GROUP resource: which exist, and Kafka's checks of them.

kcsim's groups with configs of their own are consumer groups (KIP-848), streams
groups (KIP-1071) and share groups (KIP-932):
- consumer.session.timeout.ms, consumer.heartbeat.interval.ms and
  consumer.assignment.interval.ms;
- streams.session.timeout.ms, streams.heartbeat.interval.ms,
  streams.num.standby.replicas, streams.initial.rebalance.delay.ms and
  streams.assignment.interval.ms, and Kafka 4.4's internal (set, never described)
  streams.num.warmup.replicas, streams.acceptable.recovery.lag and
  streams.task.offset.interval.ms;
- share.session.timeout.ms, share.heartbeat.interval.ms, share.record.lock.duration.ms,
  share.delivery.count.limit, share.auto.offset.reset and share.isolation.level.
Any other name (Kafka's share.assignment.interval.ms, share.renew.acknowledge.enable,
streams.assignor.name, streams.rack.aware.assignment.tags
and the assignor offload switches, which kcsim has no use for) is refused as Kafka
refuses a name it does not know. Each must lie in the broker's range
(group.consumer.* / group.streams.* / group.share.* min and max, widened to the broker's own value where
kcsim was started outside Kafka's defaults), and a session must outlast its heartbeat
interval. The group coordinator folds the record and uses the values
(`coordinator/shared/group_configs.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.coordinator.shared.group_configs import (
    CONSUMER_ASSIGNMENT_INTERVAL_MS,
    CONSUMER_HEARTBEAT_INTERVAL_MS,
    CONSUMER_SESSION_TIMEOUT_MS,
    SHARE_AUTO_OFFSET_RESET,
    SHARE_DELIVERY_COUNT_LIMIT,
    SHARE_HEARTBEAT_INTERVAL_MS,
    SHARE_ISOLATION_LEVEL,
    SHARE_RECORD_LOCK_DURATION_MS,
    SHARE_SESSION_TIMEOUT_MS,
    STREAMS_ACCEPTABLE_RECOVERY_LAG,
    STREAMS_ASSIGNMENT_INTERVAL_MS,
    STREAMS_HEARTBEAT_INTERVAL_MS,
    STREAMS_INITIAL_REBALANCE_DELAY_MS,
    STREAMS_NUM_STANDBY_REPLICAS,
    STREAMS_NUM_WARMUP_REPLICAS,
    STREAMS_SESSION_TIMEOUT_MS,
    STREAMS_TASK_OFFSET_INTERVAL_MS,
)

from .config_defs import ConfigDef, ConfigProblem, ConfigType, at_least, one_of, parse

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kcsim.coordinator import GroupConfig

_INT = ConfigType.INT


def _def(name: str, default: str, low: int, kind: ConfigType = _INT) -> ConfigDef:
    return ConfigDef(name, kind, default, at_least(low))


GROUP_DEFINITIONS: dict[str, ConfigDef] = {d.name: d for d in (
    _def(CONSUMER_SESSION_TIMEOUT_MS, "45000", 1),
    _def(CONSUMER_HEARTBEAT_INTERVAL_MS, "5000", 1),
    _def(CONSUMER_ASSIGNMENT_INTERVAL_MS, "1000", 0),
    _def(STREAMS_SESSION_TIMEOUT_MS, "45000", 1),
    _def(STREAMS_HEARTBEAT_INTERVAL_MS, "5000", 1),
    _def(STREAMS_NUM_STANDBY_REPLICAS, "0", 0),
    _def(STREAMS_INITIAL_REBALANCE_DELAY_MS, "3000", 0),
    _def(STREAMS_ASSIGNMENT_INTERVAL_MS, "1000", 0),
    _def(STREAMS_NUM_WARMUP_REPLICAS, "2", 0),
    _def(STREAMS_ACCEPTABLE_RECOVERY_LAG, "10000", 0, ConfigType.LONG),
    _def(STREAMS_TASK_OFFSET_INTERVAL_MS, "60000", 1),
    _def(SHARE_SESSION_TIMEOUT_MS, "45000", 1),
    _def(SHARE_HEARTBEAT_INTERVAL_MS, "5000", 1),
    _def(SHARE_RECORD_LOCK_DURATION_MS, "30000", 1000),
    _def(SHARE_DELIVERY_COUNT_LIMIT, "5", 2),
    ConfigDef(SHARE_AUTO_OFFSET_RESET, ConfigType.STRING, "latest", one_of("latest", "earliest")),
    ConfigDef(SHARE_ISOLATION_LEVEL, ConfigType.STRING, "read_uncommitted",
              one_of("read_committed", "read_uncommitted")),
)}
# Kafka 4.4 defines these as internal: they can be set, but DescribeConfigs leaves them out.
INTERNAL_GROUP_CONFIGS = frozenset({STREAMS_NUM_WARMUP_REPLICAS, STREAMS_ACCEPTABLE_RECOVERY_LAG,
                      STREAMS_TASK_OFFSET_INTERVAL_MS})
# The broker config each is the group's default of: group.<name>, except the two share
# configs Kafka 4.4 names after themselves (they have no broker config of their own).
BROKER_SYNONYMS: dict[str, str] = {
    name: name if name in (SHARE_AUTO_OFFSET_RESET, SHARE_ISOLATION_LEVEL) else f"group.{name}"
    for name in GROUP_DEFINITIONS}


def broker_values(config: GroupConfig) -> dict[str, int | str]:
    """The broker's value of each group config: what a group without one takes."""
    return {CONSUMER_SESSION_TIMEOUT_MS: config.consumer_group_session_timeout_ms,
            CONSUMER_HEARTBEAT_INTERVAL_MS: config.consumer_group_heartbeat_interval_ms,
            CONSUMER_ASSIGNMENT_INTERVAL_MS: config.consumer_group_assignment_interval_ms,
            STREAMS_SESSION_TIMEOUT_MS: config.streams_group_session_timeout_ms,
            STREAMS_HEARTBEAT_INTERVAL_MS: config.streams_group_heartbeat_interval_ms,
            STREAMS_NUM_STANDBY_REPLICAS: config.streams_group_num_standby_replicas,
            STREAMS_INITIAL_REBALANCE_DELAY_MS: config.streams_group_initial_rebalance_delay_ms,
            STREAMS_ASSIGNMENT_INTERVAL_MS: config.streams_group_assignment_interval_ms,
            STREAMS_NUM_WARMUP_REPLICAS: config.streams_group_num_warmup_replicas,
            STREAMS_ACCEPTABLE_RECOVERY_LAG: config.streams_group_acceptable_recovery_lag,
            STREAMS_TASK_OFFSET_INTERVAL_MS: config.streams_group_task_offset_interval_ms,
            SHARE_SESSION_TIMEOUT_MS: config.share_group_session_timeout_ms,
            SHARE_HEARTBEAT_INTERVAL_MS: config.share_group_heartbeat_interval_ms,
            SHARE_RECORD_LOCK_DURATION_MS: config.share_group_record_lock_duration_ms,
            SHARE_DELIVERY_COUNT_LIMIT: config.share_group_delivery_count_limit,
            SHARE_AUTO_OFFSET_RESET: "latest",
            SHARE_ISOLATION_LEVEL: "read_uncommitted"}


def _limits(config: GroupConfig) -> dict[str, tuple[int | None, int | None]]:
    """The broker's bounds of each group config (None: unbounded on that side)."""
    return {
        CONSUMER_SESSION_TIMEOUT_MS: (config.consumer_group_min_session_timeout_ms,
                                      config.consumer_group_max_session_timeout_ms),
        CONSUMER_HEARTBEAT_INTERVAL_MS: (config.consumer_group_min_heartbeat_interval_ms,
                                         config.consumer_group_max_heartbeat_interval_ms),
        CONSUMER_ASSIGNMENT_INTERVAL_MS: (config.consumer_group_min_assignment_interval_ms,
                                          config.consumer_group_max_assignment_interval_ms),
        STREAMS_SESSION_TIMEOUT_MS: (config.streams_group_min_session_timeout_ms,
                                     config.streams_group_max_session_timeout_ms),
        STREAMS_HEARTBEAT_INTERVAL_MS: (config.streams_group_min_heartbeat_interval_ms,
                                        config.streams_group_max_heartbeat_interval_ms),
        STREAMS_NUM_STANDBY_REPLICAS: (None, config.streams_group_max_standby_replicas),
        STREAMS_ASSIGNMENT_INTERVAL_MS: (config.streams_group_min_assignment_interval_ms,
                                         config.streams_group_max_assignment_interval_ms),
        STREAMS_NUM_WARMUP_REPLICAS: (None, config.streams_group_max_warmup_replicas),
        STREAMS_TASK_OFFSET_INTERVAL_MS: (config.streams_group_min_task_offset_interval_ms,
                                          None),
        # Kafka's group.share.min/max.* defaults (kcsim has no settings for them)
        SHARE_SESSION_TIMEOUT_MS: (45000, 60000),
        SHARE_HEARTBEAT_INTERVAL_MS: (5000, 15000),
        SHARE_RECORD_LOCK_DURATION_MS: (15000, 60000),
        SHARE_DELIVERY_COUNT_LIMIT: (2, 10),
    }


# Each session time-out and the heartbeat interval it must exceed.
_SESSIONS = ((CONSUMER_SESSION_TIMEOUT_MS, CONSUMER_HEARTBEAT_INTERVAL_MS),
             (STREAMS_SESSION_TIMEOUT_MS, STREAMS_HEARTBEAT_INTERVAL_MS),
             (SHARE_SESSION_TIMEOUT_MS, SHARE_HEARTBEAT_INTERVAL_MS))


def check_group_configs(configs: Mapping[str, str], config: GroupConfig) -> None:
    """Kafka's validation of a group's configs (ConfigProblem with its message)."""
    for name in configs:
        if name not in GROUP_DEFINITIONS:
            raise ConfigProblem(f"Unknown group config name: {name}")
    values = broker_values(config)
    for name, text in configs.items():
        value = parse(GROUP_DEFINITIONS[name], text)
        assert isinstance(value, int | str)
        values[name] = value
    broker = broker_values(config)
    limits = _limits(config)
    for name in configs:
        value, served = values[name], broker[name]
        if not isinstance(value, int) or not isinstance(served, int):
            continue  # a string: its definition checked it
        low, high = limits.get(name, (None, None))
        low = None if low is None else min(low, served)
        high = None if high is None else max(high, served)
        _check_bounds(name, value, low, high)
    for session, heartbeat in _SESSIONS:
        if (session in configs or heartbeat in configs) and int(values[session]) <= int(
                values[heartbeat]):
            raise ConfigProblem(f"{session} must be greater than {heartbeat}")


def _check_bounds(name: str, value: int, low: int | None, high: int | None) -> None:
    if low is not None and high is not None:
        if not low <= value <= high:
            raise ConfigProblem(f"{name} must be in the range {low} to {high} inclusive.")
    elif high is not None and value > high:
        raise ConfigProblem(f"{name} must be less than or equal to {high}")
    elif low is not None and value < low:
        raise ConfigProblem(f"{name} must be greater than or equal to {low}")
