"""docker/compose-3-brokers.yaml: one container playing three brokers, each node
advertising its own published address; a client on the host sees all three and leaders
on each."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from .conftest import REPO, Docker, free_port, port_is_free, wait_until_answers

pytestmark = pytest.mark.timeout(900)

COMPOSE_FILE = REPO / "docker" / "compose-3-brokers.yaml"


def three_free_ports() -> int:
    """The first of three consecutive free ports."""
    while True:
        first = free_port()
        if first + 2 < 65536 and all(port_is_free(first + i) for i in (1, 2)):
            return first


def compose_command() -> list[str]:
    """`docker compose` (v2) where it answers, else docker-compose (v1)."""
    v2 = subprocess.run(["docker", "compose", "version"], capture_output=True,
                        stdin=subprocess.DEVNULL).returncode == 0
    if not v2 and shutil.which("docker-compose") is None:
        pytest.skip("neither `docker compose` nor docker-compose here")
    return ["docker", "compose"] if v2 else ["docker-compose"]


def test_three_brokers_in_one_container(containers: Docker, names: Any) -> None:
    port = three_free_ports()
    project = containers.name("brokers")
    env = {**os.environ, "KCSIM_IMAGE": containers.image, "KCSIM_HOST_PORT": str(port),
           "KCSIM_HOST_PORT_LAST": str(port + 2)}
    base = [*compose_command(), "-p", project, "-f", str(COMPOSE_FILE)]
    up = subprocess.run([*base, "up", "-d", "--no-build"], capture_output=True, text=True,
                        env=env, timeout=180, stdin=subprocess.DEVNULL)
    try:
        assert up.returncode == 0, up.stderr
        for node in range(3):
            wait_until_answers(port + node)
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}", "log_level": 3})
        topic = names("spread")
        admin.create_topics([NewTopic(topic, 6, 1)])[topic].result(30)
        meta = admin.list_topics(topic, timeout=30)
        brokers = {b.id: (b.host, b.port) for b in meta.brokers.values()}
        leaders = {p.leader for p in meta.topics[topic].partitions.values()}
    finally:
        down = subprocess.run([*base, "down", "-v"], capture_output=True, text=True, env=env,
                              timeout=180, stdin=subprocess.DEVNULL)
    assert down.returncode == 0, down.stderr
    assert brokers == {n: ("127.0.0.1", port + n - 1) for n in (1, 2, 3)}
    assert leaders == {1, 2, 3}
