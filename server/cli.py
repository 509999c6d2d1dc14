"""The `kcsim` command: `kcsim serve` runs the broker, `kcsim health` asks it if it serves;
`kcsim consumer-groups`, `kcsim streams-groups` and `kcsim control` are client tools
(kcsim.tools); `kcsim events` prints group events, of a broker or of a data dir.

Other parts of kcsim add subcommands through the ``kcsim.commands`` entry point
(a function taking the subparsers), so the server imports none of them: the
Spark pipeline's `kcsim pipeline` is one, and `kcsim serve` never loads Spark.
"""

from __future__ import annotations

import argparse
import logging
import sys
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

import trio

from . import config as config_mod

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def _serve_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "serve",
        help="run the broker",
        description="Run a kcsim broker. Every setting can also come from a TOML file "
        "(--config or KCSIM_CONFIG) or an environment variable KCSIM_<NAME> "
        "(e.g. KCSIM_PORT=9093); flags win over the environment, which wins over the file. "
        "A value that does not fit its setting stops start-up with status 2.",
    )
    _settings_arguments(p)
    return p


def _health_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "health",
        help="check that the broker answers Kafka requests on every listener",
        description="Send ApiVersions to every listener that `kcsim serve` with the same "
        "settings (file, KCSIM_* environment, flags) listens on; exit 0 if each answers, 1 if "
        "one does not, 2 for settings that do not fit. A container's health check.",
    )
    p.add_argument("--timeout", type=float, default=3.0,
                   help="seconds to wait for each listener (default: 3)")
    _settings_arguments(p)
    return p


def _settings_arguments(p: argparse.ArgumentParser) -> None:
    """--config and one flag per setting, as the settings table declares them."""
    p.add_argument("--config", help="TOML file with settings (keys as below, with underscores)")
    for setting in config_mod.SETTINGS.values():
        help_text = (f"{setting.help}: {setting.expect} (default: {setting.default}) "
                     f"[env {setting.env}]").replace("%", "%%")
        if setting.boolean:
            p.add_argument(setting.flag, dest=setting.name, default=None,
                           action=argparse.BooleanOptionalAction, help=help_text)
        elif setting.repeatable:  # each given adds one entry (config.load checks them)
            p.add_argument(setting.flag, dest=setting.name, default=None, action="append",
                           metavar=setting.name.upper(),
                           help=help_text.replace("(default: ())", "(default: none)"))
        else:  # the text is converted and checked by config.load, like the environment's
            metavar = ("{" + ",".join(setting.choices) + "}" if setting.choices
                       else setting.name.split("_")[-1].upper())
            p.add_argument(setting.flag, dest=setting.name, default=None, metavar=metavar,
                           help=help_text)


# Commands of the broker itself: their parsers load neither the client tools nor the
# plugins, which would add a third to the time `kcsim serve` takes to start accepting.
_BROKER_COMMANDS = ("serve", "health")


def parser(tools: bool = True) -> argparse.ArgumentParser:
    """The `kcsim` command line: `serve` and, with `tools`, the client tools and plugins."""
    top = argparse.ArgumentParser(prog="kcsim", description="A simulated Kafka broker "
                                  "and group coordinator that real Kafka clients talk to.")
    sub = top.add_subparsers(dest="command", required=True)
    _serve_parser(sub)
    _health_parser(sub)
    if tools:
        from kcsim.tools import consumer_groups, control, share_groups, streams_groups

        from . import events_command

        consumer_groups.register(sub)
        streams_groups.register(sub)
        share_groups.register(sub)
        control.register(sub)
        events_command.register(sub)
        for command in entry_points(group="kcsim.commands"):
            command.load()(sub)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser(tools=not argv or argv[0] not in _BROKER_COMMANDS).parse_args(argv)
    if args.command == "serve":
        return serve(args)
    if args.command == "health":
        return health(args)
    return int(args.run(args))


def serve_config(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> config_mod.Config:
    """The checked Config of `kcsim serve` args (ConfigError names a bad setting)."""
    flags = {name: getattr(args, name) for name in config_mod.SETTINGS}
    return config_mod.load(args.config, env, flags=flags)


def serve(args: argparse.Namespace) -> int:
    try:
        cfg = serve_config(args)
    except config_mod.ConfigError as exc:
        print(f"kcsim: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=getattr(logging, cfg.log_level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    from .app import run_until_signal

    try:
        return trio.run(run_until_signal, cfg)
    except KeyboardInterrupt:
        return 0


def health(args: argparse.Namespace) -> int:
    try:
        cfg = serve_config(args)
    except config_mod.ConfigError as exc:
        print(f"kcsim: {exc}", file=sys.stderr)
        return 2
    from .health import check

    failed = False
    for where, problem in check(cfg, args.timeout):
        failed = failed or problem is not None
        print(f"{where}: {problem or 'ok'}", file=sys.stderr if problem else sys.stdout)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
