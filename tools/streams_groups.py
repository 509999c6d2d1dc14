"""`kcsim streams-groups`: Kafka's kafka-streams-groups, flag for flag, plus KIP-1249's pause.

Works against kcsim and any Kafka cluster with streams groups (the pause actions need
kcsim). It runs the actions of `kcsim.tools.group_command` with `kind` "streams", and
the few of its own in `group_command.streams_actions` and `streams_views`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .consumer_groups import run_actions
from .group_command import pausing, streams_actions, streams_views
from .group_command.streams_options import DESCRIPTION, add_arguments, validate

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from kcsim.admin import AdminClient

    from .group_command.options import Options
    from .group_command.report import Reporter

ACTIONS: dict[str, Callable[[AdminClient, Options, Reporter], None]] = {
    "list": streams_views.list_groups,
    "describe": streams_views.describe,
    "delete": streams_actions.delete_groups,
    "delete_offsets": streams_actions.delete_offsets,
    "reset_offsets": streams_actions.reset_offsets,
    "pause": streams_actions.change_pause,
    "resume": streams_actions.change_pause,
    "paused_partitions": pausing.paused_partitions,
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("streams-groups", help="list, describe, reset and delete streams groups",
                       description=DESCRIPTION)
    add_arguments(p)
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace, reporter: Reporter | None = None) -> int:
    return run_actions(args, validate, ACTIONS, reporter)
