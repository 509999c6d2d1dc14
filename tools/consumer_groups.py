"""`kcsim consumer-groups`: kafka-consumer-groups.sh, flag for flag, plus KIP-1249's pause.

Works against kcsim and any Kafka cluster (the pause actions need kcsim). The pieces
live in `kcsim.tools.group_command`; this module wires them to the `kcsim` CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.admin import AdminClient, AdminError

from .group_command import deletion, describe, listing, pausing, reset
from .group_command.options import DESCRIPTION, Options, add_arguments, validate
from .group_command.report import USAGE_ERROR, Reporter, UsageError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping

ACTIONS: dict[str, Callable[[AdminClient, Options, Reporter], None]] = {
    "list": listing.list_groups,
    "describe": describe.describe,
    "delete": deletion.delete_groups,
    "delete_offsets": deletion.delete_offsets,
    "reset_offsets": reset.reset_offsets,
    "pause": pausing.change_pause,
    "resume": pausing.change_pause,
    "paused_partitions": pausing.paused_partitions,
}


def register(sub: argparse._SubParsersAction) -> None:
    add_tool(sub, "consumer-groups", "list, describe, reset and delete consumer groups",
             DESCRIPTION, add_arguments, run)


def add_tool(
    sub: argparse._SubParsersAction, name: str, summary: str, description: str,
    add: Callable[[argparse.ArgumentParser], None],
    run: Callable[[argparse.Namespace], int],
) -> None:
    """A `kcsim` subcommand: its parser, its arguments, and what runs it."""
    p = sub.add_parser(name, help=summary, description=description)
    add(p)
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace, reporter: Reporter | None = None) -> int:
    return run_actions(args, validate, ACTIONS, reporter)


def run_actions(
    args: argparse.Namespace, check: Callable[[argparse.Namespace], Options],
    actions: Mapping[str, Callable[[AdminClient, Options, Reporter], None]],
    reporter: Reporter | None = None,
) -> int:
    """Validate the arguments, run the chosen action, and say how it went (the exit code)."""
    report = reporter or Reporter()
    parser: argparse.ArgumentParser = args.parser
    try:
        opts = check(args)
        with _client(opts) as admin:
            actions[opts.action](admin, opts, report)
    except UsageError as exc:
        parser.print_usage(report.err)
        report.warn(f"{parser.prog}: error: {exc}")
        return USAGE_ERROR
    except AdminError as exc:
        report.error(exc)
    return report.exit_code


def _client(opts: Options) -> AdminClient:
    try:
        return AdminClient(opts.bootstrap, timeout=opts.timeout_s,
                           pause_api_keys=opts.pause_api_keys)
    except ValueError as exc:
        raise UsageError(f"--bootstrap-server: {exc}") from None
