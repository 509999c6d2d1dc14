"""The flags of kafka-consumer-groups.sh (plus KIP-1249's) and Kafka's rules for combining them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kcsim.admin import PauseApiKeys

from .report import UsageError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

ACTIONS = ("list", "describe", "delete", "reset_offsets", "delete_offsets",
           "pause", "resume", "paused_partitions")
SCENARIOS = ("to_datetime", "by_duration", "to_earliest", "to_latest", "shift_by", "from_file",
             "to_current", "to_offset")
OUTPUTS = ("table", "json", "csv")
DEFAULT_TIMEOUT_MS = 5000
PAUSE_KEYS_ENV = "KCSIM_PAUSE_API_KEYS"  # the same variable `kcsim serve` reads
CONSUMER_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty",
                   "Assigning", "Reconciling")
GROUP_TYPES = ("classic", "consumer")

DESCRIPTION = (
    "List, describe, reset and delete consumer groups, as kafka-consumer-groups.sh does, "
    "against kcsim or any Kafka cluster; --pause, --resume and --paused-partitions (KIP-1249) "
    "need kcsim. Exit codes: 0 ok, 1 broker error, 2 usage error, 3 not found, "
    "4 refused (active group)."
)


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bootstrap-server", metavar="HOST:PORT",
                   help="REQUIRED: the server(s) to connect to")
    actions = p.add_argument_group("actions (exactly one)")
    actions.add_argument("--list", action="store_true", help="list all consumer groups")
    actions.add_argument("--describe", action="store_true",
                         help="describe groups: offsets and lag (default), --members or --state")
    actions.add_argument("--delete", action="store_true", help="delete groups and their offsets")
    actions.add_argument("--reset-offsets", action="store_true",
                         help="reset offsets of inactive groups, or of paused partitions")
    actions.add_argument("--delete-offsets", action="store_true",
                         help="delete one group's offsets of some topics")
    actions.add_argument("--pause", action="store_true",
                         help="KIP-1249: take partitions away from a running group")
    actions.add_argument("--resume", action="store_true",
                         help="KIP-1249: give paused partitions back to the group")
    actions.add_argument("--paused-partitions", action="store_true",
                         help="KIP-1249: list a group's paused partitions")

    scope = p.add_argument_group("scope")
    scope.add_argument("--group", action="append", default=[], metavar="GROUP",
                       help="the group to act on (repeatable)")
    scope.add_argument("--all-groups", action="store_true", help="apply to all consumer groups")
    scope.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,P]",
                       help="a topic, or some of its partitions as topic:0,1 (repeatable)")
    scope.add_argument("--all-topics", action="store_true",
                       help="every partition the group has an offset for (reset, pause, resume)")

    describe = p.add_argument_group("--describe and --list")
    describe.add_argument("--members", action="store_true", help="describe the group's members")
    describe.add_argument("--offsets", action="store_true",
                          help="describe offsets and lag (the default view)")
    describe.add_argument("--verbose", action="store_true", help="more columns")
    describe.add_argument("--state", nargs="?", const="", default=None, metavar="STATES",
                          help="--describe: the group's state; --list: show states, or only "
                          "groups in these comma-separated states")
    describe.add_argument("--type", nargs="?", const="", default=None, metavar="TYPES",
                          help="--list: show types, or only groups of these types "
                          "(classic,consumer)")

    add_reset_arguments(p, dry_run_help="show the plan only (the default)")
    p.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_MS, metavar="MS",
                   help=f"how long each step may take, in ms (default {DEFAULT_TIMEOUT_MS})")
    p.add_argument("--output", choices=OUTPUTS, default="table",
                   help="table (as Kafka prints), json or csv")


def add_flags(group: argparse._ArgumentGroup, flags: dict[str, str]) -> None:
    """Switches, each with its help: {"--list": "list all groups", ...}."""
    for name, text in flags.items():
        group.add_argument(name, action="store_true", help=text)


def add_tool_arguments(p: argparse.ArgumentParser, kind: str, actions: dict[str, str],
                       group_help: str) -> argparse._ArgumentGroup:
    """--bootstrap-server, the tool's actions and --group / --all-groups, as the streams
    and share tools take them; returns the scope group, for the tool's topic flags."""
    p.add_argument("--bootstrap-server", metavar="HOST:PORT",
                   help="REQUIRED: the server(s) to connect to")
    add_flags(p.add_argument_group("actions (exactly one)"), actions)
    scope = p.add_argument_group("scope")
    scope.add_argument("--group", action="append", default=[], metavar="GROUP", help=group_help)
    scope.add_argument("--all-groups", action="store_true", help=f"apply to all {kind} groups")
    return scope


