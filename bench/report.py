"""The results table on the terminal and the same figures as JSON under bench/results/."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console

    from .harness import Settings
    from .registry import Figure

RESULTS = Path(__file__).resolve().parent / "results"


def _num(x: float | None) -> str:
    if x is None:
        return "—"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def _value(x: float | None, unit: str, error: str | None) -> str:
    if x is None:
        return "[red]error[/]" if error else "[dim]not run[/]"
    return f"{_num(x)} {unit}"


def background_load(figures: list[Figure]) -> float | None:
    """Highest share of a core other processes used during any timed phase of this run."""
    shares: list[float] = []

    def visit(x: object) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "other_processes_cpu_share" and isinstance(v, (int, float)):
                    shares.append(float(v))
                else:
                    visit(v)

    for f in figures:
        visit(f.extra)
    return max(shares) if shares else None


def table(figures: list[Figure], title: str, beside: str | None = None) -> Table:
    load = background_load(figures)
    caption = None
    if load is not None:
        caption = (f"other processes used up to {load:.2f} cores during timed phases "
                   "(> 0.2 makes wall-clock figures unreliable)")
    t = Table(title=title, caption=caption, show_lines=False)
    with_kafka = any(f.kafka is not None or f.kafka_error for f in figures)
    columns = [("workload", "left"), ("metric", "left"), ("kcsim", "right"),
               (beside or "trivial-trio floor", "right"), ("ratio", "right")]
    columns += [("Apache Kafka", "right")] if with_kafka else []
    for col, justify in (*columns, ("target", "left"), ("pass/fail", "center")):
        t.add_column(col, justify=justify)  # type: ignore[arg-type]
    for f in figures:
        ok = f.passed
        verdict = "—" if ok is None else ("[green]pass[/]" if ok else "[red]FAIL[/]")
        kafka = ([_value(f.kafka, f.unit, None) if f.kafka_error is None else "[yellow]skipped[/]"]
                 if with_kafka else [])
        t.add_row(f.workload, f.metric, _value(f.kcsim, f.unit, f.kcsim_error),
                  _value(f.floor, f.unit, f.floor_error),
                  "—" if f.ratio is None else f"{f.ratio:.2f}x", *kafka,
                  f.target.text() if f.target else "", verdict)
    return t


def errors(figures: list[Figure]) -> list[str]:
    seen: list[str] = []
    for f in figures:
        for side, err in (("kcsim", f.kcsim_error), ("floor", f.floor_error),
                          ("Apache Kafka", f.kafka_error)):
            line = f"{f.workload} on {side}: {err}"
            if err and line not in seen:
                seen.append(line)
    return seen


def print_report(console: Console, figures: list[Figure], title: str,
                 beside: str | None = None) -> None:
    """The table, with `beside` (a baseline's label) in place of the floor's column."""
    console.print(table(figures, title, beside))
    for line in errors(figures):
        console.print(Text("error ", style="red") + Text(line), highlight=False)


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], check=False, capture_output=True,
                             text=True,
                             cwd=RESULTS.parent.parent, timeout=5)
    except OSError:
        return None
    return out.stdout.strip() or None


def loadavg() -> list[float]:
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def environment() -> dict[str, Any]:
    return {"python": platform.python_version(), "platform": platform.platform(),
            "cpus": os.cpu_count(), "loadavg_at_start": loadavg(), "commit": _git_commit()}


def save(figures: list[Figure], settings: Settings, env: dict[str, Any], started: float,
         workloads: list[str], out_dir: Path = RESULTS) -> list[Path]:
    """Write latest.json and a timestamped copy; returns both paths."""
    doc = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "seconds": round(time.time() - started, 1),
        "workloads": workloads,
        "settings": asdict(settings),
        "environment": {**env, "loadavg_at_end": loadavg()},
        "all_passed": all(f.passed is not False for f in figures),
        "figures": [f.to_json() for f in figures],
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    stamped = out_dir / time.strftime("%Y%m%d-%H%M%S.json", time.localtime(started))
    latest = out_dir / "latest.json"
    for path in (stamped, latest):
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    return [latest, stamped]
