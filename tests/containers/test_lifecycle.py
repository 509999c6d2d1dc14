"""The container's life: healthy once it serves Kafka (on whatever port it listens), stopped
cleanly by SIGTERM, and its state kept across containers only in a volume asked for."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kcsim.admin import AdminClient, TopicPartition

from ..clientflows import MESSAGES, confluent_flow
from .conftest import REPORT, Docker, docker, free_port

pytestmark = pytest.mark.timeout(900)

HEALTHY_TIMEOUT_S = 90.0


def test_the_health_check_turns_healthy_on_a_non_default_port(containers: Docker) -> None:
    cid = containers.run(
        "-e", "KCSIM_LISTENERS=PLAINTEXT_HOST://0.0.0.0:19093,PLAINTEXT://0.0.0.0:29093")
    started = time.monotonic()
    status = ""
    while time.monotonic() - started < HEALTHY_TIMEOUT_S:
        status = containers.inspect(cid, "{{.State.Health.Status}}")
        if status in ("healthy", "unhealthy"):
            break
        time.sleep(0.2)
    REPORT["container start to healthy"] = f"{time.monotonic() - started:.1f} s"
    health = containers.inspect(cid, "{{json .State.Health}}")
    assert status == "healthy", f"{health}\n{containers.logs(cid)[-3000:]}"
    assert "PLAINTEXT_HOST on 127.0.0.1:19093: ok" in health
    assert "PLAINTEXT on 127.0.0.1:29093: ok" in health


def test_sigterm_stops_the_container_with_status_0_within_2_seconds(containers: Docker) -> None:
    port = free_port()
    cid = containers.run("-p", f"127.0.0.1:{port}:9092")
    containers.wait_ready(cid, port)
    start = time.monotonic()
    docker("stop", "--time", "2", cid)  # SIGTERM, then SIGKILL (status 137) after 2 s
    REPORT["docker stop (SIGTERM)"] = f"{time.monotonic() - start:.2f} s"
    assert containers.inspect(cid, "{{.State.ExitCode}}") == "0", containers.logs(cid)[-3000:]
    assert "received SIGTERM, shutting down" in containers.logs(cid)


def _run_with(containers: Docker, volume: str, port: int, *, in_memory: bool) -> str:
    cid = containers.run(
        "-p", f"127.0.0.1:{port}:9092", "-v", f"{volume}:/data",
        "-e", f"KCSIM_IN_MEMORY={str(in_memory).lower()}",
        "-e", "KCSIM_INITIAL_REBALANCE_DELAY_MS=0",
        "-e", f"KCSIM_ADVERTISED_LISTENERS=PLAINTEXT_HOST://127.0.0.1:{port}")
    containers.wait_ready(cid, port)
    return cid


def _what_survived(port: int, topic: str, group: str) -> tuple[list[str], dict[Any, int]]:
    with AdminClient(f"127.0.0.1:{port}", timeout=20) as admin:
        topics = list(admin.describe_topics([topic]).succeeded)
        offsets = admin.list_group_offsets(group)[group]
    return topics, {tp: o.offset for tp, o in offsets.items()}


@pytest.mark.parametrize("in_memory", [False, True], ids=["volume", "in-memory"])
def test_state_outlives_the_container_only_in_a_data_volume(containers: Docker, names: Any,
                                                            in_memory: bool) -> None:
    volume, port = containers.volume(), free_port()
    topic, group = names("kept"), names("group")
    first = _run_with(containers, volume, port, in_memory=in_memory)
    assert confluent_flow(f"127.0.0.1:{port}", topic, group).committed == MESSAGES
    docker("stop", first)
    docker("rm", first)
    _run_with(containers, volume, port, in_memory=in_memory)
    topics, offsets = _what_survived(port, topic, group)
    if in_memory:
        assert (topics, offsets) == ([], {})
    else:
        assert (topics, offsets) == ([topic], {TopicPartition(topic, 0): MESSAGES})
