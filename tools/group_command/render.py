"""Printing results: aligned tables as kafka-consumer-groups.sh prints them, JSON and CSV.

A view is a list of columns; each section is one group's rows (or its error). Tables
follow Kafka's widths: a column is at least its minimum width, "growing" columns widen
to their longest value, and the last column is not padded. Missing values print as "-"
in tables, null in JSON and empty in CSV.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kcsim.admin import AdminError

if TYPE_CHECKING:
    from collections.abc import Sequence

MISSING = "-"


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    width: int = 15
    grows: bool = False


@dataclass
class Section:
    """One group's part of the output."""

    group: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    state: str | None = None
    error: AdminError | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def cell(value: Any) -> str:
    return MISSING if value is None else str(value)


def format_table(columns: Sequence[Column], rows: Sequence[dict[str, Any]]) -> list[str]:
    """Header and rows, aligned the way Kafka's printf formats align them."""
    widths = []
    for col in columns:
        width = col.width
        if col.grows:
            width = max([width] + [len(cell(r.get(col.key))) for r in rows])
        widths.append(width)
    lines = []
    for values in [[c.header for c in columns]] + [[cell(r.get(c.key)) for c in columns]
                                                   for r in rows]:
        padded = [v.ljust(w) for v, w in zip(values[:-1], widths[:-1])] + [values[-1]]
        lines.append(" ".join(padded).rstrip())
    return lines


def error_json(error: AdminError | None) -> dict[str, str] | None:
    if error is None:
        return None
    return {"name": error.name, "message": error.message, "hint": error.hint}


def sections_json(sections: Sequence[Section], rows_key: str, *, with_state: bool = True) -> str:
    """[{"group", "state", <rows_key>: [...], ...}] or {"group", "error": {...}} per group."""
    out = []
    for s in sections:
        item: dict[str, Any] = {"group": s.group}
        if s.error is not None:
            item["error"] = error_json(s.error)
        else:
            if with_state:
                item["state"] = s.state
            item.update(s.extra)
            item[rows_key] = [{k: v for k, v in r.items() if k != "group"} for r in s.rows]
        out.append(item)
    return json.dumps(out, indent=2)


def rows_csv(columns: Sequence[Column], rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([c.key for c in columns])
    for r in rows:
        writer.writerow(["" if r.get(c.key) is None else r.get(c.key) for c in columns])
    return buf.getvalue().rstrip("\n")
