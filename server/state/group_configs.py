"""The configs of a GROUP resource (KIP-848): which exist, and Kafka's checks of them.

kcsim's groups are classic and consumer groups, so a group has the consumer group's
three: consumer.session.timeout.ms, consumer.heartbeat.interval.ms and
consumer.assignment.interval.ms. Any other name (Kafka's share.*, streams.* and
consumer.assignor.offload.enable, which kcsim's groups have no use for) is refused as
Kafka refuses a name it does not know. Each must lie in the broker's range
(group.consumer.min/max.*, widened to the broker's own value where kcsim was started
outside Kafka's defaults), and the session must outlast the heartbeat interval. The
group coordinator folds the record and uses the values
(`coordinator/shared/group_configs.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.coordinator.shared.group_configs import (
    CONSUMER_ASSIGNMENT_INTERVAL_MS,
    CONSUMER_HEARTBEAT_INTERVAL_MS,
    CONSUMER_SESSION_TIMEOUT_MS,
)

from .config_defs import ConfigDef, ConfigProblem, ConfigType, at_least, parse

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kcsim.coordinator import GroupConfig

GROUP_DEFINITIONS: dict[str, ConfigDef] = {
    CONSUMER_SESSION_TIMEOUT_MS: ConfigDef(CONSUMER_SESSION_TIMEOUT_MS, ConfigType.INT, "45000",
                                           at_least(1)),
    CONSUMER_HEARTBEAT_INTERVAL_MS: ConfigDef(CONSUMER_HEARTBEAT_INTERVAL_MS, ConfigType.INT,
                                              "5000", at_least(1)),
    CONSUMER_ASSIGNMENT_INTERVAL_MS: ConfigDef(CONSUMER_ASSIGNMENT_INTERVAL_MS, ConfigType.INT,
                                               "1000", at_least(0)),
}
# The broker config each is the group's default of.
BROKER_SYNONYMS: dict[str, str] = {
    CONSUMER_SESSION_TIMEOUT_MS: "group.consumer.session.timeout.ms",
    CONSUMER_HEARTBEAT_INTERVAL_MS: "group.consumer.heartbeat.interval.ms",
    CONSUMER_ASSIGNMENT_INTERVAL_MS: "group.consumer.assignment.interval.ms",
}


def broker_values(config: GroupConfig) -> dict[str, int]:
    """The broker's value of each group config: what a group without one takes."""
    return {CONSUMER_SESSION_TIMEOUT_MS: config.consumer_group_session_timeout_ms,
            CONSUMER_HEARTBEAT_INTERVAL_MS: config.consumer_group_heartbeat_interval_ms,
            CONSUMER_ASSIGNMENT_INTERVAL_MS: config.consumer_group_assignment_interval_ms}


def check_group_configs(configs: Mapping[str, str], config: GroupConfig) -> None:
    """Kafka's validation of a group's configs (ConfigProblem with its message)."""
    for name in configs:
        if name not in GROUP_DEFINITIONS:
            raise ConfigProblem(f"Unknown group config name: {name}")
    values = broker_values(config)
    for name, text in configs.items():
        value = parse(GROUP_DEFINITIONS[name], text)
        assert isinstance(value, int)
        values[name] = value
    ranges = {
        CONSUMER_SESSION_TIMEOUT_MS: (config.consumer_group_min_session_timeout_ms,
                                      config.consumer_group_max_session_timeout_ms),
        CONSUMER_HEARTBEAT_INTERVAL_MS: (config.consumer_group_min_heartbeat_interval_ms,
                                         config.consumer_group_max_heartbeat_interval_ms),
        CONSUMER_ASSIGNMENT_INTERVAL_MS: (config.consumer_group_min_assignment_interval_ms,
                                          config.consumer_group_max_assignment_interval_ms),
    }
    broker = broker_values(config)
    for name in configs:
        low, high = ranges[name]
        low, high = min(low, broker[name]), max(high, broker[name])
        if not low <= values[name] <= high:
            raise ConfigProblem(f"{name} must be in the range {low} to {high} inclusive.")
    if values[CONSUMER_SESSION_TIMEOUT_MS] <= values[CONSUMER_HEARTBEAT_INTERVAL_MS]:
        raise ConfigProblem(f"{CONSUMER_SESSION_TIMEOUT_MS} must be greater than "
                            f"{CONSUMER_HEARTBEAT_INTERVAL_MS}")
