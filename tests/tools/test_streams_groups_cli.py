"""`kcsim streams-groups` against an embedded kcsim, with streams groups whose members
heartbeat a word count over the wire (tests/admin/streams_app.py).

The command runs in this process (as `kcsim` would parse it) so that the tests stay fast;
one test runs it as a subprocess, as an operator does.
"""

from __future__ import annotations

import io
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.admin import AdminClient, TopicPartition
from kcsim.server.cli import parser
from kcsim.tools.group_command.report import Reporter

from ..admin.helpers import REPO, commit_as_member, produce
from ..admin.streams_app import StreamsApp

if TYPE_CHECKING:
    from collections.abc import Iterator


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str

    def rows(self) -> list[list[str]]:
        """The whitespace-separated cells of each non-blank stdout line."""
        return [line.split() for line in self.out.splitlines() if line.strip()]


def cli(bootstrap: str, *args: str, tool: str = "streams-groups") -> Ran:
    out, err = io.StringIO(), io.StringIO()
    parsed = parser().parse_args([tool, "--bootstrap-server", bootstrap, "--timeout", "10000",
                                  *args])
    code = parsed.run(parsed, Reporter(out, err))
    return Ran(code, out.getvalue(), err.getvalue())


@pytest.fixture
def app(streams_server: Any, unique_name: Any) -> Iterator[StreamsApp]:
    """A running word count: two members sharing six tasks, 10 records per input partition,
    and member a's commits of 3 and 4 on partitions 0 and 1."""
    bootstrap = streams_server.bootstrap
    running = StreamsApp(bootstrap, unique_name("wc"), unique_name("words")).settle(["a", "b"])
    produce(bootstrap, running.source, 10, 3)
    running.commit("a", {0: 3, 1: 4})
    try:
        yield running
    finally:
        running.close()


def stopped(app: StreamsApp) -> StreamsApp:
    for member in list(app.epochs):
        app.leave(member)
    return app


def committed(bootstrap: str, group: str) -> dict[int, int]:
    with AdminClient(bootstrap, timeout=10) as admin:
        return {tp.partition: om.offset
                for tp, om in admin.list_group_offsets(group)[group].items()}


# -- --list ----------------------------------------------------------------------------


def test_list_names_streams_groups_only_and_filters_by_state(
        streams_server: Any, app: StreamsApp, unique_name: Any) -> None:
    bootstrap = streams_server.bootstrap
    consumer_group = unique_name("plain")
    commit_as_member(bootstrap, consumer_group, app.source, {0: 1})
    names = cli(bootstrap, "--list").out.split()
    assert app.group in names and consumer_group not in names

    with_state = cli(bootstrap, "--list", "--state").rows()
    assert with_state[0] == ["GROUP", "STATE"]
    assert [app.group, "Stable"] in with_state[1:]
    assert [r[0] for r in cli(bootstrap, "--list", "--state", "empty").rows()[1:]] \
        .count(app.group) == 0
    assert [app.group, "Stable"] in cli(bootstrap, "--list", "--state", "Stable,Empty").rows()


def test_list_refuses_a_state_streams_groups_do_not_have(streams_server: Any) -> None:
    ran = cli(streams_server.bootstrap, "--list", "--state", "PreparingRebalance")
    assert ran.code == 2
    assert ("Invalid state list 'PreparingRebalance'. Valid states are: Empty, NotReady, "
            "Assigning, Reconciling, Stable, Dead") in ran.err


# -- --describe ------------------------------------------------------------------------


def test_describe_members_shows_each_members_tasks(streams_server: Any, app: StreamsApp) -> None:
    ran = cli(streams_server.bootstrap, "--describe", "--members", "--group", app.group)
    assert ran.code == 0, ran.err
    lines = ran.out.splitlines()
    assert lines[0].split() == ["GROUP", "MEMBER", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"]
    by_member = {line.split()[1]: line for line in lines[1:]}
    assert set(by_member) == {"a", "b"}
    held: list[tuple[str, str]] = []
    for member, line in by_member.items():
        assert f"process-{member}" in line
        text = line.split("ACTIVE: ", 1)[1]
        for part in text.rstrip().rstrip(";").split("; "):
            sub, partitions = part.split(":")
            held += [(sub, p) for p in partitions.strip("[]").split(",")]
    # Every task of the two subtopologies (3 partitions each) is owned once.
    assert sorted(held) == [(s, str(p)) for s in "01" for p in range(3)]
    assert lines[1].endswith("; ")  # Kafka's tool ends the list with a blank


def test_describe_members_verbose_adds_epochs_and_targets(
        streams_server: Any, app: StreamsApp) -> None:
    ran = cli(streams_server.bootstrap, "--describe", "--members", "--verbose", "--group",
              app.group)
    header, *rows = ran.out.splitlines()
    assert header.split() == ["GROUP", "TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER",
                              "MEMBER-PROTOCOL", "MEMBER-EPOCH", "PROCESS", "CLIENT-ID",
                              "ASSIGNMENTS"]
    for row in rows:
        cells = row.split()
        assert cells[4] == "streams" and cells[2] == "0"
        assert "TARGET-ACTIVE: " in row


def test_describe_offsets_shows_the_lag_of_each_task_partition(
        streams_server: Any, app: StreamsApp) -> None:
    ran = cli(streams_server.bootstrap, "--describe", "--group", app.group)
    assert ran.code == 0, ran.err
    rows = ran.rows()
    assert rows[0] == ["GROUP", "TOPIC", "PARTITION", "OFFSET-LAG"]
    lag = {(r[1], int(r[2])): int(r[3]) for r in rows[1:]}
    # The input from the commits (3, 4, none), the repartition topic from its start.
    assert {p: lag[(app.source, p)] for p in range(3)} == {0: 7, 1: 6, 2: 10}
    assert {p: lag[(app.repartition, p)] for p in range(3)} == {0: 0, 1: 0, 2: 0}

    verbose = cli(streams_server.bootstrap, "--describe", "--offsets", "--verbose", "--group",
                  app.group).rows()
    assert verbose[0] == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LEADER-EPOCH",
                          "LOG-END-OFFSET", "OFFSET-LAG"]
    words = {int(r[2]): r[3:] for r in verbose[1:] if r[1] == app.source}
    assert words == {0: ["3", "-", "10", "7"], 1: ["4", "-", "10", "6"], 2: ["-", "-", "10", "10"]}


