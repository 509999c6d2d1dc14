"""The installed pytest plugin gives tests a broker real clients can use, with its controls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import trio
from kafka import KafkaAdminClient

from kcsim.admin import AdminClient, TopicPartition

if TYPE_CHECKING:
    from kcsim.testing import EmbeddedServer, TrioKcsim


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


@pytest.mark.kcsim(default_partitions=4, node_id=7)
def test_a_marker_gives_the_settings(kcsim: EmbeddedServer) -> None:
    assert (kcsim.config.default_partitions, kcsim.config.node_id) == (4, 7)
    assert kcsim.config.in_memory


@pytest.mark.kcsim(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=1000)
def test_a_persistent_broker_restarts_with_its_state(kcsim_persistent: EmbeddedServer,
                                                     tmp_path: Any) -> None:
    assert not kcsim_persistent.config.in_memory
    assert str(tmp_path) in kcsim_persistent.config.data_dir
    admin = KafkaAdminClient(bootstrap_servers=kcsim_persistent.bootstrap, request_timeout_ms=5000)
    try:
        from kafka.admin import NewTopic

        admin.create_topics([NewTopic("t", 1, 1)])
    finally:
        admin.close()
    with AdminClient(kcsim_persistent.bootstrap, timeout=10) as kc:
        kc.alter_group_offsets("g", {TopicPartition("t", 0): 9}).all()
    port = kcsim_persistent.port
    ahead = kcsim_persistent.clock.advance(30_000)
    kcsim_persistent.restart()
    assert kcsim_persistent.port == port
    assert kcsim_persistent.committed("g") == {("t", 0): 9}
    assert kcsim_persistent.clock.now_ms() >= ahead  # the advanced time is kept
    assert kcsim_persistent.requests() == []  # a new log
    kcsim_persistent.clock.advance(31_000)  # retention (60 s) ends for the Empty group
    assert kcsim_persistent.wait_for_committed("g", {}) == {}


async def test_the_trio_fixture_runs_in_the_tests_run(kcsim_trio: TrioKcsim) -> None:
    stream = await trio.open_tcp_stream("127.0.0.1", kcsim_trio.port)
    await stream.aclose()
    assert kcsim_trio.bootstrap == f"127.0.0.1:{kcsim_trio.port}"
    assert kcsim_trio.server.clock.now_ms() == kcsim_trio.clock.now_ms()


@pytest.mark.kcsim(default_partitions=2)
async def test_the_trio_fixture_on_mock_time(autojump_clock: Any, kcsim_trio: TrioKcsim) -> None:
    assert kcsim_trio.config.default_partitions == 2
    before = kcsim_trio.clock.now_ms()
    await trio.sleep(3600)  # an hour of MockClock time, at once
    assert kcsim_trio.clock.now_ms() - before == 3_600_000
