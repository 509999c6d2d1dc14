"""Each group's own configs, a fold of group_config records: a consumer group's
(KIP-848) consumer.session.timeout.ms, consumer.heartbeat.interval.ms and
consumer.assignment.interval.ms, and a streams group's (KIP-1071) streams.* ones.

A group without one takes the broker's (`GroupConfig`). The values were checked
before their record was written (the broker's IncrementalAlterConfigs), so the fold
only reads them; a member's session and heartbeat interval are read here each time
they are armed or answered, the assignment interval and a streams group's standby
replicas each time a heartbeat could compute a target, so a change applies from the
group's next heartbeat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kcsim.storage.records import Record

    from .interface import GroupConfig

CONSUMER_SESSION_TIMEOUT_MS = "consumer.session.timeout.ms"
CONSUMER_HEARTBEAT_INTERVAL_MS = "consumer.heartbeat.interval.ms"
CONSUMER_ASSIGNMENT_INTERVAL_MS = "consumer.assignment.interval.ms"
STREAMS_SESSION_TIMEOUT_MS = "streams.session.timeout.ms"
STREAMS_HEARTBEAT_INTERVAL_MS = "streams.heartbeat.interval.ms"
STREAMS_NUM_STANDBY_REPLICAS = "streams.num.standby.replicas"
STREAMS_INITIAL_REBALANCE_DELAY_MS = "streams.initial.rebalance.delay.ms"
STREAMS_ASSIGNMENT_INTERVAL_MS = "streams.assignment.interval.ms"
STREAMS_NUM_WARMUP_REPLICAS = "streams.num.warmup.replicas"
STREAMS_ACCEPTABLE_RECOVERY_LAG = "streams.acceptable.recovery.lag"
STREAMS_TASK_OFFSET_INTERVAL_MS = "streams.task.offset.interval.ms"
SHARE_SESSION_TIMEOUT_MS = "share.session.timeout.ms"
SHARE_HEARTBEAT_INTERVAL_MS = "share.heartbeat.interval.ms"
SHARE_RECORD_LOCK_DURATION_MS = "share.record.lock.duration.ms"
SHARE_DELIVERY_COUNT_LIMIT = "share.delivery.count.limit"
SHARE_AUTO_OFFSET_RESET = "share.auto.offset.reset"
SHARE_ISOLATION_LEVEL = "share.isolation.level"


class GroupConfigs:
    def __init__(self, config: GroupConfig) -> None:
        self._config = config
        self._overrides: dict[str, dict[str, str]] = {}

    def apply(self, record: Record) -> None:
        """Fold a group_config record (a tombstone: the group's configs are gone)."""
        group = record.key.group
        if record.value is None or not record.value.configs:
            self._overrides.pop(group, None)
        else:
            self._overrides[group] = dict(record.value.configs)

    def overrides(self, group_id: str) -> dict[str, str]:
        """The configs set on this group (a copy)."""
        return dict(self._overrides.get(group_id, {}))

    def _int(self, group_id: str, name: str, broker: int) -> int:
        value = self._overrides.get(group_id, {}).get(name)
        return broker if value is None else int(value)

    def session_timeout_ms(self, group_id: str) -> int:
        return self._int(group_id, CONSUMER_SESSION_TIMEOUT_MS,
                         self._config.consumer_group_session_timeout_ms)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self._int(group_id, CONSUMER_HEARTBEAT_INTERVAL_MS,
                         self._config.consumer_group_heartbeat_interval_ms)

    def assignment_interval_ms(self, group_id: str) -> int:
        return self._int(group_id, CONSUMER_ASSIGNMENT_INTERVAL_MS,
                         self._config.consumer_group_assignment_interval_ms)

    # -- streams groups -------------------------------------------------------------

    def streams_session_timeout_ms(self, group_id: str) -> int:
        return self._int(group_id, STREAMS_SESSION_TIMEOUT_MS,
                         self._config.streams_group_session_timeout_ms)

    def streams_heartbeat_interval_ms(self, group_id: str) -> int:
        return self._int(group_id, STREAMS_HEARTBEAT_INTERVAL_MS,
                         self._config.streams_group_heartbeat_interval_ms)

    def streams_num_standby_replicas(self, group_id: str) -> int:
        return self._int(group_id, STREAMS_NUM_STANDBY_REPLICAS,
                         self._config.streams_group_num_standby_replicas)

    def streams_initial_rebalance_delay_ms(self, group_id: str) -> int:
        return self._int(group_id, STREAMS_INITIAL_REBALANCE_DELAY_MS,
                         self._config.streams_group_initial_rebalance_delay_ms)

    def streams_assignment_interval_ms(self, group_id: str) -> int:
        return self._int(group_id, STREAMS_ASSIGNMENT_INTERVAL_MS,
                         self._config.streams_group_assignment_interval_ms)

    def streams_acceptable_recovery_lag(self, group_id: str) -> int:
        return self._int(group_id, STREAMS_ACCEPTABLE_RECOVERY_LAG,
                         self._config.streams_group_acceptable_recovery_lag)

    def streams_task_offset_interval_ms(self, group_id: str) -> int:
        return self._int(group_id, STREAMS_TASK_OFFSET_INTERVAL_MS,
                         self._config.streams_group_task_offset_interval_ms)

    def streams_assignment_configs(self, group_id: str) -> tuple[tuple[str, str], ...]:
        """What a streams group's target is computed with, as Kafka 4.4 records it with the
        group epoch (its lastAssignmentConfigs): a change bumps the epoch."""
        return (("num.standby.replicas", str(self.streams_num_standby_replicas(group_id))),)

    # -- share groups --------------------------------------------------------------

    def share_session_timeout_ms(self, group_id: str) -> int:
        return self._int(group_id, SHARE_SESSION_TIMEOUT_MS,
                         self._config.share_group_session_timeout_ms)

    def share_heartbeat_interval_ms(self, group_id: str) -> int:
        return self._int(group_id, SHARE_HEARTBEAT_INTERVAL_MS,
                         self._config.share_group_heartbeat_interval_ms)

    def share_record_lock_duration_ms(self, group_id: str) -> int:
        return self._int(group_id, SHARE_RECORD_LOCK_DURATION_MS,
                         self._config.share_group_record_lock_duration_ms)

    def share_delivery_count_limit(self, group_id: str) -> int:
        return self._int(group_id, SHARE_DELIVERY_COUNT_LIMIT,
                         self._config.share_group_delivery_count_limit)

    def share_auto_offset_reset(self, group_id: str) -> str:
        """Where a share partition first starts: "latest" (Kafka's default) or "earliest"."""
        return self._overrides.get(group_id, {}).get(SHARE_AUTO_OFFSET_RESET, "latest")

    def share_read_committed(self, group_id: str) -> bool:
        value = self._overrides.get(group_id, {}).get(SHARE_ISOLATION_LEVEL, "read_uncommitted")
        return value == "read_committed"