def test_describe_state(streams_server: Any, app: StreamsApp) -> None:
    ran = cli(streams_server.bootstrap, "--describe", "--state", "--verbose", "--group", app.group)
    header, row = ran.out.splitlines()
    assert header.split() == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNOR", "STATE", "GROUP-EPOCH",
                              "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"]
    cells = row.split()
    assert cells[0] == app.group and cells[1] == streams_server.bootstrap
    assert cells[2:] == ["(1)", "sticky", "Stable", "2", "2", "2"]


def test_describe_of_an_empty_group_and_of_no_group(streams_server: Any, app: StreamsApp) -> None:
    stopped(app)
    members = cli(streams_server.bootstrap, "--describe", "--members", "--group", app.group)
    assert (members.code, members.out) == (0, "")
    assert f"Streams group '{app.group}' has no active members." in members.err
    state = cli(streams_server.bootstrap, "--describe", "--state", "--group", app.group)
    assert state.rows()[1][4:] == ["Empty", "0"]

    missing = cli(streams_server.bootstrap, "--describe", "--group", app.group + "-none")
    assert missing.code == 3
    assert f"Streams group '{app.group}-none' does not exist." in missing.err


# -- --reset-offsets -------------------------------------------------------------------


def test_reset_needs_dry_run_or_execute(streams_server: Any, app: StreamsApp) -> None:
    ran = cli(streams_server.bootstrap, "--reset-offsets", "--group", app.group,
              "--all-input-topics", "--to-earliest")
    assert ran.code == 2
    assert "Option --reset-offsets takes the option: --execute or --dry-run" in ran.err


