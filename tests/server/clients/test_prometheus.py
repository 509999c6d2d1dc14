"""A real Prometheus (Debian's `prometheus` package) scrapes `kcsim serve --metrics-port`
every second while a confluent-kafka consumer group commits; its query API answers the
group count, the commit rate and the group's lag, which equals the log end minus the
committed offset. Without the binary the test is skipped, saying so (.ci/run installs it).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest

from tests.oracle.kafka import free_port
from tests.processes import stop_process

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tests.conftest import KcsimProcess

confluent_kafka = pytest.importorskip("confluent_kafka")

METRICS = re.compile(r"metrics http://([^/\s]+)/metrics")
MESSAGES = 30
CONSUMED = 12  # what the group has committed when it stops consuming
WAIT_S = 60.0


def query(base: str, promql: str) -> list[dict[str, Any]]:
    """The result vector of an instant query (empty while Prometheus has no answer)."""
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            body = json.load(answer)
    except (urllib.error.URLError, OSError):
        return []
    assert body["status"] == "success", body
    return list(body["data"]["result"])


def wait_for(base: str, promql: str, ok: Callable[[float], bool]) -> float:
    """Poll the query until its single value satisfies ok; its value."""
    deadline = time.monotonic() + WAIT_S
    last: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        last = query(base, promql)
        if len(last) == 1 and ok(float(last[0]["value"][1])):
            return float(last[0]["value"][1])
        time.sleep(0.5)
    raise AssertionError(f"{promql}: Prometheus answered {last} after {WAIT_S:.0f}s")


@pytest.fixture
def prometheus(tmp_path: Path, kcsim_factory: Callable[..., KcsimProcess]) -> Iterator[
        tuple[str, KcsimProcess]]:
    """(Prometheus' URL, the kcsim it scrapes every second)."""
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("Prometheus test NOT RUN: no `prometheus` binary (Debian package "
                    "`prometheus`; .ci/run installs it)")
    server = kcsim_factory(metrics_port=0)
    found = METRICS.search(server.ready_line)
    assert found, server.ready_line
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: kcsim\n    static_configs:\n"
        f"      - targets: ['{found.group(1)}']\n")
    port = free_port()
    log = tmp_path / "prometheus.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(base, 'up{job="kcsim"}', lambda up: up == 1)
        yield base, server
    finally:
        stop_process(proc, 10.0)
        print(f"Prometheus log ({log}):\n{log.read_text(errors='replace')[-4000:]}")


def test_prometheus_reads_group_count_commit_rate_and_lag(
        prometheus: tuple[str, KcsimProcess], unique_name: Callable[[str], str]) -> None:
    base, server = prometheus
    topic, group = unique_name("orders"), unique_name("billing")
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap})
    for i in range(MESSAGES):
        producer.produce(topic, f"m{i}".encode())
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": server.bootstrap, "group.id": group,
        "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        consumed = 0
        deadline = time.monotonic() + WAIT_S
        while consumed < CONSUMED and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                consumed += 1
                consumer.commit(message=message, asynchronous=False)  # one commit each
        assert consumed == CONSUMED
        committed = consumer.committed([confluent_kafka.TopicPartition(topic, 0)], timeout=10)
        assert committed[0].offset == CONSUMED

        wait_for(base, 'sum(kafka_server_group_coordinator_metrics_group_count)',
                 lambda n: n == 1)
        wait_for(base, 'kafka_server_group_coordinator_metrics_classic_group_count'
                       '{state="Stable"}', lambda n: n == 1)
        wait_for(base, f'kafka_consumergroup_members{{consumergroup="{group}"}}',
                 lambda n: n == 1)
        rate = wait_for(base, 'rate(kafka_server_group_coordinator_metrics_offset_commit_count'
                              '[1m])', lambda r: r > 0)
        assert rate > 0
        lag = wait_for(base, f'kafka_consumergroup_lag{{consumergroup="{group}",'
                             f'topic="{topic}",partition="0"}}',
                       lambda n: n == MESSAGES - CONSUMED)
        # the log end Prometheus saw, minus the committed offset it saw: the lag it shows
        end = wait_for(base, f'kafka_topic_partition_current_offset{{topic="{topic}",'
                             f'partition="0"}}', lambda n: n == MESSAGES)
        offset = wait_for(base, f'kafka_consumergroup_current_offset{{consumergroup="{group}",'
                                f'topic="{topic}",partition="0"}}', lambda n: n == CONSUMED)
        assert lag == end - offset == MESSAGES - committed[0].offset
    finally:
        consumer.close()
