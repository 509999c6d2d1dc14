"""The image with secured listeners: `docker run` with a SASL_SSL listener (the CA kcsim made
taken from the container) is healthy and serves confluent-kafka with SCRAM-SHA-512 and PLAIN;
KcsimContainer's secured mode returns a client configuration, CA included, that works."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kcsim.server.health import Unhealthy, probe

from ..clientflows import MESSAGES, confluent_flow, payloads
from .conftest import Docker, docker, free_port

pytestmark = pytest.mark.timeout(900)


def _wait_tls_ready(containers: Docker, cid: str, port: int) -> None:
    deadline, problem = time.monotonic() + 60, ""
    while time.monotonic() < deadline:
        try:
            probe("127.0.0.1", port, 2.0, tls=True)
            return
        except Unhealthy as exc:
            problem = str(exc)
            time.sleep(0.1)
    raise AssertionError(f"no TLS answer on {port} ({problem}):\n{containers.logs(cid)[-3000:]}")


def test_docker_run_with_a_sasl_ssl_listener(containers: Docker, names: Any, tmp_path) -> None:
    port = free_port()
    cid = containers.run(
        "-p", f"127.0.0.1:{port}:9094",
        "-e", "KCSIM_LISTENERS=SASL_SSL://0.0.0.0:9094,PLAINTEXT://0.0.0.0:29092",
        "-e", f"KCSIM_ADVERTISED_LISTENERS=SASL_SSL://127.0.0.1:{port},PLAINTEXT://kcsim:29092",
        "-e", "KCSIM_SASL_PLAIN_USERS=alice:alice-secret",
        "-e", "KCSIM_IN_MEMORY=false",  # the CA it makes is kept in /data/tls/ca.pem
        "-e", "KCSIM_INITIAL_REBALANCE_DELAY_MS=0")
    _wait_tls_ready(containers, cid, port)
    docker("cp", f"{cid}:/data/tls/ca.pem", str(tmp_path / "ca.pem"))
    tls = {"security.protocol": "SASL_SSL", "ssl.ca.location": str(tmp_path / "ca.pem")}
    plain = {**tls, "sasl.mechanism": "PLAIN", "sasl.username": "alice",
             "sasl.password": "alice-secret"}
    bootstrap = f"127.0.0.1:{port}"
    seen = confluent_flow(bootstrap, names("plain"), names("group"), plain)
    assert seen.committed == MESSAGES and seen.brokers == [("127.0.0.1", port)]
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    upsert = UserScramCredentialUpsertion(
        "carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), b"carol-secret")
    admin = AdminClient({"bootstrap.servers": bootstrap, **plain})  # kept while its futures run
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(timeout=30)
    scram = {**tls, "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "carol",
             "sasl.password": "carol-secret"}
    topic = names("scram")
    assert confluent_flow(bootstrap, topic, names("group"), scram).values == payloads(topic)
    health = docker("exec", cid, "kcsim", "health")
    assert "SASL_SSL on 127.0.0.1:9094: ok" in health.stdout, health.stdout + health.stderr


def test_kcsim_container_secured_mode_gives_its_client_config(image: str, names: Any,
                                                              monkeypatch) -> None:
    from testcontainers.core.config import testcontainers_config

    from kcsim.testcontainers import KcsimContainer

    monkeypatch.setattr(testcontainers_config, "ryuk_disabled", True)
    with KcsimContainer(image).with_security("SASL_SSL", "app", "app-secret") as kcsim:
        config = kcsim.client_config()
        assert config["security.protocol"] == "SASL_SSL"
        assert config["ssl.ca.location"] == kcsim.ssl_ca_file
        assert (config["sasl.mechanism"], config["sasl.username"]) == ("PLAIN", "app")
        topic = names("tc-secured")
        seen = confluent_flow(config.pop("bootstrap.servers"), topic, names("group"), config)
        assert seen.values == payloads(topic) and seen.committed == MESSAGES
