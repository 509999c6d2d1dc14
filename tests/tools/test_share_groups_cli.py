"""`kcsim share-groups` against a kcsim whose share group members speak raw frames
(tests/server/test_share_wire.py): what Kafka's kafka-share-groups prints, line for line."""

from __future__ import annotations

from typing import Any

import pytest

from ..server.test_share_wire import ACCEPT, GROUP, TOPIC, Member, acquired, produce, world
from .test_streams_groups_cli import Ran, cli

__all__ = ["world"]  # the fixture, used by name


def share(kcsim: Any, *args: str) -> Ran:
    return cli(kcsim.bootstrap, *args, tool="share-groups")


@pytest.fixture
def consumed(world: Any) -> tuple[Any, Member]:
    """Member a in the group has taken and accepted 6 records of 8 (2 in flight)."""
    wire, tid = world
    a = Member(wire, "member-a", tid)
    a.heartbeat()
    a.fetch()
    produce(wire, 6)
    produce(wire, 2)
    got = acquired(a.fetch(max_records=6))
    assert got == [(0, 5, 1)]
    a.ack([(0, 5, ACCEPT)])
    return wire, a


def test_list_and_describe(kcsim: Any, consumed: Any) -> None:
    assert share(kcsim, "--list").out == f"{GROUP}\n"
    assert share(kcsim, "--list", "--state").out == (
        "GROUP           STATE\n"
        f"{GROUP:<15} Stable\n")
    assert share(kcsim, "--list", "--state", "empty").out == "GROUP           STATE\n"
    ran = share(kcsim, "--describe", "--group", GROUP)
    assert (ran.code, ran.out) == (0, (
        "\n"
        "GROUP           TOPIC           PARTITION  START-OFFSET  LAG\n"
        f"{GROUP:<15} {TOPIC:<15} 0          6             2\n"))
    verbose = share(kcsim, "--describe", "--group", GROUP, "--verbose").out
    assert verbose.splitlines()[1:] == [
        "GROUP           TOPIC           PARTITION  LEADER-EPOCH  START-OFFSET  LAG",
        f"{GROUP:<15} {TOPIC:<15} 0          0             6             2"]
    members = share(kcsim, "--describe", "--group", GROUP, "--members", "--verbose").rows()
    assert members[0] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                          "MEMBER-EPOCH", "ASSIGNMENT"]
    assert (members[1][0], members[1][1], members[1][-3:]) == (
        GROUP, "member-a", ["1", "1", f"{TOPIC}:0"])
    state = share(kcsim, "--describe", "--group", GROUP, "--state").rows()
    assert state[0] == ["GROUP", "COORDINATOR", "(ID)", "STATE", "#MEMBERS"]
    assert (state[1][0], state[1][-2:]) == (GROUP, ["Stable", "1"])
    missing = share(kcsim, "--describe", "--group", "nobody")
    assert (missing.code, missing.err) == (3, "Error: Share group 'nobody' does not exist.\n")


def test_reset_needs_an_empty_group_and_moves_the_start_offset(
        kcsim: Any, consumed: Any) -> None:
    _, a = consumed
    refused = share(kcsim, "--reset-offsets", "--group", GROUP, "--topic", TOPIC,
                    "--to-earliest", "--execute")
    assert (refused.code, refused.err) == (4, f"Error: Share group '{GROUP}' is not empty.\n")
    a.heartbeat(epoch=-1)
    plan = (
        "\n"
        "GROUP           TOPIC           PARTITION  NEW-OFFSET\n"
        f"{GROUP:<15} {TOPIC:<15} 0          0\n")
    dry = share(kcsim, "--reset-offsets", "--group", GROUP, "--all-topics", "--to-earliest")
    assert (dry.code, dry.out) == (0, plan)
    assert share(kcsim, "--describe", "--group", GROUP).rows()[1][-2:] == ["6", "2"]
    done = share(kcsim, "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--to-earliest",
                 "--execute")
    assert (done.code, done.out) == (0, plan)
    described = share(kcsim, "--describe", "--group", GROUP)
    assert described.rows()[1][-2:] == ["0", "8"]
    assert described.err == ""  # Kafka notes an empty group only with --members and --state
    latest = share(kcsim, "--reset-offsets", "--group", GROUP, "--topic", f"{TOPIC}:0",
                   "--to-latest", "--execute")
    assert latest.rows()[1][-1] == "8"
    assert share(kcsim, "--describe", "--group", GROUP).rows()[1][-2:] == ["8", "0"]


def test_delete_offsets_and_delete(kcsim: Any, consumed: Any) -> None:
    _, a = consumed
    not_empty = share(kcsim, "--delete-offsets", "--group", GROUP, "--topic", TOPIC)
    assert not_empty.out == (
        "\nError: The group is not empty.\n"
        "\n"
        "TOPIC           STATUS\n"
        f"{TOPIC:<15} Error: The group is not empty.\n")
    refused = share(kcsim, "--delete", "--group", GROUP)
    assert refused.out == (
        "\nError: Deletion of some share groups failed:\n"
        f"* Group '{GROUP}' could not be deleted due to: "
        f"org.apache.kafka.common.errors.GroupNotEmptyException: Share group '{GROUP}' is not "
        "EMPTY.\n")
    a.heartbeat(epoch=-1)
    deleted = share(kcsim, "--delete-offsets", "--group", GROUP, "--topic", TOPIC)
    assert (deleted.code, deleted.out) == (0, f"\nTOPIC           STATUS\n{TOPIC:<15} Successful\n")
    assert share(kcsim, "--describe", "--group", GROUP).out == (
        f"\nShare group '{GROUP}' has no offset information.\n")
    gone = share(kcsim, "--delete", "--group", GROUP)
    assert (gone.code, gone.out) == (0, f"Deletion of requested share groups ('{GROUP}') was "
                                        "successful.\n")
    assert share(kcsim, "--list").out == ""


def test_usage_errors(kcsim: Any) -> None:
    assert share(kcsim, "--describe").code == 2
    assert share(kcsim, "--list", "--describe").code == 2
    assert share(kcsim, "--reset-offsets", "--group", GROUP, "--topic", TOPIC).code == 2
    with pytest.raises(SystemExit):  # Kafka's share tool has no --shift-by
        share(kcsim, "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--shift-by", "1")
