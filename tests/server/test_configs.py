"""Configs of topics, the broker and groups: Kafka's validation, IncrementalAlterConfigs'
operations, the folds, and the three APIs over the wire with Kafka's answers.

The answers asserted here are the ones a Kafka 4.4 broker gives (tests/oracle/test_configs.py
compares the two brokers directly)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from kcsim.coordinator import GroupConfig
from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode
from kcsim.server.state.broker_configs import BrokerConfigs
from kcsim.server.state.config_defs import ConfigProblem, OpProblem, OpType, apply_ops, java_text
from kcsim.server.state.config_records import BrokerConfigKey, BrokerConfigValue
from kcsim.server.state.group_configs import check_group_configs
from kcsim.server.state.topic_configs import TOPIC_DEFINITIONS, check_topic_configs
from kcsim.storage.records import Record

from .fuzz.wire import Connection

if TYPE_CHECKING:
    from kcsim.server.embedded import EmbeddedServer

TOPIC, BROKER, GROUP = 2, 4, 32
SET, DELETE, APPEND, SUBTRACT = OpType.SET, OpType.DELETE, OpType.APPEND, OpType.SUBTRACT
DescribeConfigs, AlterConfigs, IncrementalAlterConfigs = (request_class(k) for k in (32, 33, 44))
CreateTopics = request_class(19)


# -- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(("configs", "message"), [
    ({"retention.ms": "abc"}, "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ({"foo.bar": "1"}, "Unknown topic config name: foo.bar"),
    ({"cleanup.policy": "foo"},
     "Invalid value foo for configuration cleanup.policy: String must be one of: compact, delete"),
    ({"min.cleanable.dirty.ratio": "2"},
     "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
    ({"segment.bytes": "100"},
     "Invalid value 100 for configuration segment.bytes: Value must be at least 1048576"),
    ({"segment.bytes": "99999999999"},
     "Invalid value 99999999999 for configuration segment.bytes: Not a number of type INT"),
    ({"retention.ms": "-2"}, "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
    ({"message.timestamp.type": "createtime"}, "Invalid value createtime for configuration "
     "message.timestamp.type: String must be one of: CreateTime, LogAppendTime"),
    ({"preallocate": "yes"},
     "Invalid value yes for configuration preallocate: Expected value to be either true or false"),
    ({"compression.type": "bogus"}, "Invalid value bogus for configuration compression.type: String "
     "must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
])
def test_topic_configs_are_refused_with_kafkas_message(configs: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigProblem) as refused:
        check_topic_configs(configs)
    assert str(refused.value) == message


def test_topic_configs_kafka_takes() -> None:
    check_topic_configs({"retention.ms": " 5 ", "cleanup.policy": "compact, delete",
                         "min.cleanable.dirty.ratio": "0.25", "max.message.bytes": "2000000",
                         "min.insync.replicas": "1", "delete.retention.ms": "0",
                         "min.compaction.lag.ms": "100", "retention.bytes": "-1",
                         "message.timestamp.type": "LogAppendTime", "compression.type": "zstd"})
    check_topic_configs({"cleanup.policy": ""})  # an empty list, as Kafka takes it


def test_doubles_print_as_java_prints_them() -> None:
    assert [java_text(x) for x in (2.0, 0.5, 1e7, 1.5e-5, 123.25)] == [
        "2.0", "0.5", "1.0E7", "1.5E-5", "123.25"]


def ops(current: dict[str, str], *triples: tuple[str, int, str | None]) -> dict[str, str]:
    return apply_ops(current, triples, TOPIC_DEFINITIONS, invalid_config=40, invalid_request=42,
                     unknown_error=-1)


def test_incremental_operations_follow_kafkas_rules() -> None:
    assert ops({}, ("retention.ms", SET, "5")) == {"retention.ms": "5"}
    assert ops({"retention.ms": "5"}, ("retention.ms", DELETE, None)) == {}
    # APPEND starts from the default when the topic has no value of its own
    assert ops({}, ("cleanup.policy", APPEND, "compact")) == {"cleanup.policy": "delete,compact"}
    assert ops({"cleanup.policy": "compact"}, ("cleanup.policy", APPEND, "compact")) == {
        "cleanup.policy": "compact"}
    assert ops({"cleanup.policy": "delete,compact"}, ("cleanup.policy", SUBTRACT, "delete")) == {
        "cleanup.policy": "compact"}


@pytest.mark.parametrize(("triple", "error", "message"), [
    (("retention.ms", APPEND, "5"), 40, "Can't APPEND to key retention.ms because its type is not LIST."),
    (("retention.ms", SUBTRACT, "5"), 40,
     "Can't SUBTRACT to key retention.ms because its type is not LIST."),
    (("retention.ms", SET, None), 42, "Null value not supported for : retention.ms"),
    (("retention.ms", 7, "5"), -1, None),
])
def test_incremental_operations_kafka_refuses(triple: tuple[str, int, str | None], error: int,
                                              message: str | None) -> None:
    with pytest.raises(OpProblem) as refused:
        ops({}, triple)
    assert (refused.value.error, refused.value.message) == (error, message)


@pytest.mark.parametrize(("configs", "message"), [
    ({"consumer.session.timeout.ms": "1000"},
     "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."),
    ({"consumer.heartbeat.interval.ms": "50000"},
     "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."),
    ({"consumer.assignment.interval.ms": "20000"},
     "consumer.assignment.interval.ms must be in the range 0 to 15000 inclusive."),
    ({"consumer.assignment.interval.ms": "-1"},
     "Invalid value -1 for configuration consumer.assignment.interval.ms: Value must be at least 0"),
    ({"consumer.assignor.offload.enable": "false"},
     "Unknown group config name: consumer.assignor.offload.enable"),
    ({"share.session.timeout.ms": "40000"},
     "share.session.timeout.ms must be in the range 45000 to 60000 inclusive."),
    ({"share.delivery.count.limit": "11"},
     "share.delivery.count.limit must be in the range 2 to 10 inclusive."),
    ({"share.auto.offset.reset": "middle"}, "Invalid value middle for configuration "
     "share.auto.offset.reset: String must be one of: latest, earliest"),
    ({"share.renew.acknowledge.enable": "true"},
     "Unknown group config name: share.renew.acknowledge.enable"),
    ({"consumer.session.timeout.ms": "x"},
     "Invalid value x for configuration consumer.session.timeout.ms: Not a number of type INT"),
])
def test_group_configs_are_checked_against_the_brokers_range(configs: dict[str, str],
                                                             message: str) -> None:
    with pytest.raises(ConfigProblem) as refused:
        check_group_configs(configs, GroupConfig())
    assert str(refused.value) == message


def test_a_broker_outside_kafkas_range_widens_it_to_its_own_value() -> None:
    short = GroupConfig(consumer_group_session_timeout_ms=6000, consumer_group_heartbeat_interval_ms=500)
    check_group_configs({"consumer.session.timeout.ms": "6000",
                         "consumer.heartbeat.interval.ms": "500"}, short)
    with pytest.raises(ConfigProblem, match=r"must be greater than consumer\.heartbeat\.interval\.ms"):
        check_group_configs({"consumer.session.timeout.ms": "6000",
                             "consumer.heartbeat.interval.ms": "6000"},
                            GroupConfig(consumer_group_session_timeout_ms=6000,
                                        consumer_group_heartbeat_interval_ms=6000))


def test_broker_configs_fold_node_over_cluster_over_default() -> None:
    configs = BrokerConfigs()
    assert configs.chain("log.retention.bytes", 1) == [("log.retention.bytes", "-1", 5)]
    configs.apply(Record(BrokerConfigKey(""), BrokerConfigValue({"log.retention.bytes": "10"})))
    configs.apply(Record(BrokerConfigKey("1"), BrokerConfigValue({"log.retention.bytes": "20"})))
    assert configs.chain("log.retention.bytes", 1) == [
        ("log.retention.bytes", "20", 2), ("log.retention.bytes", "10", 3),
        ("log.retention.bytes", "-1", 5)]
    configs.apply(Record(BrokerConfigKey("1"), None))
    assert configs.chain("log.retention.bytes", 1)[0] == ("log.retention.bytes", "10", 3)
    # log.retention.ms has no default of its own: Kafka lists log.retention.hours below it
    assert configs.chain("log.retention.ms", 1) == []


# -- over the wire --------------------------------------------------------------------------


@pytest.fixture
def conn(kcsim: EmbeddedServer) -> Any:
    assert kcsim.port is not None
    with Connection(kcsim.port) as c:
        yield c


def create(conn: Connection, name: str, **configs: str) -> tuple[int, str | None]:
    response, _ = conn.call(19, 7, CreateTopics(topics=[CreateTopics.CreatableTopic(
        name=name, num_partitions=1, replication_factor=1, assignments=[],
        configs=[CreateTopics.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()])],
        timeout_ms=5000, validate_only=False))
    return response.topics[0].error_code, response.topics[0].error_message


def incremental(conn: Connection, kind: int, name: str, *triples: tuple[str, int, str | None],
                validate_only: bool = False) -> list[tuple[int, str | None]]:
    R = IncrementalAlterConfigs
    response, _ = conn.call(44, 1, R(resources=[R.AlterConfigsResource(
        resource_type=kind, resource_name=name, configs=[
            R.AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in triples])],
        validate_only=validate_only))
    return [(r.error_code, r.error_message) for r in response.responses]


def described(conn: Connection, kind: int, name: str,
              keys: list[str] | None = None) -> dict[str, tuple[str | None, int]]:
    R = DescribeConfigs
    response, _ = conn.call(32, 4, R(resources=[R.DescribeConfigsResource(
        resource_type=kind, resource_name=name, configuration_keys=keys)], include_synonyms=True))
    result = response.results[0]
    assert result.error_code == 0, result.error_message
    return {c.name: (c.value, c.config_source) for c in result.configs}


def test_a_topic_config_set_and_deleted_shows_in_describe(conn: Connection) -> None:
    assert create(conn, "t") == (0, None)
    assert incremental(conn, TOPIC, "t", ("retention.ms", SET, "12345"),
                       ("cleanup.policy", APPEND, "compact")) == [(0, None)]
    configs = described(conn, TOPIC, "t")
    assert configs["retention.ms"] == ("12345", 1)
    assert configs["cleanup.policy"] == ("delete,compact", 1)
    assert configs["segment.bytes"] == ("1073741824", 5)
    assert incremental(conn, TOPIC, "t", ("retention.ms", DELETE, None)) == [(0, None)]
    assert described(conn, TOPIC, "t", ["retention.ms"]) == {"retention.ms": ("604800000", 5)}


def test_validate_only_changes_nothing_and_each_resource_has_its_own_answer(
        conn: Connection) -> None:
    create(conn, "t")
    assert incremental(conn, TOPIC, "t", ("retention.ms", SET, "1"), validate_only=True) == [(0, None)]
    assert described(conn, TOPIC, "t", ["retention.ms"]) == {"retention.ms": ("604800000", 5)}
    R = AlterConfigs
    response, _ = conn.call(33, 2, R(resources=[
        R.AlterConfigsResource(resource_type=TOPIC, resource_name="t", configs=[
            R.AlterableConfig(name="retention.bytes", value="1000")]),
        R.AlterConfigsResource(resource_type=TOPIC, resource_name="missing", configs=[]),
        R.AlterConfigsResource(resource_type=BROKER, resource_name="1", configs=[
            R.AlterableConfig(name="offsets.retention.minutes", value="5")])], validate_only=False))
    assert [(r.error_code, r.error_message) for r in response.responses] == [
        (0, None),
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'missing' does not exist."),
        (ErrorCode.INVALID_REQUEST, "Cannot update these configs dynamically: [offsets.retention.minutes]"),
    ]
    assert described(conn, TOPIC, "t", ["retention.bytes"]) == {"retention.bytes": ("1000", 1)}


def test_alter_configs_replaces_the_whole_set(conn: Connection) -> None:
    create(conn, "t", **{"retention.ms": "5000"})
    R = AlterConfigs
    conn.call(33, 1, R(resources=[R.AlterConfigsResource(resource_type=TOPIC, resource_name="t",
                                                         configs=[R.AlterableConfig(
                                                             name="retention.bytes", value="9")])]))
    configs = described(conn, TOPIC, "t", ["retention.ms", "retention.bytes"])
    assert configs == {"retention.ms": ("604800000", 5), "retention.bytes": ("9", 1)}


def test_create_topics_checks_its_configs(conn: Connection) -> None:
    assert create(conn, "bad", **{"retention.ms": "soon"}) == (
        ErrorCode.INVALID_CONFIG,
        "Invalid value soon for configuration retention.ms: Not a number of type LONG")
    assert create(conn, "unknown", nope="1") == (
        ErrorCode.INVALID_CONFIG, "Unknown topic config name: nope")


def test_a_dynamic_broker_default_is_the_default_of_every_topic(conn: Connection) -> None:
    create(conn, "t")
    assert incremental(conn, BROKER, "", ("log.retention.ms", SET, "1000")) == [(0, None)]
    assert described(conn, TOPIC, "t", ["retention.ms"]) == {"retention.ms": ("1000", 3)}
    assert described(conn, BROKER, "1", ["log.retention.ms"]) == {"log.retention.ms": ("1000", 3)}
    assert incremental(conn, BROKER, "", ("log.retention.ms", SET, "x")) == [(
        ErrorCode.INVALID_REQUEST,
        "Invalid value x for configuration log.retention.ms: Not a number of type LONG")]
    assert incremental(conn, BROKER, "2", ("log.retention.ms", SET, "1")) == [(
        ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 1, but received 2")]


def test_group_configs_are_described_with_the_brokers_as_default(conn: Connection) -> None:
    assert incremental(conn, GROUP, "g", ("consumer.session.timeout.ms", SET, "50000")) == [(0, None)]
    assert incremental(conn, GROUP, "g", ("streams.num.standby.replicas", SET, "1")) == [(0, None)]
    # The broker's settings left at Kafka's defaults are described as defaults (source 5).
    assert described(conn, GROUP, "g") == {
        "consumer.session.timeout.ms": ("50000", 8),
        "consumer.heartbeat.interval.ms": ("5000", 5),
        "consumer.assignment.interval.ms": ("1000", 5),
        "streams.session.timeout.ms": ("45000", 5),
        "streams.heartbeat.interval.ms": ("5000", 5),
        "streams.num.standby.replicas": ("1", 8),
        "streams.initial.rebalance.delay.ms": ("3000", 5),
        "streams.assignment.interval.ms": ("1000", 5),
        "share.session.timeout.ms": ("45000", 5),
        "share.heartbeat.interval.ms": ("5000", 5),
        "share.record.lock.duration.ms": ("30000", 5),
        "share.delivery.count.limit": ("5", 5),
        "share.auto.offset.reset": ("latest", 5),
        "share.isolation.level": ("read_uncommitted", 5)}
    assert incremental(conn, GROUP, "g", ("streams.rack.aware.assignment.tags", SET, "z")) == [(
        ErrorCode.INVALID_CONFIG, "Unknown group config name: streams.rack.aware.assignment.tags")]
    assert incremental(conn, GROUP, "", ("consumer.session.timeout.ms", SET, "50000")) == [(
        ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")]


def documentation(conn: Connection, kind: int, name: str, include: bool) -> dict[str, str | None]:
    R = DescribeConfigs
    response, _ = conn.call(32, 4, R(resources=[R.DescribeConfigsResource(
        resource_type=kind, resource_name=name, configuration_keys=None)],
        include_synonyms=False, include_documentation=include))
    return {c.name: c.documentation for c in response.results[0].configs}


def test_every_config_kcsim_models_is_documented_when_asked(conn: Connection) -> None:
    create(conn, "t")
    for kind, name in ((TOPIC, "t"), (BROKER, "1"), (GROUP, "g")):
        docs = documentation(conn, kind, name, include=True)
        assert docs, kind
        assert [n for n, text in docs.items() if not text] == [], kind
        assert set(documentation(conn, kind, name, include=False).values()) == {None}
    topic = documentation(conn, TOPIC, "t", include=True)
    broker = documentation(conn, BROKER, "1", include=True)
    assert broker["log.retention.ms"] == (
        f"The default of retention.ms for topics without their own: {topic['retention.ms']}")
