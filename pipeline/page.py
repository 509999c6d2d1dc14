"""The report as one self-contained HTML page, drawn with plotly.

Per group: a timeline (its generations as bars coloured by state, each
member's time in the group, commits, rewinds and admin resets as markers) and
its lag over time per partition; a summary table on top. Given the output of the
lag job (`kcsim pipeline lag --out`), each group also gets the lag that job measured
over time, and a group only the job saw gets a section of its own. plotly.js is inlined,
so the page opens anywhere, offline, with nothing beside it.
"""

from __future__ import annotations

import html
import os
from collections import defaultdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_GROUPS = 50
JOB_LAG = "job_lag"  # the lag job's rows, among a group's tables
MAX_POINTS = 5_000  # per series: a longer history is thinned evenly for drawing
STATE_COLOURS = {"Stable": "#2ca02c", "Empty": "#bbbbbb", "Dead": "#d62728"}
SUMMARY_COLUMNS = ("group", "group_type", "state", "generation", "commits", "rewinds",
                   "admin_resets", "deletions", "pauses", "rebalances",
                   "longest_without_commit_s", "current_lag")


def render(paths: dict[str, str], out_file: str, title: str = "kcsim consumer groups",
           lag_dir: str | None = None) -> str:
    """Write the page for the report tables at ``paths`` (and the lag job's table at
    ``lag_dir``); returns its path."""
    import plotly.offline

    tables = {name: _rows(path) for name, path in paths.items()}
    if lag_dir is not None:
        tables[JOB_LAG] = _rows(lag_dir)
    summary = sorted(tables["summary"], key=lambda r: r["group"] or "")
    by_group: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for name in ("timeline", "offset_history", "lag", JOB_LAG):
        for row in tables.get(name, []):
            by_group[row["group"]][name].append(row)
    reported = {row["group"] for row in summary}
    groups = [row["group"] for row in summary] + sorted(set(by_group) - reported)
    sections = []
    for group in groups[:MAX_GROUPS]:
        sections.append(_group_section(group, by_group.get(group, {}), group in reported))
    more = (f"<p>{len(groups) - MAX_GROUPS} more groups are in the Parquet tables.</p>"
            if len(groups) > MAX_GROUPS else "")
    page = _PAGE.format(
        title=html.escape(title),
        plotly=plotly.offline.get_plotlyjs(),
        summary=_summary_table(summary),
        sections="\n".join(sections) + more,
    )
    os.makedirs(os.path.dirname(os.path.abspath(out_file)), exist_ok=True)
    with open(out_file, "w", encoding="utf-8") as f:
        f.write(page)
    return out_file


def render_lag(lag_dir: str, out_file: str, title: str = "consumer lag") -> str:
    """Write a page of the lag job's output (`kcsim pipeline lag --out`): per group, its
    lag over time per partition, and the newest lag of each partition on top."""
    import plotly.offline

    rows = _rows(lag_dir)
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_group[row["group"]].append(row)
    newest = {(r["group"], r["topic"], r["partition"]): r
              for r in sorted(rows, key=lambda r: r["time"])}
    table = ["<table><tr><th>group</th><th>topic</th><th>partition</th><th>committed</th>"
             "<th>log end</th><th>lag</th></tr>"]
    for (group, topic, partition), r in sorted(newest.items()):
        table.append("<tr>" + "".join(f"<td>{_text(v)}</td>" for v in (
            group, topic, partition, r["committed"], r["log_end"], r["lag"])) + "</tr>")
    table.append("</table>")
    sections = [f'<section class="group"><h2>{html.escape(group)}</h2>'
                f'<div class="figure lag">{_div(_lag_figure(group, by_group[group]))}</div>'
                "</section>" for group in sorted(by_group)[:MAX_GROUPS]]
    page = _PAGE.format(title=html.escape(title), plotly=plotly.offline.get_plotlyjs(),
                        summary="".join(table), sections="\n".join(sections))
    os.makedirs(os.path.dirname(os.path.abspath(out_file)), exist_ok=True)
    with open(out_file, "w", encoding="utf-8") as f:
        f.write(page)
    return out_file


def _rows(path: str) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


def _summary_table(rows: list[dict[str, Any]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in SUMMARY_COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_text(r.get(c)))}</td>" for c in SUMMARY_COLUMNS)
        + "</tr>" for r in rows)
    return f'<table id="summary"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def _group_section(group: str, tables: dict[str, list[dict[str, Any]]], reported: bool) -> str:
    """A group's figures: its timeline and lag from the report (if it is in the report),
    then the lag the lag job measured (if given)."""
    anchor = "group-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in group)
    figures = []
    if reported:
        timeline = _timeline_figure(group, tables.get("timeline", []),
                                    tables.get("offset_history", []))
        lag = _lag_figure(group, tables.get("lag", []))
        figures += [f'<div class="figure timeline">{_div(timeline)}</div>',
                    f'<div class="figure lag">{_div(lag)}</div>']
    if tables.get(JOB_LAG):
        job = _lag_figure(group, tables[JOB_LAG], " (measured by the lag job)")
        figures.append(f'<div class="figure lag-job">{_div(job)}</div>')
    return (f'<section class="group" id="{html.escape(anchor)}">'
            f"<h2>{html.escape(group)}</h2>{''.join(figures)}</section>")


def _div(figure: Any) -> str:
    return str(figure.to_html(full_html=False, include_plotlyjs=False,
                              config={"displaylogo": False, "responsive": True}))