def first_checks(args: argparse.Namespace, actions: dict[str, str], names: dict[str, str],
                 end: str = "") -> tuple[str, Callable[[tuple[str, ...], tuple[str, ...]], None]]:
    """Kafka's first checks of a group tool's command line: exactly one action (the
    message ends with `end`), a bootstrap server, a positive --timeout, not both --group
    and --all-groups. Returns the action, and `only_with(options, allowed)`, which refuses
    any of the options given to an action not allowed them (named as in `names`)."""
    chosen = [a for a, name in actions.items() if getattr(args, name[2:].replace("-", "_"))]
    if len(chosen) != 1:
        raise UsageError("Command must include exactly one action: "
                         + ", ".join(actions.values()) + end)
    action = chosen[0]
    if not args.bootstrap_server:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of milliseconds")
    if args.group and args.all_groups:
        raise UsageError("Option --group cannot be used with --all-groups")

    def only_with(options: tuple[str, ...], allowed: tuple[str, ...]) -> None:
        for name in options:
            value = getattr(args, name)
            if value not in (None, False, []) and action not in allowed:
                raise UsageError(f"Option {names.get(name, flag(name))} can only be used with "
                                 + " or ".join(actions[a] for a in allowed))

    return action, only_with


def add_reset_arguments(p: argparse.ArgumentParser, dry_run_help: str) -> None:
    """--reset-offsets' scenarios and modes, and KIP-1249's --pause-api-keys, as both tools
    take them."""
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
    reset.add_argument("--dry-run", action="store_true", help=dry_run_help)
    reset.add_argument("--execute", action="store_true", help="apply the plan")
    reset.add_argument("--export", action="store_true", help="print the plan as CSV")

    kip = p.add_argument_group("KIP-1249 (kcsim)")
    kip.add_argument("--pause-api-keys", metavar="PAUSE,RESUME,LIST",
                     default=os.environ.get(PAUSE_KEYS_ENV),
                     help="the wire keys the broker serves KIP-1249 under, as kcsim serve's "
                     f"--pause-api-keys (default 1000,1001,1002, or ${PAUSE_KEYS_ENV})")


@dataclass(frozen=True)
class Options:
    """The validated command: one action and what it applies to."""

    action: str
    bootstrap: str
    groups: tuple[str, ...]
    all_groups: bool
    topics: tuple[str, ...]
    all_topics: bool
    view: str  # describe: offsets, members or state
    verbose: bool
    states: tuple[str, ...]
    types: tuple[str, ...]
    show_state: bool
    show_type: bool
    scenario: str | None
    scenario_value: Any
    execute: bool
    dry_run: bool
    export: bool
    timeout_s: float
    output: str
    pause_api_keys: PauseApiKeys
    kind: str = "consumer"  # the groups the tool acts on: "consumer" or "streams"

    @property
    def title(self) -> str:
        """How the tool's messages name a group: 'Consumer group' or 'Streams group'."""
        return f"{self.kind.capitalize()} group"


def _given(args: argparse.Namespace, name: str) -> bool:
    value = getattr(args, name)
    return bool(value) or (value is not None and value is not False and value != [])


