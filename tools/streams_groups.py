"""`kcsim streams-groups`: Kafka's kafka-streams-groups, flag for flag, plus KIP-1249's pause.

Works against kcsim and any Kafka cluster with streams groups (the pause actions need
kcsim). It runs the actions of `kcsim.tools.group_command` with `kind` "streams", and
the few of its own in `group_command.streams_actions` and `streams_views`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import consumer_groups
from .consumer_groups import add_tool, run_actions
from .group_command import streams_actions, streams_views
from .group_command.streams_options import DESCRIPTION, add_arguments, validate

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from kcsim.admin import AdminClient

    from .group_command.options import Options
    from .group_command.report import Reporter

ACTIONS: dict[str, Callable[[AdminClient, Options, Reporter], None]] = {
    **consumer_groups.ACTIONS,  # --list-paused: the consumer tool's --paused-partitions
    "list": streams_views.list_groups, "describe": streams_views.describe,
    "delete": streams_actions.delete_groups, "delete_offsets": streams_actions.delete_offsets,
    "reset_offsets": streams_actions.reset_offsets,
    "pause": streams_actions.change_pause, "resume": streams_actions.change_pause,
}


def register(sub: argparse._SubParsersAction) -> None:
    add_tool(sub, "streams-groups", "list, describe, reset and delete streams groups",
             DESCRIPTION, add_arguments, run)


def run(args: argparse.Namespace, reporter: Reporter | None = None) -> int:
    return run_actions(args, validate, ACTIONS, reporter)