def test_reset_of_a_running_group_is_refused(streams_server: Any, app: StreamsApp) -> None:
    ran = cli(streams_server.bootstrap, "--reset-offsets", "--group", app.group,
              "--input-topic", app.source, "--to-earliest", "--execute")
    assert ran.code == 4
    assert (f"Assignments can only be reset if the group '{app.group}' is inactive, but the "
            "current state is Stable.") in ran.err
    assert f"--pause --group {app.group} --input-topic" in ran.err
    assert ran.rows() == [["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]]
    assert committed(streams_server.bootstrap, app.group) == {0: 3, 1: 4}


def test_reset_of_a_stopped_group(streams_server: Any, app: StreamsApp) -> None:
    bootstrap = streams_server.bootstrap
    stopped(app)
    dry = cli(bootstrap, "--reset-offsets", "--group", app.group, "--all-input-topics",
              "--shift-by", "-2", "--dry-run")
    assert dry.code == 0, dry.err
    # Kafka's fixed-width table: every column padded, the last too.
    assert dry.out.splitlines()[1] == f"{'GROUP':30} {'TOPIC':30} {'PARTITION':10} {'NEW-OFFSET':15}"
    assert dry.rows()[1:] == [[app.group, app.source, "0", "1"], [app.group, app.source, "1", "2"]]
    assert committed(bootstrap, app.group) == {0: 3, 1: 4}

    export = cli(bootstrap, "--reset-offsets", "--group", app.group, "--input-topic",
                 f"{app.source}:0,2", "--to-latest", "--dry-run", "--export")
    assert export.out == f"{app.source},0,10\n{app.source},2,10\n\n"

    done = cli(bootstrap, "--reset-offsets", "--group", app.group, "--input-topic", app.source,
               "--to-offset", "5", "--execute")
    assert done.code == 0, done.err
    assert committed(bootstrap, app.group) == {0: 5, 1: 5, 2: 5}


# -- --delete-offsets and --delete -----------------------------------------------------


def test_delete_offsets_of_the_input_topics(streams_server: Any, app: StreamsApp) -> None:
    bootstrap = streams_server.bootstrap
    refused = cli(bootstrap, "--delete-offsets", "--group", app.group, "--input-topic",
                  f"{app.source}:0")
    assert refused.code == 1
    assert "GROUP_SUBSCRIBED_TO_TOPIC" in refused.out

    stopped(app)
    done = cli(bootstrap, "--delete-offsets", "--group", app.group, "--all-input-topics")
    assert done.code == 0, done.err
    assert done.out.splitlines()[0] == \
        f"Request succeeded for deleting offsets from group {app.group}."
    assert done.rows()[-2:] == [[app.source, "0", "Successful"], [app.source, "1", "Successful"]]
    assert committed(bootstrap, app.group) == {}


def test_delete_only_empty_streams_groups(
        streams_server: Any, app: StreamsApp, unique_name: Any) -> None:
    bootstrap = streams_server.bootstrap
    running = cli(bootstrap, "--delete", "--group", app.group)
    assert running.code == 1
    assert f"NON_EMPTY_GROUP: Streams group '{app.group}' is not EMPTY." in running.err

    consumer_group = unique_name("plain")
    commit_as_member(bootstrap, consumer_group, app.source, {0: 1})
    other = cli(bootstrap, "--delete", "--group", consumer_group)
    assert other.code == 3
    assert f"Group '{consumer_group}' does not exist or is not a streams group." in other.err
    assert committed(bootstrap, consumer_group) == {0: 1}  # untouched

    stopped(app)
    done = cli(bootstrap, "--delete", "--group", app.group)
    assert (done.code, done.out) == (
        0, f"Deletion of requested streams groups ('{app.group}') was successful.\n")
    assert app.group not in cli(bootstrap, "--list").out.split()


# -- KIP-1249 --------------------------------------------------------------------------


def test_pause_reset_and_resume_while_the_application_runs(
        streams_server: Any, app: StreamsApp) -> None:
    bootstrap = streams_server.bootstrap
    paused = cli(bootstrap, "--pause", "--group", app.group, "--input-topic", f"{app.source}:0")
    assert paused.code == 0, paused.err
    assert paused.rows()[1] == [app.group, app.source, "0", "Paused"]
    app.settle(["a", "b"], rounds=3)
    # The tasks reading partition 0 (0_0; 1_0 reads the repartition topic) are no one's.
    owners = {t for member in app.owned.values() for t in member["active"]}
    assert ("0", 0) not in owners and ("1", 0) in owners

    listed = cli(bootstrap, "--list-paused", "--group", app.group)
    assert listed.rows() == [["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET"],
                             [app.group, app.source, "0", "3"]]
    reset = cli(bootstrap, "--reset-offsets", "--group", app.group, "--input-topic",
                f"{app.source}:0", "--to-earliest", "--execute")
    assert reset.code == 0, reset.err
    assert committed(bootstrap, app.group)[0] == 0

    resumed = cli(bootstrap, "--resume", "--group", app.group, "--all-input-topics")
    assert resumed.rows()[1] == [app.group, app.source, "0", "Resumed"]
    app.settle(["a", "b"], rounds=3)
    assert ("0", 0) in {t for member in app.owned.values() for t in member["active"]}
    assert cli(bootstrap, "--list-paused", "--group", app.group).out == ""


def test_consumer_groups_names_the_streams_tool(streams_server: Any, app: StreamsApp) -> None:
    for action in (["--pause", "--topic", f"{app.source}:0"], ["--paused-partitions"]):
        ran = cli(streams_server.bootstrap, action[0], "--group", app.group, *action[1:],
                  tool="consumer-groups")
        assert ran.code == 2
        assert f"Group '{app.group}' is a streams group: use `kcsim streams-groups" in ran.err
    assert cli(streams_server.bootstrap, "--list-paused", "--group", app.group).code == 0
    described = cli(streams_server.bootstrap, "--describe", "--group", app.group,
                    tool="consumer-groups")
    assert described.code == 3
    assert f"Group {app.group} is not a consumer group. It is a streams group" in described.err
    assert "`kcsim streams-groups --describe" in described.err


def test_the_command_runs_as_kcsim_streams_groups(streams_server: Any, app: StreamsApp) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kcsim", "streams-groups", "--bootstrap-server",
         streams_server.bootstrap, "--describe", "--state", "--group", app.group],
        check=False, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].split()[4:] == ["Stable", "2"]


def test_all_input_topics_are_the_topologys_input(
        streams_server: Any, app: StreamsApp) -> None:
    """--all-input-topics means the topology's input: a committed offset of another topic
    stays as it is."""
    stopped(app)
    with AdminClient(streams_server.bootstrap, timeout=10) as admin:
        other = app.repartition
        admin.alter_group_offsets(app.group, {TopicPartition(other, 0): 0})
    dry = cli(streams_server.bootstrap, "--reset-offsets", "--group", app.group,
              "--all-input-topics", "--to-latest", "--dry-run")
    assert {r[1] for r in dry.rows()[1:]} == {app.source}
