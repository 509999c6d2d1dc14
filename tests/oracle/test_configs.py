"""Configs, kcsim against Kafka: IncrementalAlterConfigs and AlterConfigs on a topic, the
broker and a group, then what DescribeConfigs shows of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class

from . import ops

if TYPE_CHECKING:
    from collections.abc import Callable

    from .harness import Run

DESCRIBE_CONFIGS, ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 32, 33, 44
TOPIC, BROKER, GROUP = 2, 4, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
GROUP_KEYS = ["consumer.session.timeout.ms", "consumer.heartbeat.interval.ms",
              "consumer.assignment.interval.ms"]
Differential = Any


def incremental(run: Run, kind: int, name: str, *ops_: tuple[str, int, str | None],
                validate_only: bool = False) -> Any:
    R = request_class(INCREMENTAL_ALTER_CONFIGS)
    return run.call(INCREMENTAL_ALTER_CONFIGS, 1, R(validate_only=validate_only, resources=[
        R.AlterConfigsResource(resource_type=kind, resource_name=name, configs=[
            R.AlterableConfig(name=n, config_operation=op, value=value) for n, op, value in ops_])]))


def alter(run: Run, kind: int, name: str, configs: dict[str, str | None]) -> Any:
    R = request_class(ALTER_CONFIGS)
    return run.call(ALTER_CONFIGS, 2, R(validate_only=False, resources=[R.AlterConfigsResource(
        resource_type=kind, resource_name=name, configs=[
            R.AlterableConfig(name=n, value=value) for n, value in configs.items()])]))


def describe(run: Run, kind: int, name: str, keys: list[str] | None = None,
             version: int = 4, documentation: bool = False) -> Any:
    R = request_class(DESCRIBE_CONFIGS)
    return run.call(DESCRIBE_CONFIGS, version, R(
        include_synonyms=True, include_documentation=documentation, resources=[
        R.DescribeConfigsResource(resource_type=kind, resource_name=name,
                                  configuration_keys=keys)]))


def topic_configs(run: Run) -> None:
    topic = run.topic()
    ops.create_topic(run, topic, compare=False)
    describe(run, TOPIC, topic)
    incremental(run, TOPIC, topic, ("retention.ms", SET, "3600000"),
                ("cleanup.policy", APPEND, "compact"), ("min.cleanable.dirty.ratio", SET, "0.25"))
    # Kafka's broker learns a topic's new configs from the metadata log shortly after.
    applied(run, topic, "min.cleanable.dirty.ratio", "0.25")
    describe(run, TOPIC, topic)
    incremental(run, TOPIC, topic, ("segment.bytes", SET, "1000"), validate_only=True)
    incremental(run, TOPIC, topic, ("retention.ms", SET, "1"), validate_only=True)
    incremental(run, TOPIC, topic, ("foo.bar", SET, "1"))
    incremental(run, TOPIC, topic, ("retention.ms", APPEND, "1"))
    incremental(run, TOPIC, topic, ("retention.ms", SET, None))
    incremental(run, TOPIC, topic, ("retention.ms", SET, "1"), ("retention.ms", DELETE, None))
    incremental(run, TOPIC, topic, ("cleanup.policy", SUBTRACT, "delete"),
                ("retention.ms", DELETE, None))
    incremental(run, TOPIC, run.topic("missing"), ("retention.ms", SET, "1"))
    applied(run, topic, "cleanup.policy", "compact")
    describe(run, TOPIC, topic, ["retention.ms", "cleanup.policy", "min.cleanable.dirty.ratio"])
    alter(run, TOPIC, topic, {"retention.bytes": "1048576", "max.message.bytes": "2000000"})
    alter(run, TOPIC, topic, {"compression.type": "brotli"})
    applied(run, topic, "retention.bytes", "1048576")
    describe(run, TOPIC, topic)
    describe(run, TOPIC, run.topic("missing"))
    describe(run, TOPIC, topic, ["retention.ms"], version=1)
    describe(run, TOPIC, topic, ["retention.ms"], documentation=True)


def applied(run: Run, topic: str, key: str, value: str) -> None:
    run.until(f"{key}={value} applies", lambda: describe_value(run, topic, key) == value)


def test_topic_configs(differential: Callable[..., list[Any]]) -> None:
    differential(topic_configs)


def broker_configs(run: Run) -> None:
    topic = run.topic()
    ops.create_topic(run, topic, compare=False)
    incremental(run, BROKER, "1", ("offsets.retention.minutes", SET, "5"))
    incremental(run, BROKER, "", ("log.retention.ms", SET, "soon"))
    incremental(run, BROKER, "2", ("log.retention.ms", SET, "1000"))
    incremental(run, BROKER, "", ("log.retention.ms", SET, "86400000"))
    try:
        # Kafka's broker learns its own dynamic configs from the metadata log shortly after
        run.until("the broker default applies", lambda: describe_value(run, topic) == "86400000")
        describe(run, TOPIC, topic, ["retention.ms", "retention.bytes"])
        describe(run, BROKER, "1", ["log.retention.ms", "log.retention.bytes",
                                    "offsets.retention.minutes"])
        describe(run, BROKER, "", ["log.retention.ms"])
    finally:
        incremental(run, BROKER, "", ("log.retention.ms", DELETE, None))
    describe(run, BROKER, "2")


def describe_value(run: Run, topic: str, key: str = "retention.ms") -> str | None:
    R = request_class(DESCRIBE_CONFIGS)
    answer = run.call(DESCRIBE_CONFIGS, 4, R(resources=[R.DescribeConfigsResource(
        resource_type=TOPIC, resource_name=topic, configuration_keys=[key])]),
        compare=False)
    return answer.results[0].configs[0].value if answer.results[0].configs else None


def test_broker_configs(differential: Callable[..., list[Any]]) -> None:
    differential(broker_configs)


def group_configs(run: Run) -> None:
    group = run.group()
    describe(run, GROUP, group, GROUP_KEYS)
    incremental(run, GROUP, group, ("consumer.session.timeout.ms", SET, "50000"),
                ("consumer.heartbeat.interval.ms", SET, "6000"))
    describe(run, GROUP, group, GROUP_KEYS)
    incremental(run, GROUP, group, ("consumer.session.timeout.ms", SET, "1000"))
    incremental(run, GROUP, group, ("consumer.heartbeat.interval.ms", SET, "20000"))
    incremental(run, GROUP, group, ("consumer.assignment.interval.ms", SET, "20000"))
    incremental(run, GROUP, group, ("consumer.assignment.interval.ms", SET, "-1"))
    incremental(run, GROUP, group, ("consumer.assignment.interval.ms", SET, "3000"))
    describe(run, GROUP, group, GROUP_KEYS)
    incremental(run, GROUP, group, ("consumer.session.timeout.ms", APPEND, "1"))
    incremental(run, GROUP, group, ("no.such.config", SET, "1"))
    incremental(run, GROUP, "", ("consumer.session.timeout.ms", SET, "50000"))
    alter(run, GROUP, group, {"consumer.heartbeat.interval.ms": "7000"})
    describe(run, GROUP, group, GROUP_KEYS)
    incremental(run, GROUP, group, ("consumer.heartbeat.interval.ms", DELETE, None))
    describe(run, GROUP, group, GROUP_KEYS)
    describe(run, GROUP, "")
    describe(run, 9, "x")


def test_group_configs(differential: Callable[..., list[Any]]) -> None:
    differential(group_configs)


STREAMS_KEYS = ["streams.session.timeout.ms", "streams.heartbeat.interval.ms",
                "streams.num.standby.replicas", "streams.initial.rebalance.delay.ms",
                "streams.assignment.interval.ms"]


def streams_group_configs(run: Run) -> None:
    group = run.group()
    for name, value in (("streams.session.timeout.ms", "1000"),
                        ("streams.heartbeat.interval.ms", "20000"),
                        ("streams.heartbeat.interval.ms", "14000"),
                        ("streams.num.standby.replicas", "3"),
                        ("streams.num.standby.replicas", "-1"),
                        ("streams.initial.rebalance.delay.ms", "-1"),
                        ("streams.initial.rebalance.delay.ms", "99999999"),
                        ("streams.assignment.interval.ms", "20000"),
                        ("streams.num.warmup.replicas", "21"),
                        ("streams.num.warmup.replicas", "3"),
                        ("streams.acceptable.recovery.lag", "-1"),
                        ("streams.task.offset.interval.ms", "1000")):
        incremental(run, GROUP, group, (name, SET, value), validate_only=True)
    describe(run, GROUP, group, STREAMS_KEYS)
    incremental(run, GROUP, group, ("streams.session.timeout.ms", SET, "50000"),
                ("streams.num.standby.replicas", SET, "1"))
    describe(run, GROUP, group, STREAMS_KEYS)
    incremental(run, GROUP, group, ("streams.session.timeout.ms", SET, "46000"),
                ("streams.heartbeat.interval.ms", SET, "6000"))
    describe(run, GROUP, group, STREAMS_KEYS + GROUP_KEYS)
    incremental(run, GROUP, group, ("streams.num.standby.replicas", DELETE, None))
    describe(run, GROUP, group, STREAMS_KEYS)


def test_streams_group_configs(differential: Callable[..., list[Any]]) -> None:
    differential(streams_group_configs)


def group_configs_listed(run: Run) -> None:
    describe(run, GROUP, run.group())


def test_group_configs_kcsim_has_no_use_for_are_not_listed(
        differential: Callable[..., list[Any]]) -> None:
    seen = differential(group_configs_listed)
    absent = {d.path.split("[")[2].split("]")[0] for d in seen}
    assert absent >= {"share.assignment.interval.ms", "share.renew.acknowledge.enable"}
    assert not absent & {"share.session.timeout.ms", "share.record.lock.duration.ms",
                         "share.auto.offset.reset", "share.isolation.level"}
