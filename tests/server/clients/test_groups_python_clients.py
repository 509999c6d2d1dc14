"""Consumer groups through kafka-python, confluent-kafka and aiokafka against kcsim.

Each scenario (tests/integration/groupscenarios.py) runs with every client that
supports its calls: kafka-python and confluent-kafka have consumer groups and the
group admin calls; aiokafka has consumer groups and list/describe/list-offsets admin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from . import groupscenarios
from .groupclients import PYTHON_CLIENTS, GroupClient

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.timeout(120)

ALL = ["kafka-python", "confluent", "aiokafka"]


@pytest.fixture
def make_client() -> Iterator[Callable[[str, str], Any]]:
    opened: list[GroupClient] = []

    def make(kind: str, bootstrap: str) -> Any:
        client = PYTHON_CLIENTS[kind](bootstrap)
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.close()


def request_counts(srv: Any) -> Callable[[], dict[int, int]]:
    return lambda: srv.run_sync(lambda: dict(srv.server.broker.request_counts))


def generation(srv: Any) -> Callable[[str], int]:
    return lambda group: srv.run_sync(lambda: srv.server.broker.groups.group(group).generation)


@pytest.mark.parametrize("kind", ALL)
def test_members_share_partitions(kcsim_server: Any, unique_name: Any, make_client: Any,
                                  kind: str) -> None:
    """Three members split six partitions and consume them; after one leaves two cover all.

    Admin lists and describes the group Stable with the members' own assignments,
    and Empty without members once they all left.
    """
    client = make_client(kind, kcsim_server.bootstrap)
    groupscenarios.members_share_partitions(client, kcsim_server.bootstrap, unique_name)


@pytest.mark.parametrize("kind", ["kafka-python", "confluent"])
def test_cooperative_members_keep_partitions(kcsim_server: Any, unique_name: Any,
                                             make_client: Any, kind: str) -> None:
    """With the cooperative-sticky assignor members share six partitions, and after one
    leaves the two others keep what they owned and take over the rest."""
    client = make_client(kind, kcsim_server.bootstrap)
    groupscenarios.cooperative_members_keep_partitions(client, kcsim_server.bootstrap,
                                                       unique_name)


@pytest.mark.parametrize("kind", ALL)
def test_commits_reach_a_fresh_consumer(kcsim_server: Any, unique_name: Any, make_client: Any,
                                        kind: str) -> None:
    """Offsets one member commits are what a later member of the group reads and resumes from.

    Admin lists the Empty group's three committed partitions without naming topics (KIP-88).
    """
    client = make_client(kind, kcsim_server.bootstrap)
    groupscenarios.commits_reach_a_fresh_consumer(client, kcsim_server.bootstrap, unique_name)


def test_offsets_of_many_groups_in_one_request(embedded_server: Any, unique_name: Any,
                                              make_client: Any) -> None:
    """kafka-python lists three groups' offsets with one OffsetFetch (KIP-709)."""
    client = make_client("kafka-python", embedded_server.bootstrap)
    groupscenarios.offsets_of_many_groups(client, embedded_server.bootstrap, unique_name,
                                          request_counts(embedded_server))


@pytest.mark.parametrize("kind", ["kafka-python", "confluent"])
def test_admin_changes_only_empty_groups(kcsim_server: Any, unique_name: Any, make_client: Any,
                                         kind: str) -> None:
    """Offsets are altered and deleted, and the group deleted, only once it is Empty."""
    client = make_client(kind, kcsim_server.bootstrap)
    groupscenarios.admin_changes_only_empty_groups(client, kcsim_server.bootstrap, unique_name)


@pytest.mark.parametrize("kind", ALL)
def test_static_member_rejoins_without_rebalance(embedded_server: Any, unique_name: Any,
                                                 make_client: Any, kind: str) -> None:
    """A static member restarts with its group.instance.id: same assignment, no rebalance."""
    client = make_client(kind, embedded_server.bootstrap)
    groupscenarios.static_member_rejoins_quietly(client, embedded_server.bootstrap, unique_name,
                                                 request_counts(embedded_server),
                                                 generation(embedded_server))


def test_admin_removes_departed_static_member(kcsim_server: Any, unique_name: Any,
                                              make_client: Any) -> None:
    """kafka-python's remove_group_members takes a closed static member out of the group
    by its group.instance.id; the others take over at once."""
    client = make_client("kafka-python", kcsim_server.bootstrap)
    groupscenarios.admin_removes_departed_static_member(client, kcsim_server.bootstrap,
                                                        unique_name)


@pytest.mark.parametrize("kind", ALL)
def test_silent_member_expires(kcsim_factory: Any, unique_name: Any, make_client: Any,
                               kind: str) -> None:
    """A static member that closes (without leaving) stays until its session times out;
    then the others take over its partitions."""
    server = kcsim_factory(min_session_timeout_ms=1000)
    client = make_client(kind, server.bootstrap)
    groupscenarios.silent_member_expires(client, server.bootstrap, unique_name, session_ms=3000)


@pytest.mark.parametrize("kind", ALL)
def test_offsets_expire_once_empty(kcsim_factory: Any, unique_name: Any, make_client: Any,
                                   kind: str) -> None:
    """Committed offsets outlive the retention time while the group consumes them and
    expire once it is Empty; then the group is gone (KIP-211)."""
    server = kcsim_factory(offsets_retention_ms=2000, offsets_retention_check_interval_ms=200)
    client = make_client(kind, server.bootstrap)
    groupscenarios.offsets_expire_once_empty(client, server.bootstrap, unique_name,
                                             retention_ms=2000)