def _split(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _check_states(states: tuple[str, ...]) -> tuple[str, ...]:
    canonical = {s.lower(): s for s in CONSUMER_STATES}
    bad = [s for s in states if s.lower() not in canonical]
    if bad:
        raise UsageError(f"Invalid state list '{','.join(states)}'. Valid states are: "
                         + ", ".join(CONSUMER_STATES))
    return tuple(canonical[s.lower()] for s in states)


def _check_types(types: tuple[str, ...]) -> tuple[str, ...]:
    bad = [t for t in types if t.lower() not in GROUP_TYPES]
    if bad:
        raise UsageError(f"Invalid types list '{','.join(types)}'. Valid types are: "
                         + ", ".join(GROUP_TYPES))
    return tuple(t.lower() for t in types)


def describe_view(args: argparse.Namespace) -> str:
    """--describe's view: offsets (the default), members or state; at most one."""
    views = [v for v in ("members", "offsets", "state") if _given(args, v)]
    if len(views) > 1:
        raise UsageError("Option --describe takes at most one of these options: "
                         "--members, --offsets, --state")
    if args.state:
        raise UsageError("Option --describe does not take a value for --state")
    return views[0] if views else "offsets"


def validate(args: argparse.Namespace) -> Options:
    """Kafka's checks of ConsumerGroupCommandOptions, with the KIP-1249 actions added."""
    chosen = [a for a in ACTIONS if getattr(args, a)]
    if len(chosen) != 1:
        raise UsageError("Command must include exactly one action: "
                         + ", ".join(flag(a) for a in ACTIONS))
    action = chosen[0]
    if not args.bootstrap_server:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of milliseconds")
    has_scope = bool(args.group) or args.all_groups
    if args.group and args.all_groups:
        raise UsageError("Option --group cannot be used with --all-groups")

    def only_with(names: tuple[str, ...], allowed: tuple[str, ...]) -> None:
        for name in names:
            if _given(args, name) and action not in allowed:
                raise UsageError(f"Option {flag(name)} can only be used with "
                                 + " or ".join(flag(a) for a in allowed))

    only_with(("members", "offsets", "verbose"), ("describe",))
    only_with(("state",), ("describe", "list"))
    only_with(("type",), ("list",))
    only_with(("group",), ("describe", "delete", "reset_offsets", "delete_offsets", "pause",
                           "resume", "paused_partitions"))
    only_with(("all_groups",), ("describe", "delete", "reset_offsets", "paused_partitions"))
    only_with(("topic",), ("delete_offsets", "reset_offsets", "pause", "resume"))
    only_with(("all_topics",), ("reset_offsets", "pause", "resume"))
    only_with(SCENARIOS + ("dry_run", "execute", "export"), ("reset_offsets",))

    view = "offsets"
    states: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    if action == "describe":
        if not has_scope:
            raise UsageError("Option --describe takes one of these options: --all-groups, --group")
        view = describe_view(args)
    elif action == "list":
        states = _check_states(_split(args.state))
        types = _check_types(_split(args.type))
    elif action == "delete":
        if not has_scope:
            raise UsageError("Option --delete takes one of these options: --all-groups, --group")
    elif action == "delete_offsets":
        if len(args.group) != 1 or not args.topic:
            raise UsageError("Option --delete-offsets takes the following options: "
                             "--group (one), --topic")
    elif action in ("pause", "resume"):
        if not args.group:
            raise UsageError(f"Option {flag(action)} takes --group")
        if bool(args.topic) == bool(args.all_topics):
            raise UsageError(f"Option {flag(action)} takes one of --topic, --all-topics")
    elif action == "paused_partitions" and not has_scope:
        raise UsageError("Option --paused-partitions takes one of these options: "
                         "--all-groups, --group")

    scenario, scenario_value = None, None
    if action == "reset_offsets":
        scenario, scenario_value = reset_scenario(args, has_scope)

    return Options(
        action=action, bootstrap=args.bootstrap_server, groups=tuple(args.group),
        all_groups=args.all_groups, topics=tuple(args.topic), all_topics=args.all_topics,
        view=view, verbose=args.verbose, states=states, types=types,
        show_state=args.state is not None, show_type=args.type is not None,
        scenario=scenario, scenario_value=scenario_value, execute=args.execute,
        dry_run=args.dry_run, export=args.export, timeout_s=args.timeout / 1000.0,
        output=args.output, pause_api_keys=pause_keys(args.pause_api_keys),
    )


def pause_keys(text: str | None) -> PauseApiKeys:
    try:
        return PauseApiKeys.parse(text) if text else PauseApiKeys()
    except ValueError as exc:
        raise UsageError(f"--pause-api-keys: {exc}") from None


def reset_scenario(args: argparse.Namespace, has_scope: bool) -> tuple[str, Any]:
    if args.dry_run and args.execute:
        raise UsageError("Option --reset-offsets only accepts one of --execute and --dry-run")
    if not has_scope:
        raise UsageError("Option --reset-offsets takes one of these options: --all-groups, --group")
    scenarios = [s for s in SCENARIOS if _given(args, s)]
    if len(scenarios) > 1:
        raise UsageError(f"Option {flag(scenarios[0])} is not valid with {flag(scenarios[1])}")
    if not scenarios:
        raise UsageError("Option --reset-offsets requires one of the following scenarios: "
                         + ", ".join(flag(s) for s in SCENARIOS))
    scenario = scenarios[0]
    if scenario != "from_file" and not args.topic and not args.all_topics:
        raise UsageError("One of the reset scopes should be defined: --all-topics, --topic.")
    if args.topic and args.all_topics:
        raise UsageError("Option --topic is not valid with --all-topics")
    return scenario, getattr(args, scenario)
