"""Consumer groups through the Java client (kafka-clients 3.9 and 4.x): KafkaConsumer and Admin.

The scenarios are those of test_groups_python_clients.py (groupscenarios.py), run by
one JVM per test (java/GroupDriver.java) against the in-process broker (`kcsim`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from . import groupscenarios
from .conftest import java_drivers
from .groupclients import PYTHON_CLIENTS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from .javagroups import JavaGroupClient

pytestmark = [pytest.mark.java, pytest.mark.timeout(150)]


@pytest.fixture
def java(tmp_path: Path, java_version: str) -> Iterator[Callable[[str], JavaGroupClient]]:
    """Java drivers on the kafka-clients version of this run of the test."""
    yield from java_drivers(tmp_path, java_version)


def test_members_share_partitions(kcsim: Any, unique_name: Any, java: Any) -> None:
    """Three KafkaConsumers split six partitions and consume them; after one leaves two cover all.

    Admin lists and describes the group Stable with the members' own assignments,
    and Empty without members once they all left.
    """
    groupscenarios.members_share_partitions(java(kcsim.bootstrap), kcsim, unique_name)


def test_cooperative_members_keep_partitions(kcsim: Any, unique_name: Any, java: Any) -> None:
    """KafkaConsumers with the CooperativeStickyAssignor share six partitions; after one
    leaves the two others keep what they owned and take over the rest."""
    groupscenarios.cooperative_members_keep_partitions(java(kcsim.bootstrap), kcsim, unique_name)


def test_commits_reach_a_fresh_consumer(kcsim: Any, unique_name: Any, java: Any) -> None:
    """Offsets one KafkaConsumer commits are what a later member reads and resumes from.

    Admin listConsumerGroupOffsets of the Empty group, no topics named, returns the
    three committed partitions (KIP-88).
    """
    groupscenarios.commits_reach_a_fresh_consumer(java(kcsim.bootstrap), kcsim, unique_name)


def test_offsets_of_many_groups_in_one_request(kcsim: Any, unique_name: Any, java: Any) -> None:
    """Admin listConsumerGroupOffsets of three groups is one OffsetFetch v8+ (KIP-709).

    Its answer agrees with three single-group calls.
    """
    groupscenarios.offsets_of_many_groups(java(kcsim.bootstrap), kcsim, unique_name)


def test_admin_changes_only_empty_groups(kcsim: Any, unique_name: Any, java: Any) -> None:
    """alterConsumerGroupOffsets, deleteConsumerGroupOffsets and deleteConsumerGroups
    fail while a member runs and succeed once the group is Empty."""
    groupscenarios.admin_changes_only_empty_groups(java(kcsim.bootstrap), kcsim, unique_name)


def test_static_member_rejoins_without_rebalance(kcsim: Any, unique_name: Any,
                                                 java: Any) -> None:
    """A static KafkaConsumer restarts with its group.instance.id: same assignment,
    the other members keep their generation and see no rebalance callback."""
    groupscenarios.static_member_rejoins_quietly(java(kcsim.bootstrap), kcsim, unique_name)


def test_admin_removes_departed_static_member(kcsim: Any, unique_name: Any, java: Any) -> None:
    """Admin removeMembersFromConsumerGroup takes a closed static KafkaConsumer out of the
    group by its group.instance.id; the others take over at once."""
    groupscenarios.admin_removes_departed_static_member(java(kcsim.bootstrap), kcsim,
                                                        unique_name)


@pytest.mark.kcsim(min_session_timeout_ms=1000)
def test_silent_member_expires(kcsim: Any, unique_name: Any, java: Any) -> None:
    """A static KafkaConsumer that closes (without leaving) stays until its session times
    out; then the others take over its partitions."""
    groupscenarios.silent_member_expires(java(kcsim.bootstrap), kcsim, unique_name,
                                         session_ms=3000)


@pytest.mark.kcsim(offsets_retention_ms=2000, offsets_retention_check_interval_ms=200)
def test_offsets_expire_once_empty(kcsim: Any, unique_name: Any, java: Any) -> None:
    """Committed offsets outlive the retention time while the group consumes them and
    expire once it is Empty; then the group is gone (KIP-211). The broker's clock is
    advanced past the retention time instead of waiting for it."""
    groupscenarios.offsets_expire_once_empty(java(kcsim.bootstrap), kcsim, unique_name)


def test_one_group_of_every_client(kcsim: Any, unique_name: Any, java: Any) -> None:
    """kafka-python, confluent-kafka, aiokafka and Java members form one group, split its
    partitions and commit; each library's Admin reads the same offsets."""
    clients = [cls(kcsim.bootstrap) for cls in PYTHON_CLIENTS.values()]
    try:
        groupscenarios.one_group_of_every_client([*clients, java(kcsim.bootstrap)], kcsim,
                                                 unique_name)
    finally:
        for client in clients:
            client.close()
