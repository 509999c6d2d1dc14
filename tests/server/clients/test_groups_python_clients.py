"""Consumer groups through kafka-python, confluent-kafka and aiokafka against kcsim.

Each scenario (groupscenarios.py) runs with every client that supports its calls:
kafka-python and confluent-kafka have consumer groups and the group admin calls;
aiokafka has consumer groups and list/describe/list-offsets admin. The broker runs
in-process (the `kcsim` fixture), so the scenarios wait on its state.
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


@pytest.mark.parametrize("kind", ALL)
def test_members_share_partitions(kcsim: Any, unique_name: Any, make_client: Any,
                                  kind: str) -> None:
    """Three members split six partitions and consume them; after one leaves two cover all.

    Admin lists and describes the group Stable with the members' own assignments,
    and Empty without members once they all left.
    """
    client = make_client(kind, kcsim.bootstrap)
    groupscenarios.members_share_partitions(client, kcsim, unique_name)


@pytest.mark.parametrize("kind", ["kafka-python", "confluent"])
def test_cooperative_members_keep_partitions(kcsim: Any, unique_name: Any, make_client: Any,
                                             kind: str) -> None:
    """With the cooperative-sticky assignor members share six partitions, and after one
    leaves the two others keep what they owned and take over the rest."""
    client = make_client(kind, kcsim.bootstrap)
    groupscenarios.cooperative_members_keep_partitions(client, kcsim, unique_name)


@pytest.mark.parametrize("kind", ALL)
def test_commits_reach_a_fresh_consumer(kcsim: Any, unique_name: Any, make_client: Any,
                                        kind: str) -> None:
    """Offsets one member commits are what a later member of the group reads and resumes from.

    Admin lists the Empty group's three committed partitions without naming topics (KIP-88).
    """
    client = make_client(kind, kcsim.bootstrap)
    groupscenarios.commits_reach_a_fresh_consumer(client, kcsim, unique_name)


def test_offsets_of_many_groups_in_one_request(kcsim: Any, unique_name: Any,
                                              make_client: Any) -> None:
    """kafka-python lists three groups' offsets with one OffsetFetch (KIP-709)."""
    client = make_client("kafka-python", kcsim.bootstrap)
    groupscenarios.offsets_of_many_groups(client, kcsim, unique_name)


@pytest.mark.parametrize("kind", ["kafka-python", "confluent"])
def test_admin_changes_only_empty_groups(kcsim: Any, unique_name: Any, make_client: Any,
                                         kind: str) -> None:
    """Offsets are altered and deleted, and the group deleted, only once it is Empty."""
    client = make_client(kind, kcsim.bootstrap)
    groupscenarios.admin_changes_only_empty_groups(client, kcsim, unique_name)


@pytest.mark.parametrize("kind", ALL)
def test_static_member_rejoins_without_rebalance(kcsim: Any, unique_name: Any,
                                                 make_client: Any, kind: str) -> None:
    """A static member restarts with its group.instance.id: same assignment, no rebalance."""
    client = make_client(kind, kcsim.bootstrap)
    groupscenarios.static_member_rejoins_quietly(client, kcsim, unique_name)


def test_admin_removes_departed_static_member(kcsim: Any, unique_name: Any,
                                              make_client: Any) -> None:
    """kafka-python's remove_group_members takes a closed static member out of the group
    by its group.instance.id; the others take over at once."""
    client = make_client("kafka-python", kcsim.bootstrap)
    groupscenarios.admin_removes_departed_static_member(client, kcsim, unique_name)


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.kcsim(min_session_timeout_ms=1000)
def test_silent_member_expires(kcsim: Any, unique_name: Any, make_client: Any,
                               kind: str) -> None:
    """A static member that closes (without leaving) stays until its session times out;
    then the others take over its partitions."""
    client = make_client(kind, kcsim.bootstrap)
    groupscenarios.silent_member_expires(client, kcsim, unique_name, session_ms=3000)


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.kcsim(offsets_retention_ms=2000, offsets_retention_check_interval_ms=200)
def test_offsets_expire_once_empty(kcsim: Any, unique_name: Any, make_client: Any,
                                   kind: str) -> None:
    """Committed offsets outlive the retention time while the group consumes them and
    expire once it is Empty; then the group is gone (KIP-211). The broker's clock is
    advanced past the retention time instead of waiting for it."""
    client = make_client(kind, kcsim.bootstrap)
    groupscenarios.offsets_expire_once_empty(client, kcsim, unique_name)
