"""Java kafka-clients 4.x against a kcsim playing three brokers (java/Brokers.java): leaders
on every node, a coordinator apart from the leaders, a coordinator moving while members
consume, a leader's node stopping, the bootstrap node stopping and starting again, and a
transactional consume-transform-produce loop through moves of both its coordinators.

The JVM says when a step is done ("batch ..." or "open") and waits for a line; the test
stages the change between steps. Waits are on what the clients say, never a sleep.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import pytest

from . import brokerkit
from .brokerkit import Driver, group_coordinated_by, leaders
from .javaclient import MAVEN_CLIENT, classpath, skip_without_java

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim import EmbeddedServer

pytestmark = [pytest.mark.java, pytest.mark.timeout(240), pytest.mark.kcsim(brokers=3)]

NODES = {1, 2, 3}
drivers = brokerkit.drivers  # the fixture


@pytest.fixture
def jvm(drivers: list[Driver]) -> Callable[..., Driver]:
    """Start Brokers.java scenarios on kafka-clients 4.x, one JVM each."""
    def start(*args: str) -> Driver:
        skip_without_java()
        drivers.append(Driver(["java", "-Xshare:auto", "-XX:+UseSerialGC",
                               "-XX:TieredStopAtLevel=1", "-cp", classpath(MAVEN_CLIENT),
                               "Brokers", *args]))
        return drivers[-1]
    return start


def test_java_sees_leaders_on_every_node(kcsim: EmbeddedServer,
                                         jvm: Callable[..., Driver]) -> None:
    lines = jvm("leaders", kcsim.bootstrap, "jspread", "6").finish()
    assert "nodes 1,2,3" in lines
    seen = leaders(lines)
    assert seen == {p: kcsim.nodes.leader("jspread", p) for p in range(6)}
    assert set(seen.values()) == NODES


def test_java_commits_through_a_coordinator_leading_none_of_its_partitions(
        kcsim: EmbeddedServer, jvm: Callable[..., Driver]) -> None:
    (apart,) = NODES - {kcsim.nodes.leader("japart", p) for p in range(2)}
    group = group_coordinated_by(kcsim, apart)
    lines = brokerkit.step_through(kcsim, jvm, "japart", group, lambda: None, members=1, partitions=2)
    assert f"coordinator {apart}" in lines
    commits = kcsim.requests("OffsetCommit", group=group)
    assert commits and not any(r.errors for r in commits)


def test_java_members_refind_a_moved_coordinator(
        kcsim: EmbeddedServer, jvm: Callable[..., Driver]) -> None:
    group = group_coordinated_by(kcsim, 1)
    lines = brokerkit.through_a_coordinator_move(kcsim, jvm, "jmoving", group)
    assert "coordinator 3" in lines


def test_java_clients_follow_the_leaders_of_a_stopped_node(
        kcsim: EmbeddedServer, jvm: Callable[..., Driver]) -> None:
    group = group_coordinated_by(kcsim, 1)

    def stop() -> None:
        assert 2 in {kcsim.nodes.leader("jfailover", p) for p in range(6)}
        kcsim.nodes.stop(2)
        assert 2 not in {kcsim.nodes.leader("jfailover", p) for p in range(6)}

    brokerkit.step_through(kcsim, jvm, "jfailover", group, stop, bootstrap=kcsim.bootstrap_servers)


def test_java_clients_go_on_while_the_bootstrap_node_stops_and_starts(
        kcsim: EmbeddedServer, jvm: Callable[..., Driver]) -> None:
    """The clients were given node 1 only: they go on through the nodes Metadata named."""
    group = group_coordinated_by(kcsim, 2)
    brokerkit.step_through(kcsim, jvm, "jboot", group, lambda: kcsim.nodes.stop(1), members=2,
                 after=lambda: kcsim.nodes.start(1))


def test_java_transactions_go_on_through_moves_of_both_coordinators(
        kcsim: EmbeddedServer, jvm: Callable[..., Driver]) -> None:
    group = group_coordinated_by(kcsim, 1, "jtx")
    txn_id = next(t for t in (f"jtx-{i}" for i in range(1000))
                  if kcsim.nodes.coordinator(t, transactional=True) == 2)
    count = 60
    loop = jvm("txn", kcsim.bootstrap, "jtx-in", "jtx-out", group, txn_id, str(count))
    loop.next_line("open")
    since = kcsim.last_request_seq()
    kcsim.nodes.move_coordinator(txn_id, 3, load_ms=300, transactional=True)
    kcsim.nodes.move_coordinator(group, 2, load_ms=300)
    loop.answer("go on")
    lines = loop.finish()
    outputs = [line.split()[1] for line in lines if line.startswith("out ")]
    assert Counter(outputs) == Counter(f"out-v{i}" for i in range(count))
    assert kcsim.committed(group) == {("jtx-in", p): count // 3 for p in range(3)}
    # The open transaction's offsets and its end each went to the old coordinator first.
    for api in ("TxnOffsetCommit", "EndTxn"):
        heard = [r.errors for r in kcsim.requests(api, since=since)]
        assert heard[0] == ["NOT_COORDINATOR"] and heard[-1] == [], (api, heard)
    assert kcsim.nodes.coordinator(txn_id, transactional=True) == 3

