"""The flags of Kafka's kafka-share-groups and its rules for combining them.

The command is validated into the same `Options` as `kcsim consumer-groups`, of kind
"share". Kafka's share tool resets with --to-earliest, --to-latest, --to-datetime,
--to-offset, --to-current and --from-file (no --shift-by or --by-duration), one group at
a time, and without --execute it only shows the plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.admin import PauseApiKeys

from .options import Options, add_flags, add_tool_arguments, describe_view, first_checks, flag
from .report import UsageError

if TYPE_CHECKING:
    import argparse

ACTIONS = {"list": "--list", "describe": "--describe", "delete": "--delete",
           "reset_offsets": "--reset-offsets", "delete_offsets": "--delete-offsets"}
SHARE_STATES = ("Dead", "Empty", "Stable")
SCENARIOS = ("to_datetime", "to_earliest", "to_latest", "from_file", "to_current", "to_offset")
DEFAULT_TIMEOUT_MS = 5000  # Kafka's tool: --timeout defaults to 5000 ms

DESCRIPTION = (
    "List, describe, reset and delete share groups (KIP-932), as Kafka's kafka-share-groups "
    "does, against kcsim or any Kafka cluster. Exit codes: 0 ok, 1 broker error, 2 usage "
    "error, 3 not found, 4 refused (group not empty)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    scope = add_tool_arguments(p, "share", {
        "--list": "list all share groups",
        "--describe": "describe groups: start offsets and lag (default), --members or --state",
        "--delete": "delete empty share groups",
        "--reset-offsets": "reset the start offsets of one empty share group",
        "--delete-offsets": "delete one empty group's share state of some topics",
    }, "the share group to act on (repeatable)")
    scope.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,P]",
                       help="a topic, or some of its partitions as topic:0,1 (repeatable)")
    scope.add_argument("--all-topics", action="store_true",
                       help="every partition the group has share state for (reset)")
    describe = p.add_argument_group("--describe and --list")
    add_flags(describe, {
        "--members": "describe the members and their assignments",
        "--offsets": "describe start offsets and lag (the default)",
        "--verbose": "epochs and leader epochs",
    })
    describe.add_argument("--state", nargs="?", const="", default=None, metavar="STATES",
                          help="--describe: the group's state; --list: show states, or only "
                          "groups in these comma-separated states (Empty, Stable, Dead)")
    reset = p.add_argument_group("--reset-offsets")
    reset.add_argument("--to-earliest", action="store_true", help="reset to the earliest offset")
    reset.add_argument("--to-latest", action="store_true", help="reset to the latest offset")
    reset.add_argument("--to-current", action="store_true",
                       help="reset to the current start offset")
    reset.add_argument("--to-offset", type=int, metavar="OFFSET", help="reset to this offset")
    reset.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss",
                       help="reset to the first offset at or after this time")
    reset.add_argument("--from-file", metavar="CSV",
                       help="reset to the offsets in this CSV (as --export writes it)")
    reset.add_argument("--dry-run", action="store_true", help="show the plan only (the default)")
    reset.add_argument("--execute", action="store_true", help="apply the plan")
    reset.add_argument("--export", action="store_true", help="print the plan as CSV")
    p.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_MS, metavar="MS",
                   help=f"how long each step may take, in ms (default {DEFAULT_TIMEOUT_MS})")


def _check_states(text: str | None) -> tuple[str, ...]:
    states = tuple(s.strip() for s in (text or "").split(",") if s.strip())
    canonical = {s.lower(): s for s in SHARE_STATES}
    if any(s.lower() not in canonical for s in states):
        raise UsageError(f"Invalid state list '{text}'. Valid states are: "
                         + ", ".join(SHARE_STATES))
    return tuple(canonical[s.lower()] for s in states)


def validate(args: argparse.Namespace) -> Options:
    """Kafka's checks of ShareGroupCommandOptions."""
    action, only_with = first_checks(args, ACTIONS, ACTIONS, end=".")

    only_with(("members", "offsets", "verbose"), ("describe",))
    only_with(("state",), ("describe", "list"))
    only_with(("group",), ("describe", "delete", "reset_offsets", "delete_offsets"))
    only_with(("all_groups",), ("describe", "delete"))
    only_with(("topic",), ("reset_offsets", "delete_offsets"))
    only_with(("all_topics",), ("reset_offsets",))
    only_with(SCENARIOS + ("dry_run", "execute", "export"), ("reset_offsets",))

    view = "offsets"
    states_given: tuple[str, ...] = ()
    scenario, scenario_value = None, None
    has_scope = bool(args.group) or args.all_groups
    if action in ("describe", "delete") and not has_scope:
        raise UsageError(f"Option {ACTIONS[action]} takes one of these options: --all-groups, "
                         "--group")
    if action == "describe":
        view = describe_view(args)
    elif action == "list":
        states_given = _check_states(args.state)
    elif action == "delete_offsets":
        if len(args.group) != 1 or not args.topic:
            raise UsageError("Option --delete-offsets takes the following options: --group, "
                             "--topic")
    elif action == "reset_offsets":
        scenario, scenario_value = _reset_scenario(args)
    return Options(
        action=action, bootstrap=args.bootstrap_server, groups=tuple(args.group),
        all_groups=args.all_groups, topics=tuple(args.topic), all_topics=args.all_topics,
        view=view, verbose=args.verbose, states=states_given, types=(),
        show_state=args.state is not None, show_type=False,
        scenario=scenario, scenario_value=scenario_value, execute=args.execute,
        dry_run=args.dry_run, export=args.export, timeout_s=args.timeout / 1000.0,
        output="table", pause_api_keys=PauseApiKeys(), kind="share",
    )


def _reset_scenario(args: argparse.Namespace) -> tuple[str, object]:
    if len(args.group) != 1:
        raise UsageError("Option --reset-offsets takes the option: --group (one)")
    if args.dry_run and args.execute:
        raise UsageError("Option --reset-offsets only accepts one of --execute and --dry-run")
    scenarios = [s for s in SCENARIOS if getattr(args, s) not in (None, False)]
    if len(scenarios) != 1:
        raise UsageError("Option '[reset-offsets]' requires one of the following scenarios: "
                         + ", ".join(flag(s) for s in SCENARIOS))
    scenario = scenarios[0]
    if scenario != "from_file" and bool(args.topic) == bool(args.all_topics):
        raise UsageError("Option --reset-offsets takes one of these options: --all-topics, "
                         "--topic")
    return scenario, getattr(args, scenario)
