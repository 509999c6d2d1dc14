"""`kcsim share-groups`: Kafka's kafka-share-groups, flag for flag.

Works against kcsim and any Kafka cluster with share groups (KIP-932). The actions live
in `kcsim.tools.group_command.share_views`, the flags in `share_options`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .consumer_groups import add_tool, run_actions
from .group_command import share_views
from .group_command.share_options import DESCRIPTION, add_arguments, validate

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from kcsim.admin import AdminClient

    from .group_command.options import Options
    from .group_command.report import Reporter

ACTIONS: dict[str, Callable[[AdminClient, Options, Reporter], None]] = {
    "list": share_views.list_groups, "describe": share_views.describe,
    "delete": share_views.delete_groups, "delete_offsets": share_views.delete_offsets,
    "reset_offsets": share_views.reset_offsets,
}


def register(sub: argparse._SubParsersAction) -> None:
    add_tool(sub, "share-groups", "list, describe, reset and delete share groups",
             DESCRIPTION, add_arguments, run)


def run(args: argparse.Namespace, reporter: Reporter | None = None) -> int:
    return run_actions(args, validate, ACTIONS, reporter)
