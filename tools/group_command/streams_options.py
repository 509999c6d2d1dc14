"""The flags of Kafka's kafka-streams-groups (plus KIP-1249's) and its rules for combining them.

The command is validated into the same `Options` as `kcsim consumer-groups`, of kind
"streams": --input-topic and --all-input-topics are its --topic and --all-topics, and
--list-paused its --paused-partitions, so the shared actions serve both tools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .options import (
    SCENARIOS,
    Options,
    add_flags,
    add_reset_arguments,
    add_tool_arguments,
    describe_view,
    first_checks,
    pause_keys,
    reset_scenario,
)
from .report import UsageError

if TYPE_CHECKING:
    import argparse

ACTIONS = {"list": "--list", "describe": "--describe", "delete": "--delete",
           "reset_offsets": "--reset-offsets", "delete_offsets": "--delete-offsets",
           "pause": "--pause", "resume": "--resume", "paused_partitions": "--list-paused"}
STREAMS_STATES = ("Empty", "NotReady", "Assigning", "Reconciling", "Stable", "Dead")
DEFAULT_TIMEOUT_MS = 30000  # Kafka's tool waits 30 s

DESCRIPTION = (
    "List, describe, reset and delete streams groups (KIP-1071), as Kafka's "
    "kafka-streams-groups does, against kcsim or any Kafka cluster; --pause, --resume and "
    "--list-paused (KIP-1249) need kcsim. Exit codes: 0 ok, 1 broker error, 2 usage error, "
    "3 not found, 4 refused (active group)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    scope = add_tool_arguments(p, "streams", {
        "--list": "list all streams groups",
        "--describe": "describe groups: offset lag (default), --members or --state",
        "--delete": "delete empty streams groups and their offsets",
        "--reset-offsets": "reset input offsets of inactive groups, or of paused partitions",
        "--delete-offsets": "delete one group's offsets of some input topics",
        "--pause": "KIP-1249: take the tasks reading these partitions away",
        "--resume": "KIP-1249: give paused partitions (and their tasks) back",
        "--list-paused": "KIP-1249: list a group's paused partitions",
    }, "the streams group (application id) to act on (repeatable)")
    scope.add_argument("--input-topic", dest="topic", action="append", default=[],
                       metavar="TOPIC[:P,P]",
                       help="an input topic, or some of its partitions as topic:0,1 (repeatable)")
    scope.add_argument("--all-input-topics", dest="all_topics", action="store_true",
                       help="every input topic of the group's topology (reset, delete-offsets, "
                       "pause, resume)")

    describe = p.add_argument_group("--describe and --list")
    add_flags(describe, {
        "--members": "describe the members and their tasks",
        "--offsets": "describe offsets and lag of the tasks' partitions (the default)",
        "--verbose": "epochs, target assignments, current offsets and leader epochs",
    })
    describe.add_argument("--state", nargs="?", const="", default=None, metavar="STATES",
                          help="--describe: the group's state; --list: show states, or only "
                          "groups in these comma-separated states (" + ", ".join(STREAMS_STATES)
                          + ")")
    add_reset_arguments(p, dry_run_help="show the plan only")
    p.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_MS, metavar="MS",
                   help=f"how long each step may take, in ms (default {DEFAULT_TIMEOUT_MS})")


def _check_states(text: str | None) -> tuple[str, ...]:
    """Kafka's check of --list --state: names of streams group states, in any case."""
    states = tuple(s.strip() for s in (text or "").split(",") if s.strip())
    canonical = {s.lower(): s for s in STREAMS_STATES}
    if any(s.lower() not in canonical for s in states):
        raise UsageError(f"Invalid state list '{text}'. Valid states are: "
                         + ", ".join(STREAMS_STATES))
    return tuple(canonical[s.lower()] for s in states)


def validate(args: argparse.Namespace) -> Options:
    """Kafka's checks of StreamsGroupCommandOptions, with the KIP-1249 actions added."""
    names = {"topic": "--input-topic", "all_topics": "--all-input-topics", **ACTIONS}
    action, only_with = first_checks(args, ACTIONS, names)
    has_scope = bool(args.group) or args.all_groups

    only_with(("members", "offsets", "verbose"), ("describe",))
    only_with(("state",), ("describe", "list"))
    only_with(("group",), tuple(a for a in ACTIONS if a != "list"))
    only_with(("all_groups",), ("describe", "delete", "reset_offsets", "paused_partitions"))
    only_with(("topic", "all_topics"), ("reset_offsets", "delete_offsets", "pause", "resume"))
    only_with(SCENARIOS + ("dry_run", "execute", "export"), ("reset_offsets",))

    view = "offsets"
    states: tuple[str, ...] = ()
    scenario, scenario_value = None, None
    if action in ("describe", "delete", "reset_offsets", "paused_partitions") and not has_scope:
        raise UsageError(f"Option {ACTIONS[action]} takes one of these options: --all-groups, "
                         "--group")
    if action == "describe":
        view = describe_view(args)
    elif action == "list":
        states = _check_states(args.state)
    elif action == "reset_offsets":
        if not (args.dry_run or args.execute):
            raise UsageError("Option --reset-offsets takes the option: --execute or --dry-run")
        scenario, scenario_value = reset_scenario(args, has_scope)
    elif action in ("delete_offsets", "pause", "resume"):
        if len(args.group) != 1 and action == "delete_offsets":
            raise UsageError("Option --delete-offsets takes exactly one --group")
        if not args.group:
            raise UsageError(f"Option {ACTIONS[action]} takes --group")
        if bool(args.topic) == bool(args.all_topics):
            raise UsageError(f"Option {ACTIONS[action]} takes one of --input-topic, "
                             "--all-input-topics")

    return Options(
        action=action, bootstrap=args.bootstrap_server, groups=tuple(args.group),
        all_groups=args.all_groups, topics=tuple(args.topic), all_topics=args.all_topics,
        view=view, verbose=args.verbose, states=states, types=(),
        show_state=args.state is not None, show_type=False,
        scenario=scenario, scenario_value=scenario_value, execute=args.execute,
        dry_run=args.dry_run, export=args.export, timeout_s=args.timeout / 1000.0,
        output="table", pause_api_keys=pause_keys(args.pause_api_keys), kind="streams",
    )
