"""Kafka's own kafka-configs (ConfigCommand, kafka-tools 4.4) gives the same output against
kcsim as against Kafka: altering and describing a topic's, a group's and the broker's configs.

`kafka-tools` is fetched with Maven into `<repo>/.cache/kafka-tools/<version>` once.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from .groupcommand import Ran
from .toolcommand import differences, tool

if TYPE_CHECKING:
    from pathlib import Path

    from .harness import Endpoint

CONFIG_COMMAND = "org.apache.kafka.tools.ConfigCommand"
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"


def kafka_configs(broker: Endpoint, *args: str, cwd: Path) -> Ran:
    ran = tool(broker, CONFIG_COMMAND, *args, cwd=cwd)
    # Kafka prints a topic's configs in hash order: compare them sorted.
    return Ran(ran.code, tuple(sorted(ran.out)), ran.err)


def commands(topic: str, group: str) -> list[tuple[str, list[str]]]:
    t = ["--entity-type", "topics", "--entity-name", topic]
    g = ["--entity-type", "groups", "--entity-name", group]
    return [
        ("alter-topic", [*t, "--alter", "--add-config",
                         "retention.ms=3600000,cleanup.policy=[compact,delete]"]),
        ("describe-topic", [*t, "--describe"]),
        ("describe-topic-all", [*t, "--describe", "--all"]),
        ("alter-topic-bad", [*t, "--alter", "--add-config", "retention.ms=soon"]),
        ("alter-topic-unknown", [*t, "--alter", "--add-config", "no.such.config=1"]),
        ("delete-topic-config", [*t, "--alter", "--delete-config", "retention.ms"]),
        ("describe-topic-after", [*t, "--describe"]),
        ("describe-missing-topic", ["--entity-type", "topics", "--entity-name",
                                    f"{topic}-missing", "--describe"]),
        ("alter-group", [*g, "--alter", "--add-config",
                         "consumer.session.timeout.ms=50000,consumer.heartbeat.interval.ms=6000"]),
        ("describe-group", [*g, "--describe"]),
        ("alter-group-out-of-range", [*g, "--alter", "--add-config", "consumer.session.timeout.ms=1"]),
        ("describe-broker-default", ["--entity-type", "brokers", "--entity-default", "--describe"]),
        ("alter-broker-read-only", ["--entity-type", "brokers", "--entity-name", "1", "--alter",
                                    "--add-config", "offsets.retention.minutes=5"]),
    ]


def test_kafka_configs_output_is_the_same_against_kcsim(twin: Endpoint, kafka: Endpoint,
                                                        tmp_path: Path) -> None:
    suffix = uuid.uuid4().hex[:8]
    topic, group = f"configs-{suffix}", f"configs-group-{suffix}"
    runs = {}
    for broker in (twin, kafka):
        create = tool(broker, TOPIC_COMMAND, "--create", "--topic", topic, "--partitions", "1",
                      "--replication-factor", "1", cwd=tmp_path)
        assert create.code == 0, create
        runs[broker.name] = {name: kafka_configs(broker, *args, cwd=tmp_path)
                             for name, args in commands(topic, group)}
    found = differences(runs[twin.name], runs[kafka.name])
    assert not found, "\n\n".join(found)
