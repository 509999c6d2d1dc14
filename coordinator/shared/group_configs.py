"""Each group's own configs (KIP-848: consumer.session.timeout.ms,
consumer.heartbeat.interval.ms and consumer.assignment.interval.ms), a fold of
group_config records.

A group without one takes the broker's (`GroupConfig`). The values were checked
before their record was written (the broker's IncrementalAlterConfigs), so the fold
only reads them; a member's session and heartbeat interval are read here each time
they are armed or answered, and the assignment interval each time a heartbeat could
compute a target, so a change applies from the group's next heartbeat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kcsim.storage.records import Record

    from .interface import GroupConfig

CONSUMER_SESSION_TIMEOUT_MS = "consumer.session.timeout.ms"
CONSUMER_HEARTBEAT_INTERVAL_MS = "consumer.heartbeat.interval.ms"
CONSUMER_ASSIGNMENT_INTERVAL_MS = "consumer.assignment.interval.ms"


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

    def session_timeout_ms(self, group_id: str) -> int:
        value = self._overrides.get(group_id, {}).get(CONSUMER_SESSION_TIMEOUT_MS)
        return self._config.consumer_group_session_timeout_ms if value is None else int(value)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        value = self._overrides.get(group_id, {}).get(CONSUMER_HEARTBEAT_INTERVAL_MS)
        return self._config.consumer_group_heartbeat_interval_ms if value is None else int(value)

    def assignment_interval_ms(self, group_id: str) -> int:
        value = self._overrides.get(group_id, {}).get(CONSUMER_ASSIGNMENT_INTERVAL_MS)
        return self._config.consumer_group_assignment_interval_ms if value is None else int(value)
