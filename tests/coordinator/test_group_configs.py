"""A group's own configs (IncrementalAlterConfigs on a GROUP resource) rule its members:
the heartbeat interval they are given and the session after which they are fenced."""

from __future__ import annotations

from kcsim.coordinator.records import GroupConfigKey, GroupConfigValue
from kcsim.storage.records import Record

from .consumer_harness import Client, Harness, config


def configure(h: Harness, group: str, **configs: str) -> None:
    """Fold a group_config record as the broker writes it (None: its configs deleted)."""
    record = Record(GroupConfigKey(group), GroupConfigValue(configs) if configs else None)
    h.gc.apply(record)
    h.records.append(record)


def test_a_group_config_sets_the_heartbeat_interval_and_session_of_that_group_only() -> None:
    h = Harness(config(consumer_group_heartbeat_interval_ms=700,
                       consumer_group_session_timeout_ms=3000))
    configure(h, "g", **{"consumer.heartbeat.interval.ms": "900",
                         "consumer.session.timeout.ms": "8000"})
    mine, other = Client(h, "g"), Client(h, "other")
    assert mine.join().heartbeat_interval_ms == 900
    assert other.join().heartbeat_interval_ms == 700
    h.advance(3000)
    assert not h.gc.consumer_group("other").members
    assert mine.member_id in h.gc.consumer_group("g").members
    h.advance(5000)
    assert not h.gc.consumer_group("g").members


def test_a_change_applies_from_each_members_next_heartbeat() -> None:
    h = Harness(config(consumer_group_session_timeout_ms=3000))
    a = Client(h, "g")
    a.join()
    configure(h, "g", **{"consumer.session.timeout.ms": "10000"})
    h.advance(2000)
    assert a.beat().heartbeat_interval_ms == 5000  # the broker's, not set on the group
    h.advance(9000)
    assert a.member_id in h.gc.consumer_group("g").members
    configure(h, "g")  # deleted: the broker's session again, from the next heartbeat
    assert a.beat().error_code == 0
    h.advance(3000)
    assert not h.gc.consumer_group("g").members


def test_group_configs_survive_a_restart() -> None:
    h = Harness()
    configure(h, "g", **{"consumer.heartbeat.interval.ms": "6000"})
    h.restart()
    assert h.gc.group_configs("g") == {"consumer.heartbeat.interval.ms": "6000"}
    assert Client(h, "g").join().heartbeat_interval_ms == 6000
