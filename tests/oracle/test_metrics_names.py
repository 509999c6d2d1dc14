"""kcsim's metrics that claim a Kafka name carry the name and labels the Prometheus JMX
exporter shows for a Kafka 4.4 broker.

The session's Kafka runs the exporter's Java agent (io.prometheus.jmx:
jmx_prometheus_javaagent, from Maven Central) with its default rules (tests/conftest.py).
The same small scenario runs on Kafka and on a kcsim (a topic produced to, a classic
consumer group that fetches and commits); both are scraped, and every kcsim sample
whose name server/metrics/names.py lists as Kafka's must be found in Kafka's scrape
with the same label names (and the same bean, the `name` label), and the states and
protocols kcsim reports must be ones Kafka reports.
"""

from __future__ import annotations

import time
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kcsim.server.embedded import EmbeddedServer
from kcsim.server.metrics import names

from .kafka import GROUP_SETTINGS, KafkaUnavailable

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .kafka import KafkaBroker

confluent_kafka = pytest.importorskip("confluent_kafka")

MESSAGES = 20
# Labels whose values name things both brokers have: kcsim's values must be Kafka's too.
ENUMERATED = ("protocol", "state", "name")

Shape = tuple[str, tuple[str, ...], str]  # sample name, label names, the `name` label


@pytest.fixture(scope="module")
def kcsim_broker() -> Iterator[EmbeddedServer]:
    settings: dict[str, Any] = {name: value for name, _, value in GROUP_SETTINGS}
    server = EmbeddedServer(host="127.0.0.1", node_id=1, auto_create_topics=True,
                            **settings).start()
    try:
        yield server
    finally:
        server.stop()


def scenario(bootstrap: str, topic: str, group: str) -> None:
    """Produce to `topic`; a classic consumer group reads half of it and commits."""
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for i in range(MESSAGES):
        producer.produce(topic, f"m{i}".encode())
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
        "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        consumed = 0
        deadline = time.monotonic() + 60
        while consumed < MESSAGES // 2 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                consumed += 1
        assert consumed == MESSAGES // 2
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()


def shapes(text: str) -> set[Shape]:
    found = set()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.add((sample.name, tuple(sorted(sample.labels)), sample.labels.get("name", "")))
    return found


def values(text: str, label: str) -> set[tuple[str, str]]:
    """(sample name, value) of every sample carrying `label`."""
    return {(s.name, s.labels[label]) for f in text_string_to_metric_families(text)
            for s in f.samples if label in s.labels}


def test_kafka_names_and_labels_match_the_jmx_exporter(
        kafka_broker: KafkaBroker, kcsim_broker: EmbeddedServer,
        unique_name: Callable[[str], str]) -> None:
    if isinstance(kafka_broker.metrics_url, KafkaUnavailable):
        pytest.skip(f"JMX exporter agent not available, metric names NOT CHECKED: "
                    f"{kafka_broker.metrics_url}")
    topic, group = unique_name("metrics"), unique_name("metrics-group")
    scenario(kafka_broker.bootstrap, topic, group)
    scenario(kcsim_broker.bootstrap, topic, group)
    with urllib.request.urlopen(kafka_broker.metrics_url, timeout=30) as answer:
        kafka_text = answer.read().decode()
    kcsim_text = kcsim_broker.run_sync(
        lambda: kcsim_broker.server.broker.metrics.render()).decode()

    kafka = shapes(kafka_text)
    claimed = {shape for shape in shapes(kcsim_text) if shape[0] in names.KAFKA_NAMES}
    assert {shape[0] for shape in claimed} == set(names.KAFKA_NAMES)  # each one is shown
    missing = sorted(claimed - kafka)
    assert not missing, f"kcsim samples with a Kafka name that Kafka does not show: {missing}"
    for label in ENUMERATED:
        ours = {pair for pair in values(kcsim_text, label) if pair[0] in names.KAFKA_NAMES}
        assert ours <= values(kafka_text, label), (label, sorted(ours - values(kafka_text,
                                                                                label)))
