"""The flags of Kafka's kafka-streams-groups (plus KIP-1249's) and its rules for combining them.

The command is validated into the same `Options` as `kcsim consumer-groups`, of kind
"streams": --input-topic and --all-input-topics are its --topic and --all-topics, and
--list-paused its --paused-partitions, so the shared actions serve both tools.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .options import PAUSE_KEYS_ENV, SCENARIOS, Options, flag, pause_keys, reset_scenario
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
    p.add_argument("--bootstrap-server", metavar="HOST:PORT",
                   help="REQUIRED: the server(s) to connect to")
    actions = p.add_argument_group("actions (exactly one)")
    actions.add_argument("--list", action="store_true", help="list all streams groups")
    actions.add_argument("--describe", action="store_true",
                         help="describe groups: offset lag (default), --members or --state")
    actions.add_argument("--delete", action="store_true",
                         help="delete empty streams groups and their offsets")
    actions.add_argument("--reset-offsets", action="store_true",
                         help="reset input offsets of inactive groups, or of paused partitions")
    actions.add_argument("--delete-offsets", action="store_true",
                         help="delete one group's offsets of some input topics")
    actions.add_argument("--pause", action="store_true",
                         help="KIP-1249: take the tasks reading these partitions away")
    actions.add_argument("--resume", action="store_true",
                         help="KIP-1249: give paused partitions (and their tasks) back")
    actions.add_argument("--list-paused", dest="paused_partitions", action="store_true",
                         help="KIP-1249: list a group's paused partitions")

    scope = p.add_argument_group("scope")
    scope.add_argument("--group", action="append", default=[], metavar="GROUP",
                       help="the streams group (application id) to act on (repeatable)")
    scope.add_argument("--all-groups", action="store_true", help="apply to all streams groups")
    scope.add_argument("--input-topic", dest="topic", action="append", default=[],
                       metavar="TOPIC[:P,P]",
                       help="an input topic, or some of its partitions as topic:0,1 (repeatable)")
    scope.add_argument("--all-input-topics", dest="all_topics", action="store_true",
                       help="every input topic of the group's topology (reset, delete-offsets, "
                       "pause, resume)")

    describe = p.add_argument_group("--describe and --list")
    describe.add_argument("--members", action="store_true",
                          help="describe the members and their tasks")
    describe.add_argument("--offsets", action="store_true",
                          help="describe offsets and lag of the tasks' partitions (the default)")
    describe.add_argument("--verbose", action="store_true",
                          help="epochs, target assignments, current offsets and leader epochs")
    describe.add_argument("--state", nargs="?", const="", default=None, metavar="STATES",
                          help="--describe: the group's state; --list: show states, or only "
                          "groups in these comma-separated states (" + ", ".join(STREAMS_STATES)
                          + ")")

    reset = p.add_argument_group("--reset-offsets")
    reset.add_argument("--to-earliest", action="store_true", help="reset to the earliest offset")
    reset.add_argument("--to-latest", action="store_true", help="reset to the latest offset")
    reset.add_argument("--to-current", action="store_true", help="reset to the current offset")
    reset.add_argument("--to-offset", type=int, metavar="OFFSET", help="reset to this offset")
    reset.add_argument("--shift-by", type=int, metavar="N",
                       help="shift the current offset by N (may be negative)")
    reset.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss",
                       help="reset to the first offset at or after this time (UTC unless a "
                       "zone is given)")
    reset.add_argument("--by-duration", metavar="PnDTnHnMnS",
                       help="reset to the first offset at or after now minus this duration")
    reset.add_argument("--from-file", metavar="CSV",
                       help="reset to the offsets in this CSV (as --export writes it)")
    reset.add_argument("--dry-run", action="store_true", help="show the plan only")
    reset.add_argument("--execute", action="store_true", help="apply the plan")
    reset.add_argument("--export", action="store_true", help="print the plan as CSV")

    kip = p.add_argument_group("KIP-1249 (kcsim)")
    kip.add_argument("--pause-api-keys", metavar="PAUSE,RESUME,LIST",
                     default=os.environ.get(PAUSE_KEYS_ENV),
                     help="the wire keys the broker serves KIP-1249 under, as kcsim serve's "
                     f"--pause-api-keys (default 1000,1001,1002, or ${PAUSE_KEYS_ENV})")

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
    chosen = [a for a in ACTIONS if getattr(args, a)]
    if len(chosen) != 1:
        raise UsageError("Command must include exactly one action: " + ", ".join(ACTIONS.values()))
    action = chosen[0]
    if not args.bootstrap_server:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of milliseconds")
    if args.group and args.all_groups:
        raise UsageError("Option --group cannot be used with --all-groups")
    has_scope = bool(args.group) or args.all_groups
    names = {"topic": "--input-topic", "all_topics": "--all-input-topics",
             **ACTIONS}

    def only_with(options: tuple[str, ...], allowed: tuple[str, ...]) -> None:
        for name in options:
            value = getattr(args, name)
            if value not in (None, False, []) and action not in allowed:
                raise UsageError(f"Option {names.get(name, flag(name))} can only be used with "
                                 + " or ".join(ACTIONS[a] for a in allowed))

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
        views = [v for v in ("members", "offsets") if getattr(args, v)]
        views += ["state"] if args.state is not None else []
        if len(views) > 1:
            raise UsageError("Option --describe takes at most one of these options: "
                             "--members, --offsets, --state")
        if args.state:
            raise UsageError("Option --describe does not take a value for --state")
        view = views[0] if views else "offsets"
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
