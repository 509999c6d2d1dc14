"""Real clients change and read configs: confluent-kafka's AdminClient (alter, incremental
alter and describe) and the Java Admin, against `kcsim serve`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from . import javaclient

pytestmark = pytest.mark.timeout(120)

# Admin drivers on kafka-clients 4.x: a GROUP config resource is new in 4.0.
SOURCES = Path(__file__).resolve().parent / "java_admin"


def test_confluent_kafka_alters_and_describes_topic_broker_and_group_configs(
        kcsim_server: Any, unique_name: Any) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ConfigSource,
        NewTopic,
    )

    admin = AdminClient({"bootstrap.servers": kcsim_server.bootstrap})
    topic = unique_name("configs")
    admin.create_topics([NewTopic(topic, 1, 1, config={"retention.ms": "60000"})])[topic].result(10)

    def described(resource: ConfigResource) -> dict[str, Any]:
        return admin.describe_configs([resource])[resource].result(10)

    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    assert described(resource)["retention.ms"].value == "60000"

    resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE)])
    admin.incremental_alter_configs([resource])[resource].result(10)
    configs = described(ConfigResource(ConfigResource.Type.TOPIC, topic))
    assert configs["cleanup.policy"].value == "compact"
    assert configs["cleanup.policy"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert (configs["retention.ms"].value, configs["retention.ms"].is_default) == ("604800000", True)

    # AlterConfigs replaces the topic's whole set
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic, set_config={"retention.bytes": "4096"})
    admin.alter_configs([resource])[resource].result(10)
    configs = described(ConfigResource(ConfigResource.Type.TOPIC, topic))
    assert (configs["retention.bytes"].value, configs["cleanup.policy"].value) == ("4096", "delete")

    resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
        ConfigEntry("retention.ms", "soon", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(KafkaException, match="Not a number of type LONG"):
        admin.incremental_alter_configs([resource])[resource].result(10)

    broker = ConfigResource(ConfigResource.Type.BROKER, "1", incremental_configs=[
        ConfigEntry("log.retention.bytes", "123456", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([broker])[broker].result(10)
    entry = described(ConfigResource(ConfigResource.Type.BROKER, "1"))["log.retention.bytes"]
    assert (entry.value, entry.is_read_only) == ("123456", False)
    assert described(ConfigResource(ConfigResource.Type.BROKER, "1"))[
        "offsets.retention.minutes"].is_read_only

    group = ConfigResource(ConfigResource.Type.GROUP, unique_name("group"), incremental_configs=[
        ConfigEntry("consumer.heartbeat.interval.ms", "6000",
                    incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([group])[group].result(10)
    entry = described(ConfigResource(ConfigResource.Type.GROUP, group.name))[
        "consumer.heartbeat.interval.ms"]
    assert (entry.value, entry.source) == ("6000", ConfigSource.GROUP_CONFIG.value)


def test_java_admin_alters_and_describes_topic_and_group_configs(
        kcsim_server: Any, unique_name: Any) -> None:
    javaclient.skip_without_java()
    proc = javaclient.run("ConfigsDriver", kcsim_server.bootstrap, unique_name("java-configs"),
                          unique_name("java-group"), timeout=90,
                          class_path=javaclient.classpath(javaclient.MAVEN_CLIENT, SOURCES))
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {
        "retention.ms": "3600000 DYNAMIC_TOPIC_CONFIG",
        "cleanup.policy": "delete,compact DYNAMIC_TOPIC_CONFIG",
        "consumer.session.timeout.ms": "50000 DYNAMIC_GROUP_CONFIG",
        "refused": "InvalidConfigurationException: Invalid value soon for configuration "
                   "retention.ms: Not a number of type LONG",
    }
