"""The `kcsim` command: `kcsim serve` runs the broker."""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import fields
from typing import TYPE_CHECKING

import trio

from . import config as config_mod

if TYPE_CHECKING:
    from collections.abc import Sequence


def _serve_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "serve",
        help="run the broker",
        description="Run a kcsim broker. Every setting can also come from a TOML file "
        "(--config or KCSIM_CONFIG) or an environment variable KCSIM_<NAME> "
        "(e.g. KCSIM_PORT=9093); flags win over the environment, which wins over the file.",
    )
    p.add_argument("--config", help="TOML file with settings (keys as below, without dashes' prefix)")
    defaults = config_mod.Config()
    for fld in fields(config_mod.Config):
        flag = "--" + fld.name.replace("_", "-")
        default = getattr(defaults, fld.name)
        help_text = f"{config_mod.HELP[fld.name]} (default: {default})"
        env = f"[env KCSIM_{fld.name.upper()}]"
        if isinstance(default, bool):
            p.add_argument(flag, dest=fld.name, default=None,
                           action=argparse.BooleanOptionalAction, help=f"{help_text} {env}")
        else:
            kind = int if fld.type in ("int", "int | None") else str
            p.add_argument(flag, dest=fld.name, default=None, type=kind,
                           metavar=fld.name.split("_")[-1].upper(), help=f"{help_text} {env}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kcsim", description="A simulated Kafka broker "
                                     "and group coordinator that real Kafka clients talk to.")
    sub = parser.add_subparsers(dest="command", required=True)
    _serve_parser(sub)
    from kcsim.tools import consumer_groups

    consumer_groups.register(sub)
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args)
    return int(args.run(args))


def serve(args: argparse.Namespace) -> int:
    overrides = {f.name: getattr(args, f.name) for f in fields(config_mod.Config)}
    try:
        cfg = config_mod.load(args.config, **overrides)
    except (ValueError, OSError) as exc:
        print(f"kcsim: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=getattr(logging, cfg.log_level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    from .app import run_until_signal

    try:
        return trio.run(run_until_signal, cfg)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
