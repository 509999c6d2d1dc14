"""The broker's dynamic config records: what IncrementalAlterConfigs and AlterConfigs set
on a BROKER resource, cluster-wide (resource name "") or for one node ("1").

A topic's configs live in its topic record (`topic_records`), a group's in the group
coordinator's group_config record; these are the broker's own. Each record holds a
resource's whole set of overrides, so replay keeps the last one.
"""

from __future__ import annotations

from msgspec import Struct

from kcsim.storage.records import RecordType


class BrokerConfigKey(Struct, frozen=True, array_like=True, gc=False):
    resource_name: str  # "" for the cluster's default, else a node id


class BrokerConfigValue(Struct, array_like=True, gc=False):
    configs: dict[str, str] = {}


BROKER_CONFIG_RECORD_TYPES: tuple[RecordType, ...] = (
    RecordType(20, "broker_config", BrokerConfigKey, BrokerConfigValue),
)
