"""Configs are durable: a topic's, the broker's and a group's survive a SIGKILL and a restart,
and a group's still rules its members' heartbeat interval afterwards."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from kcsim.protocol.codecs import request_class

from .test_crash import kill
from .wire import Wire

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.timeout(120)

TOPIC, BROKER, GROUP = 2, 4, 32
SET = 0
Incremental, Describe, Heartbeat = (request_class(k) for k in (44, 32, 68))


def alter(wire: Wire, kind: int, name: str, **configs: str) -> None:
    R = Incremental
    response = wire.call(44, 1, R(resources=[R.AlterConfigsResource(
        resource_type=kind, resource_name=name, configs=[
            R.AlterableConfig(name=k.replace("_", "."), config_operation=SET, value=v)
            for k, v in configs.items()])]))
    assert [r.error_code for r in response.responses] == [0], response


def described(wire: Wire, kind: int, name: str, keys: list[str]) -> dict[str, tuple[str, int]]:
    response = wire.call(32, 4, Describe(resources=[Describe.DescribeConfigsResource(
        resource_type=kind, resource_name=name, configuration_keys=keys)]))
    return {c.name: (c.value, c.config_source) for c in response.results[0].configs}


def snapshot(server: Any) -> dict[str, Any]:
    with Wire.to(server) as wire:
        return {
            "topic": described(wire, TOPIC, "events", ["retention.ms", "cleanup.policy"]),
            "broker": described(wire, BROKER, "", ["log.retention.bytes"]),
            "group": described(wire, GROUP, "g", ["consumer.heartbeat.interval.ms"]),
        }


def test_configs_survive_a_crash(kcsim_factory: Callable[..., Any]) -> None:
    server = kcsim_factory(fsync="always")
    with Wire.to(server) as wire:
        wire.create_topic("events", 1)
        alter(wire, TOPIC, "events", retention_ms="3600000", cleanup_policy="compact")
        alter(wire, BROKER, "", log_retention_bytes="1048576")
        alter(wire, GROUP, "g", consumer_heartbeat_interval_ms="7000")
    before = snapshot(server)
    assert before == {
        "topic": {"retention.ms": ("3600000", 1), "cleanup.policy": ("compact", 1)},
        "broker": {"log.retention.bytes": ("1048576", 3)},
        "group": {"consumer.heartbeat.interval.ms": ("7000", 8)},
    }
    kill(server)
    server.start()
    assert snapshot(server) == before
    with Wire.to(server) as wire:
        joined = wire.call(68, 0, Heartbeat(group_id="g", member_id="", member_epoch=0,
                                            rebalance_timeout_ms=30000,
                                            subscribed_topic_names=["events"],
                                            topic_partitions=[]))
    assert (joined.error_code, joined.heartbeat_interval_ms) == (0, 7000)
