"""kafkajs against a kcsim playing three brokers (node/brokers.js): leaders on every node, a
coordinator apart from the leaders, a coordinator moving while members consume.

Not a node stopping: kafkajs 2.2.4 keeps one fetcher per node until its metadata names
other nodes or the group rebalances, so the member fetching from a stopped leader waits
(its producer moves on); the other clients' tests (test_brokers.py,
test_brokers_java.py) cover it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from . import brokerkit, nodeclient
from .brokerkit import Driver, group_coordinated_by, leaders

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim import EmbeddedServer

pytestmark = [pytest.mark.timeout(240), pytest.mark.kcsim(brokers=3)]

NODES = {1, 2, 3}
drivers = brokerkit.drivers  # the fixture


@pytest.fixture
def js(drivers: list[Driver]) -> Callable[..., Driver]:
    """Start node/brokers.js scenarios, one node process each."""
    def start(*args: str) -> Driver:
        env = {**os.environ, "NODE_PATH": str(nodeclient.modules())}
        drivers.append(Driver(["node", str(nodeclient.SOURCES / "brokers.js"), *args], env))
        return drivers[-1]
    return start


def test_kafkajs_sees_leaders_on_every_node(kcsim: EmbeddedServer,
                                            js: Callable[..., Driver]) -> None:
    lines = js("leaders", kcsim.bootstrap, "kjspread", "6").finish()
    assert "nodes 1,2,3" in lines
    assert leaders(lines) == {p: kcsim.nodes.leader("kjspread", p) for p in range(6)}
    assert set(leaders(lines).values()) == NODES


def test_kafkajs_commits_through_a_coordinator_leading_none_of_its_partitions(
        kcsim: EmbeddedServer, js: Callable[..., Driver]) -> None:
    (apart,) = NODES - {kcsim.nodes.leader("kjapart", p) for p in range(2)}
    group = group_coordinated_by(kcsim, apart, "kj")
    brokerkit.step_through(kcsim, js, "kjapart", group, lambda: None, members=1, partitions=2)
    commits = kcsim.requests("OffsetCommit", group=group)
    assert commits and not any(r.errors for r in commits)


def test_kafkajs_members_refind_a_moved_coordinator(
        kcsim: EmbeddedServer, js: Callable[..., Driver]) -> None:
    group = group_coordinated_by(kcsim, 1, "kj")
    brokerkit.through_a_coordinator_move(kcsim, js, "kjmoving", group)