def _timeline_figure(group: str, generations: list[dict[str, Any]],
                     offsets: list[dict[str, Any]]) -> Any:
    import plotly.graph_objects as go

    figure = go.Figure()
    end_of_history = max([r["time"] for r in offsets if r["time"] is not None]
                         + [g["end"] or g["start"] for g in generations], default=None)
    generations = sorted(generations, key=lambda r: r["position"])
    for state in ("Stable", "Empty", "Dead"):
        rows = [g for g in generations if g["state"] == state]
        if not rows:
            continue
        figure.add_trace(go.Bar(
            name=f"generation ({state})", orientation="h", y=["generations"] * len(rows),
            base=[_iso(g["start"]) for g in rows],
            x=[_span_ms(g["start"], g["end"] or end_of_history or g["start"]) for g in rows],
            text=[f"gen {g['generation']} · {_members(g)}" for g in rows],
            textposition="inside", marker_color=STATE_COLOURS[state],
            hovertext=[_generation_hover(g) for g in rows], hoverinfo="text"))
    members = sorted({m for g in generations for m in g["members"] or []})
    for member in members[:30]:
        spans = [g for g in generations if member in (g["members"] or [])]
        figure.add_trace(go.Bar(
            name=_short(member), orientation="h", y=[f"member {_short(member)}"] * len(spans),
            base=[_iso(g["start"]) for g in spans],
            x=[_span_ms(g["start"], g["end"] or end_of_history or g["start"]) for g in spans],
            marker_color="#1f77b4", showlegend=False, hoverinfo="name"))
    for label, rows, symbol, colour in _commit_series(offsets):
        figure.add_trace(go.Scatter(
            name=label, mode="markers", x=[_iso(r["time"]) for r in rows], y=[label] * len(rows),
            marker={"symbol": symbol, "color": colour, "size": 8},
            hovertext=[f"{r['topic']}-{r['partition']} @ {r['offset']}" for r in rows],
            hoverinfo="text"))
    figure.update_layout(
        title=f"{group}: generations, members and commits", barmode="overlay",
        xaxis={"type": "date", "title": "time (UTC)"}, height=260 + 22 * min(len(members), 30),
        margin={"l": 160, "r": 20, "t": 50, "b": 40}, legend={"orientation": "h"})
    return figure


def _commit_series(offsets: list[dict[str, Any]]) -> Iterable[tuple[str, list[dict[str, Any]], str, str]]:
    commits = [r for r in offsets if r["event"] == "commit"]
    series = [
        ("commits", [r for r in commits if not r["rewind"] and not r["admin_reset"]],
         "circle", "#1f77b4"),
        ("rewinds", [r for r in commits if r["rewind"]], "triangle-down", "#d62728"),
        ("admin resets", [r for r in commits if r["admin_reset"]], "x", "#ff7f0e"),
        ("deletions", [r for r in offsets if r["event"] == "delete"], "square", "#7f7f7f"),
        ("pauses", [r for r in offsets if r["event"] in ("pause", "resume")], "diamond",
         "#9467bd"),
    ]
    for label, rows, symbol, colour in series:
        if rows:
            yield label, _thin(sorted(rows, key=lambda r: r["position"])), symbol, colour


def _lag_figure(group: str, lag: list[dict[str, Any]], source: str = "") -> Any:
    import plotly.graph_objects as go

    figure = go.Figure()
    series: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in lag:
        series[f"{row['topic']}-{row['partition']}"].append(row)
    for name in sorted(series)[:50]:
        rows = _thin(sorted(series[name], key=lambda r: (r["time"], r.get("position", 0))))
        figure.add_trace(go.Scatter(
            name=f"lag {name}", mode="lines+markers", line_shape="hv",
            x=[_iso(r["time"]) for r in rows], y=[r["lag"] for r in rows]))
    figure.update_layout(
        title=f"{group}: lag behind the log end, per partition{source}", height=320,
        xaxis={"type": "date", "title": "time (UTC)"}, yaxis={"title": "records", "rangemode": "tozero"},
        margin={"l": 60, "r": 20, "t": 50, "b": 40})
    return figure


def _thin(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if len(rows) <= MAX_POINTS:
        return rows
    step = len(rows) / MAX_POINTS
    return [rows[int(i * step)] for i in range(MAX_POINTS)] + [rows[-1]]


def _members(g: dict[str, Any]) -> str:
    n = len(g["members"] or [])
    return f"{n} member" if n == 1 else f"{n} members"


def _generation_hover(g: dict[str, Any]) -> str:
    parts = [f"generation {g['generation']} ({g['state']})",
             f"members: {', '.join(_short(m) for m in g['members'] or []) or '-'}"]
    if g["joined"]:
        parts.append(f"joined: {', '.join(_short(m) for m in g['joined'])}")
    if g["left"]:
        parts.append(f"left: {', '.join(_short(m) for m in g['left'])}")
    for a in g["assignment"] or []:
        parts.append(f"{_short(a['member'])}: {a['topic']} {a['partitions']}")
    return "<br>".join(html.escape(p) for p in parts)


def _short(member_id: str) -> str:
    return member_id if len(member_id) <= 24 else member_id[:21] + "..."


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "")


def _span_ms(start: datetime, end: datetime) -> float:
    return max((end - start).total_seconds() * 1000, 1.0)


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<script type="text/javascript">{plotly}</script>
<style>
body {{ font-family: sans-serif; margin: 1.5em; color: #222; }}
table {{ border-collapse: collapse; font-size: 0.9em; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
section.group {{ margin-top: 2em; border-top: 2px solid #eee; }}
</style></head>
<body><h1>{title}</h1>
{summary}
{sections}
</body></html>
"""
