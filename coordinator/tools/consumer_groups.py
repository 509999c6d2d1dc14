"""`kcsim consumer-groups`: the kafka-consumer-groups.sh tool."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("consumer-groups", help="list, describe, reset and delete consumer groups")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    print("kcsim consumer-groups: not available yet", file=sys.stderr)
    return 2
