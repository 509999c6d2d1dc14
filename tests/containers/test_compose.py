"""docker/compose.yaml: a client container on the compose network and a client on the host
at the same time, each through its own listener and sent back to its own address."""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
from typing import Any

import pytest

from ..clientflows import MESSAGES, kafka_python_flow, payloads
from .conftest import REPO, Docker, client_in_container, free_port, wait_until_answers

pytestmark = pytest.mark.timeout(900)

COMPOSE_FILE = REPO / "docker" / "compose.yaml"


def _compose_commands() -> list[Any]:
    v2 = subprocess.run(["docker", "compose", "version"], capture_output=True,
                        stdin=subprocess.DEVNULL).returncode == 0 if shutil.which("docker") else False
    return [
        pytest.param(["docker-compose"], id="docker-compose",
                     marks=pytest.mark.skipif(shutil.which("docker-compose") is None,
                                              reason="no docker-compose (v1) here")),
        pytest.param(["docker", "compose"], id="docker-compose-v2",
                     marks=pytest.mark.skipif(not v2, reason="no `docker compose` (v2) here")),
    ]


@pytest.mark.parametrize("compose", _compose_commands())
def test_a_container_and_a_host_client_at_once(compose: list[str], containers: Docker,
                                               names: Any) -> None:
    port = free_port()
    project = containers.name("compose")
    env = {**os.environ, "KCSIM_IMAGE": containers.image, "KCSIM_HOST_PORT": str(port)}
    base = [*compose, "-p", project, "-f", str(COMPOSE_FILE)]
    up = subprocess.run([*base, "up", "-d", "--no-build"], capture_output=True, text=True,
                        env=env, timeout=180, stdin=subprocess.DEVNULL)
    try:
        assert up.returncode == 0, up.stderr
        wait_until_answers(port)
        inside_topic, host_topic = names("inside"), names("host")
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            inside = pool.submit(client_in_container, containers, f"{project}_default",
                                 "kcsim:29092", inside_topic, names("group"))
            on_host = pool.submit(kafka_python_flow, f"127.0.0.1:{port}", host_topic,
                                  names("group"))
            seen_inside, seen_on_host = inside.result(), on_host.result()
    finally:
        down = subprocess.run([*base, "down", "-v"], capture_output=True, text=True, env=env,
                              timeout=180, stdin=subprocess.DEVNULL)
    assert down.returncode == 0, down.stderr
    assert seen_inside == {"brokers": [["kcsim", 29092]],
                           "values": [v.decode() for v in payloads(inside_topic)],
                           "committed": MESSAGES}
    assert seen_on_host.brokers == [("127.0.0.1", port)]
    assert seen_on_host.values == payloads(host_topic)
    assert seen_on_host.committed == MESSAGES
