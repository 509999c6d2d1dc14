"""--list: group ids, or a table of groups with their type and state (--type, --state)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .groups import CONSUMER_PROTOCOL_TYPES
from .render import Column, format_table, rows_csv

if TYPE_CHECKING:
    from kcsim.admin import AdminClient

    from .options import Options
    from .report import Reporter


def list_groups(admin: AdminClient, opts: Options, report: Reporter) -> None:
    listings = admin.list_groups(states=opts.states, types=opts.types,
                                 protocol_types=CONSUMER_PROTOCOL_TYPES, timeout=opts.timeout_s)
    rows: list[dict[str, str | None]] = [{"group": g.group_id, "type": g.type, "state": g.state,
             "protocol_type": g.protocol_type} for g in listings]
    if opts.output == "json":
        report.print(json.dumps(rows, indent=2))
        return
    if opts.output == "csv":
        columns = [Column("group", "GROUP"), Column("type", "TYPE"), Column("state", "STATE"),
                   Column("protocol_type", "PROTOCOL-TYPE")]
        report.print(rows_csv(columns, rows))
        return
    if not (opts.show_state or opts.show_type):
        for listing in listings:
            report.print(listing.group_id)
        return
    # Kafka: the group column is max(15, longest id) + 10 wide, the others 20.
    width = max([15] + [len(g.group_id) for g in listings]) + 10
    columns = [Column("group", "GROUP", width)]
    if opts.show_type:
        columns.append(Column("type", "TYPE", 20))
    if opts.show_state:
        columns.append(Column("state", "STATE", 20))
    # Kafka's table names the types as GroupType prints them: Classic, Consumer.
    shown = [{**row, "type": (row["type"] or "unknown").capitalize()} for row in rows]
    for line in format_table(columns, shown):
        report.print(line)
