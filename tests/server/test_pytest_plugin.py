"""The installed pytest plugin gives tests a broker real clients can use."""

from __future__ import annotations

from kafka import KafkaAdminClient


def test_kcsim_fixture_serves_real_clients(kcsim):
    admin = KafkaAdminClient(bootstrap_servers=kcsim.bootstrap, request_timeout_ms=5000)
    try:
        cluster = admin.describe_cluster()
        assert cluster["brokers"][0]["port"] == kcsim.port
    finally:
        admin.close()


def test_factory_applies_settings(kcsim_embedded_factory):
    server = kcsim_embedded_factory(default_partitions=3)
    assert server.server.broker.config.default_partitions == 3
    assert server.config.in_memory
