"""The metrics a scrape shows after requests: Kafka's names (as the JMX exporter shows them)
and labels, kafka_exporter's for lag, kcsim_ for the rest, with the values the requests
made. Each scrape is parsed with prometheus_client's own parser, as a Prometheus reads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kcsim.protocol.codecs import request_class

from .durability.wire import Wire, commit_request
from .fuzz.batches import batch

if TYPE_CHECKING:
    from kcsim.server.embedded import EmbeddedServer

PRODUCE, FETCH, OFFSET_COMMIT, HEARTBEAT, CREATE_TOPICS = 0, 1, 8, 12, 19
PAUSE_PARTITIONS = 1000  # KIP-1249, a kcsim extension key
TOPIC = "orders"
GROUP = 'billing "eu"'  # a quote in a label value is escaped
REQUEST = "kafka_network_RequestMetrics_Count"
TOPICS = "kafka_server_BrokerTopicMetrics_Count"
GCM = "kafka_server_group_coordinator_metrics_"


def scrape(server: EmbeddedServer) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """{sample name: {sorted labels: value}} of one scrape of `server`."""
    text = server.run_sync(lambda: server.server.broker.metrics.render()).decode()
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def value(found: dict[str, Any], sample: str, /, **labels: str) -> float | None:
    return found.get(sample, {}).get(tuple(sorted(labels.items())))


def produce(wire: Wire, partition: int, records: bytes) -> None:
    cls = request_class(PRODUCE)
    answer = wire.call(PRODUCE, 9, cls(transactional_id=None, acks=-1, timeout_ms=5000,
                                       topic_data=[cls.TopicProduceData(name=TOPIC, partition_data=[
                                           cls.PartitionProduceData(index=partition,
                                                                    records=records)])]))
    assert answer.responses[0].partition_responses[0].error_code == 0


def fetch(wire: Wire, partition: int) -> int:
    """Fetch partition from 0; the record bytes answered."""
    cls = request_class(FETCH)
    answer = wire.call(FETCH, 12, cls(
        replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
        session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
        topics=[cls.FetchTopic(topic=TOPIC, partitions=[cls.FetchPartition(
            partition=partition, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
            partition_max_bytes=1 << 20)])]))
    return len(answer.responses[0].partitions[0].records)


def connect(server: EmbeddedServer) -> Wire:
    """A connection to `server`, with TOPIC (2 partitions) created."""
    assert server.port is not None
    w = Wire("127.0.0.1", server.port)
    cls = request_class(CREATE_TOPICS)
    created = w.call(CREATE_TOPICS, 7, cls(topics=[cls.CreatableTopic(
        name=TOPIC, num_partitions=2, replication_factor=1)], timeout_ms=5000))
    assert created.topics[0].error_code == 0
    return w


@pytest.fixture
def wire(kcsim: EmbeddedServer) -> Any:
    with connect(kcsim) as w:
        yield w


def test_requests_bytes_offsets_and_lag_after_requests(kcsim: EmbeddedServer,
                                                        wire: Wire) -> None:
    first, second = batch([b"a" * 10, b"b" * 10, b"c" * 10]), batch([b"d" * 50])
    produce(wire, 0, first)
    produce(wire, 0, second)
    produce(wire, 1, second)
    fetched = fetch(wire, 0)
    committed = wire.call(OFFSET_COMMIT, 8, commit_request(GROUP, TOPIC, {0: 1, 1: 0}))
    assert [p.error_code for p in committed.topics[0].partitions] == [0, 0]
    beat = wire.call(HEARTBEAT, 4, request_class(HEARTBEAT)(
        group_id=GROUP, generation_id=1, member_id="nobody", group_instance_id=None))
    assert beat.error_code != 0
    found = scrape(kcsim)

    assert value(found, REQUEST, name="RequestsPerSec", request="Produce", version="9") == 3
    assert value(found, REQUEST, name="RequestsPerSec", request="OffsetCommit",
                 version="8") == 1
    assert value(found, REQUEST, name="ErrorsPerSec", request="OffsetCommit",
                 error="NONE") == 2  # one per partition, as Kafka's errorCounts
    assert value(found, REQUEST, name="ErrorsPerSec", request="Heartbeat",
                 error="UNKNOWN_MEMBER_ID") == 1
    assert value(found, REQUEST, name="TotalTimeMs", request="Produce") == 3
    mean = value(found, "kafka_network_RequestMetrics_Mean", name="TotalTimeMs",
                 request="OffsetCommit")
    assert mean is not None and 0 < mean < 1000

    assert value(found, TOPICS, name="BytesInPerSec", topic=TOPIC) == len(first) + 2 * len(second)
    assert value(found, TOPICS, name="MessagesInPerSec", topic=TOPIC) == 5
    assert value(found, TOPICS, name="MessagesInPerSec") == 5  # the broker-wide count
    assert value(found, TOPICS, name="BytesOutPerSec", topic=TOPIC) == fetched > 0

    assert value(found, GCM + "offset_commit_count") == 2
    assert value(found, GCM + "offset_count") == 2
    assert value(found, "kafka_coordinator_group_GroupMetadataManager_Value",
                 name="NumOffsets") == 2
    # log end minus committed: partition 0 holds 4 records, 1 is committed
    assert value(found, "kafka_consumergroup_lag", consumergroup=GROUP, topic=TOPIC,
                 partition="0") == 3
    assert value(found, "kafka_consumergroup_lag", consumergroup=GROUP, topic=TOPIC,
                 partition="1") == 1
    assert value(found, "kafka_consumergroup_lag_sum", consumergroup=GROUP, topic=TOPIC) == 4
    assert value(found, "kafka_consumergroup_current_offset", consumergroup=GROUP,
                 topic=TOPIC, partition="0") == 1
    assert value(found, "kafka_topic_partition_current_offset", topic=TOPIC,
                 partition="0") == 4


def test_groups_by_type_and_state(kcsim: EmbeddedServer, wire: Wire) -> None:
    wire.call(OFFSET_COMMIT, 8, commit_request(GROUP, TOPIC, {0: 0}))
    found = scrape(kcsim)
    assert value(found, GCM + "group_count", protocol="classic") == 1
    assert value(found, GCM + "group_count", protocol="consumer") == 0
    assert value(found, GCM + "classic_group_count", state="Empty") == 1
    assert value(found, GCM + "classic_group_count", state="Stable") == 0
    # every state Kafka reports is there, zero or not
    assert {dict(k)["state"] for k in found[GCM + "consumer_group_count"]} == {
        "Assigning", "Dead", "Empty", "Reconciling", "Stable"}
    assert value(found, "kafka_coordinator_group_GroupMetadataManager_Value",
                 name="NumGroupsEmpty") == 1
    assert value(found, "kafka_consumergroup_members", consumergroup=GROUP) == 0
    assert "kcsim_group_paused_partitions" not in found  # only groups with some paused
    assert value(found, "kcsim_transactions_open") == 0


def test_rebalances_are_counted_from_the_events(kcsim: EmbeddedServer) -> None:
    """Synthetic events, fed to the broker's event history as the coordinator's are."""

    def feed() -> None:
        history = kcsim.server.broker.state.groups.events
        for group_type, kind in (("classic", "generation-bumped"), ("classic", "generation-bumped"),
                                 ("consumer", "epoch-bumped"), ("classic", "rebalance-started")):
            history.apply(history.event(0, "g", group_type, kind))

    kcsim.run_sync(feed)
    found = scrape(kcsim)
    assert value(found, GCM + "group_completed_rebalance_count") == 2
    assert value(found, GCM + "consumer_group_rebalance_count") == 1
    assert value(found, GCM + "streams_group_rebalance_count") == 0
    rate = value(found, GCM + "group_completed_rebalance_rate")
    assert rate is not None and rate > 0
    assert value(found, "kcsim_group_events_total", kind="rebalance-started",
                 type="classic") == 1


@pytest.mark.kcsim(metrics=False)
def test_no_request_is_counted_with_metrics_off(kcsim: EmbeddedServer, wire: Wire) -> None:
    wire.call(OFFSET_COMMIT, 8, commit_request(GROUP, TOPIC, {0: 0}))
    found = scrape(kcsim)
    assert REQUEST not in found or not any(
        dict(k).get("name") == "RequestsPerSec" for k in found[REQUEST])
    assert value(found, GCM + "group_count", protocol="classic") == 1  # read from the state


def test_each_broker_has_its_own_registry(kcsim_embedded_factory: Any) -> None:
    one, two = kcsim_embedded_factory(), kcsim_embedded_factory()
    with connect(one) as w:
        w.call(OFFSET_COMMIT, 8, commit_request("only-on-one", TOPIC, {0: 0}))
    assert value(scrape(one), GCM + "group_count", protocol="classic") == 1
    assert value(scrape(two), GCM + "group_count", protocol="classic") == 0
    registry = one.run_sync(lambda: one.server.broker.metrics.registry)
    names = {family.name for family in registry.collect()}
    assert {GCM + "group_count", "kafka_consumergroup_lag", "process_cpu_seconds"} <= names


def test_error_codes_of_an_answer_are_counted_as_kafka_counts_them() -> None:
    """Each error field once (NONE included in the count returned), nested lists walked."""
    from kcsim.protocol.codecs import codec
    from kcsim.server.metrics import error_counter

    cls = codec(FETCH, "response").cls
    answer = cls(throttle_time_ms=0, error_code=0, session_id=0, responses=[
        cls.FetchableTopicResponse(topic="a", partitions=[
            cls.PartitionData(partition_index=i, error_code=code, high_watermark=0,
                              last_stable_offset=0, log_start_offset=0, records=b"")
            for i, code in enumerate((0, 3, 3))]),
        cls.FetchableTopicResponse(topic="b", partitions=[])])
    counts: dict[int, int] = {}
    assert error_counter(cls)(answer, counts) == 4  # the top level's and three partitions'
    assert counts == {3: 2}


def test_paused_partitions_per_group(kcsim: EmbeddedServer, wire: Wire) -> None:
    wire.call(OFFSET_COMMIT, 8, commit_request(GROUP, TOPIC, {0: 0}))
    cls = request_class(PAUSE_PARTITIONS)
    paused = wire.call(PAUSE_PARTITIONS, 0, cls(group_id=GROUP, topics=[
        cls.PausePartitionsRequestTopic(name=TOPIC, partitions=[
            cls.PausePartitionsRequestPartition(partition_index=p) for p in (0, 1)])]))
    assert paused.error_code == 0, paused
    assert value(scrape(kcsim), "kcsim_group_paused_partitions", group=GROUP,
                 type="classic") == 2
