"""kcsim.testcontainers from a plain pytest test, with testcontainers-python's defaults:
a random host port, and the Ryuk reaper where its image can be had."""

from __future__ import annotations

from typing import Any

import pytest

from ..clientflows import MESSAGES, confluent_flow, payloads
from .conftest import REPORT, Docker, client_in_container, docker

pytestmark = pytest.mark.timeout(900)


@pytest.fixture
def reaper_or_not(image: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ryuk where its image is here or can be pulled; else switched off, as the README says."""
    from testcontainers.core.config import testcontainers_config

    ryuk = testcontainers_config.ryuk_image
    if testcontainers_config.ryuk_disabled:
        REPORT["testcontainers"] = "Ryuk switched off by TESTCONTAINERS_RYUK_DISABLED"
    elif (docker("image", "inspect", ryuk, check=False).returncode != 0
          and docker("pull", ryuk, check=False, timeout=120).returncode != 0):
        monkeypatch.setattr(testcontainers_config, "ryuk_disabled", True)
        REPORT["testcontainers"] = f"Ryuk switched off: {ryuk} cannot be pulled here"
    else:
        REPORT["testcontainers"] = f"with Ryuk ({ryuk})"


def test_kcsim_container_with_testcontainers_defaults(image: str, reaper_or_not: None,
                                                      names: Any) -> None:
    from kcsim.testcontainers import KcsimContainer

    with KcsimContainer(image) as kcsim:
        bootstrap = kcsim.get_bootstrap_server()
        host, port = bootstrap.rsplit(":", 1)
        topic = names("tc")
        seen = confluent_flow(bootstrap, topic, names("group"))
        container_id = kcsim.get_container_id()
    assert seen.brokers == [(host, int(port))]
    assert seen.values == payloads(topic)
    assert seen.committed == MESSAGES
    assert docker("inspect", container_id, check=False).returncode != 0, "container left behind"


def test_kcsim_container_on_a_network_serves_other_containers_by_alias(
        image: str, reaper_or_not: None, containers: Docker, names: Any) -> None:
    from testcontainers.core.network import Network

    from kcsim.testcontainers import KcsimContainer

    with Network() as network, \
            KcsimContainer(image).with_network(network).with_network_aliases("broker") as kcsim:
        topic = names("net")
        seen = client_in_container(containers, network.name, "broker:29092", topic,
                                   names("group"))
        assert confluent_flow(kcsim.get_bootstrap_server(), names("host"),
                              names("group")).committed == MESSAGES
        containers.close()  # the client container, before the network goes
    assert seen == {"brokers": [["broker", 29092]], "values": [v.decode() for v in payloads(topic)],
                    "committed": MESSAGES}
