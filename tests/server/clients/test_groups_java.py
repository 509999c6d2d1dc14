"""Consumer groups through the Java client (kafka-clients 3.9 and 4.x): KafkaConsumer and Admin.

The scenarios are those of test_groups_python_clients.py (tests/integration/groupscenarios.py),
run by one JVM per test (tests/integration/java/GroupDriver.java).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from . import groupscenarios
from .groupclients import PYTHON_CLIENTS
from .javagroups import JavaGroupClient

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

pytestmark = [pytest.mark.java, pytest.mark.timeout(150)]


@pytest.fixture
def java(tmp_path: Path, java_version: str) -> Iterator[Callable[[str], JavaGroupClient]]:
    """Start the Java driver; its stderr is printed at teardown (pytest shows it on failure)."""
    opened: list[JavaGroupClient] = []

    def start(bootstrap: str) -> JavaGroupClient:
        client = JavaGroupClient(bootstrap, tmp_path / f"java{len(opened)}.stderr.log",
                                 java_version)
        opened.append(client)
        return client

    yield start
    for client in opened:
        client.close()
        print(f"Java driver stderr ({client.log_path}):\n{client.stderr()}")


def request_counts(srv: Any) -> Callable[[], dict[int, int]]:
    return lambda: srv.run_sync(lambda: dict(srv.server.broker.request_counts))


def generation(srv: Any) -> Callable[[str], int]:
    return lambda group: srv.run_sync(lambda: srv.server.broker.groups.group(group).generation)


def test_members_share_partitions(kcsim_server: Any, unique_name: Any, java: Any) -> None:
    """Three KafkaConsumers split six partitions and consume them; after one leaves two cover all.

    Admin lists and describes the group Stable with the members' own assignments,
    and Empty without members once they all left.
    """
    groupscenarios.members_share_partitions(java(kcsim_server.bootstrap), kcsim_server.bootstrap,
                                            unique_name)


def test_cooperative_members_keep_partitions(kcsim_server: Any, unique_name: Any,
                                             java: Any) -> None:
    """KafkaConsumers with the CooperativeStickyAssignor share six partitions; after one
    leaves the two others keep what they owned and take over the rest."""
    groupscenarios.cooperative_members_keep_partitions(java(kcsim_server.bootstrap),
                                                       kcsim_server.bootstrap, unique_name)


def test_commits_reach_a_fresh_consumer(kcsim_server: Any, unique_name: Any, java: Any) -> None:
    """Offsets one KafkaConsumer commits are what a later member reads and resumes from.

    Admin listConsumerGroupOffsets of the Empty group, no topics named, returns the
    three committed partitions (KIP-88).
    """
    groupscenarios.commits_reach_a_fresh_consumer(java(kcsim_server.bootstrap),
                                                  kcsim_server.bootstrap, unique_name)


def test_offsets_of_many_groups_in_one_request(embedded_server: Any, unique_name: Any,
                                              java: Any) -> None:
    """Admin listConsumerGroupOffsets of three groups is one OffsetFetch v8+ (KIP-709).

    Its answer agrees with three single-group calls.
    """
    groupscenarios.offsets_of_many_groups(java(embedded_server.bootstrap), embedded_server.bootstrap,
                                          unique_name, request_counts(embedded_server))


def test_admin_changes_only_empty_groups(kcsim_server: Any, unique_name: Any, java: Any) -> None:
    """alterConsumerGroupOffsets, deleteConsumerGroupOffsets and deleteConsumerGroups
    fail while a member runs and succeed once the group is Empty."""
    groupscenarios.admin_changes_only_empty_groups(java(kcsim_server.bootstrap),
                                                   kcsim_server.bootstrap, unique_name)


def test_static_member_rejoins_without_rebalance(embedded_server: Any, unique_name: Any,
                                                 java: Any) -> None:
    """A static KafkaConsumer restarts with its group.instance.id: same assignment,
    the other members keep their generation and see no rebalance callback."""
    groupscenarios.static_member_rejoins_quietly(java(embedded_server.bootstrap),
                                                 embedded_server.bootstrap, unique_name,
                                                 request_counts(embedded_server),
                                                 generation(embedded_server))


def test_admin_removes_departed_static_member(kcsim_server: Any, unique_name: Any,
                                              java: Any) -> None:
    """Admin removeMembersFromConsumerGroup takes a closed static KafkaConsumer out of the
    group by its group.instance.id; the others take over at once."""
    groupscenarios.admin_removes_departed_static_member(java(kcsim_server.bootstrap),
                                                        kcsim_server.bootstrap, unique_name)


def test_silent_member_expires(kcsim_factory: Any, unique_name: Any, java: Any) -> None:
    """A static KafkaConsumer that closes (without leaving) stays until its session times
    out; then the others take over its partitions."""
    server = kcsim_factory(min_session_timeout_ms=1000)
    groupscenarios.silent_member_expires(java(server.bootstrap), server.bootstrap, unique_name,
                                         session_ms=3000)


def test_offsets_expire_once_empty(kcsim_factory: Any, unique_name: Any, java: Any) -> None:
    """Committed offsets outlive the retention time while the group consumes them and
    expire once it is Empty; then the group is gone (KIP-211)."""
    server = kcsim_factory(offsets_retention_ms=2000, offsets_retention_check_interval_ms=200)
    groupscenarios.offsets_expire_once_empty(java(server.bootstrap), server.bootstrap, unique_name,
                                             retention_ms=2000)


def test_one_group_of_every_client(kcsim_server: Any, unique_name: Any, java: Any) -> None:
    """kafka-python, confluent-kafka, aiokafka and Java members form one group, split its
    partitions and commit; each library's Admin reads the same offsets."""
    bootstrap = kcsim_server.bootstrap
    clients = [cls(bootstrap) for cls in PYTHON_CLIENTS.values()]
    try:
        groupscenarios.one_group_of_every_client([*clients, java(bootstrap)], bootstrap,
                                                 unique_name)
    finally:
        for client in clients:
            client.close()
