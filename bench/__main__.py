"""`python -m bench [WORKLOAD|FAMILY ...] [--quick]`: run workloads, print one table, save JSON."""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from . import baseline, report
from .harness import SIDES, RunContext, Settings
from .workloads import load

if TYPE_CHECKING:
    from .registry import Figure, Workload


def _parser(names: list[str], families: list[str]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Measure kcsim beside a trivial trio server (the floor). "
        f"Workloads: {', '.join(names)}; families: {', '.join(families)}.")
    p.add_argument("workloads", nargs="*", metavar="WORKLOAD",
                   help="workload or family names (default: all)")
    p.add_argument("--quick", action="store_true", help="short smoke run (about 30 s)")
    p.add_argument("--list", action="store_true", help="list workloads and exit")
    p.add_argument("--out", type=Path, default=report.RESULTS, help="directory for JSON results")
    p.add_argument("--no-save", action="store_true", help="print the table only")
    p.add_argument("--check", action="store_true", help="exit with 1 when a target fails")
    p.add_argument("--only", choices=SIDES, help="measure only kcsim or only the floor")
    p.add_argument("--baseline", metavar="REV",
                   help="measure the kcsim of git revision REV in the floor's place, "
                   "built once into .cache/bench-baseline/ (the ratio is then after/before)")
    defaults = Settings()
    for fld in fields(Settings):
        if fld.name == "quick":
            continue
        default = getattr(defaults, fld.name)
        flag = "--" + fld.name.replace("_", "-")
        text = Settings.HELP[fld.name]
        if isinstance(default, bool):
            p.add_argument(flag, dest=fld.name, action="store_true", default=None, help=text)
        else:
            quick = getattr(Settings.quick_run(), fld.name)
            p.add_argument(flag, dest=fld.name, type=type(default), default=None,
                           help=f"{text} (default {default}, --quick {quick})")
    return p


def main(argv: list[str] | None = None) -> int:
    registry = load()
    names = list(registry)
    families = sorted({w.family for w in registry.values()})
    args = _parser(names, families).parse_args(argv)
    console = Console(stderr=True)
    out = Console() if sys.stdout.isatty() else Console(width=150)
    if args.list:
        for w in registry.values():
            print(f"{w.name:16} {w.family:14} {w.help}")
        return 0
    chosen = []
    for want in args.workloads or names:
        match = [n for n, w in registry.items() if want in (n, w.family)]
        if not match:
            console.print(f"unknown workload {want!r}; known: {', '.join(names)}")
            return 2
        chosen += [n for n in match if n not in chosen]

    settings = Settings.quick_run() if args.quick else Settings()
    for fld in fields(Settings):
        value = getattr(args, fld.name, None)
        if value is not None:
            setattr(settings, fld.name, value)
    if settings.pin and (os.cpu_count() or 1) < 2:
        console.print("--pin needs two CPUs; running unpinned")
        settings.pin = False
    if settings.pin:
        os.sched_setaffinity(0, {1})

    started = time.time()
    env = report.environment()
    try:
        base = baseline.prepare(args.baseline) if args.baseline else None
    except baseline.BaselineError as exc:
        console.print(f"--baseline: {exc}")
        return 2
    ctx = RunContext(settings, console, (args.only,) if args.only else SIDES, base)
    figures: list[Figure] = []
    for name in chosen:
        figures += _run(registry[name], ctx)
    title = f"kcsim benchmarks{' (quick)' if settings.quick else ''}"
    report.print_report(out, figures, title, base.label if base else None)
    if not args.no_save:
        paths = report.save(figures, settings, env, started, chosen, args.out)
        print(f"results: {', '.join(str(p) for p in paths)}", file=sys.stderr)
    failed = [f for f in figures if f.passed is False]
    return 1 if args.check and failed else 0


def _run(w: Workload, ctx: RunContext) -> list[Figure]:
    """The workload's figures; with a baseline, a workload that measured kcsim alone runs
    again on the baseline's kcsim, whose figures fill the floor's column."""
    got = w.fn(ctx)
    alone = all(f.floor is None and f.floor_error is None for f in got)
    if ctx.baseline is None or not alone or not got:
        return got
    if w.in_process:
        ctx.log(f"{w.name}: in process, this tree's kcsim only")
        return got
    ctx.log(f"{w.name}: again on {ctx.baseline.label}")
    before = {f.metric: f for f in w.fn(ctx.on_baseline())}
    for f in got:
        b = before.get(f.metric)
        f.floor, f.floor_error = ((b.kcsim, b.kcsim_error) if b is not None
                                  else (None, "not measured on the baseline"))
    return got


if __name__ == "__main__":
    sys.exit(main())
