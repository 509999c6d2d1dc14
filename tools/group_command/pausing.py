"""KIP-1249's --pause, --resume and --paused-partitions (these need a kcsim broker)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.admin import AdminClient, AdminError, GroupDescription, TopicPartition

from .groups import describe_all, offsets_of_all, target_groups
from .render import Column, Section, format_table, rows_csv, sections_json
from .scope import resolve_partitions

if TYPE_CHECKING:
    from .options import Options
    from .report import Reporter

DONE = {"pause": "Paused", "resume": "Resumed"}


def _group_partitions(
    admin: AdminClient, action: str, group: str, timeout: float
) -> list[TopicPartition]:
    """--all-topics: for --resume the paused partitions; for --pause what the group is
    assigned or has committed."""
    if action == "resume":
        return sorted(admin.list_paused_partitions(group, timeout=timeout))
    found: set[TopicPartition] = set()
    desc = describe_all(admin, [group], timeout)[group]
    if isinstance(desc, GroupDescription):
        found.update(desc.assigned_partitions)
    offsets = offsets_of_all(admin, [group], timeout)[group]
    if isinstance(offsets, dict):
        found.update(offsets)
    return sorted(found)


def change_pause(admin: AdminClient, opts: Options, report: Reporter) -> None:
    """--pause or --resume the partitions in scope of each --group."""
    explicit = resolve_partitions(admin, opts.topics, opts.timeout_s) if opts.topics else None
    change = admin.pause_partitions if opts.action == "pause" else admin.resume_partitions
    sections = []
    for group in dict.fromkeys(opts.groups):
        try:
            partitions = explicit if explicit is not None else _group_partitions(
                admin, opts.action, group, opts.timeout_s)
            results = change(group, partitions, timeout=opts.timeout_s)
        except AdminError as exc:
            report.error(exc, f"group '{group}'")
            sections.append(Section(group, error=exc))
            continue
        rows = []
        for tp, error in results.items():
            if error is not None:
                report.error(error, f"group '{group}', partition {tp}")
            rows.append({"group": group, "topic": tp.topic, "partition": tp.partition,
                         "status": DONE[opts.action] if error is None
                         else f"Error: {error.name}: {error.message}"})
        sections.append(Section(group, rows))
    columns = [Column("group", "GROUP", grows=True), Column("topic", "TOPIC", grows=True),
               Column("partition", "PARTITION", 10), Column("status", "STATUS")]
    _emit(report, opts, sections, columns)


def paused_partitions(admin: AdminClient, opts: Options, report: Reporter) -> None:
    sections = []
    for group in target_groups(admin, opts):
        try:
            paused = admin.list_paused_partitions(group, timeout=opts.timeout_s)
        except AdminError as exc:
            if exc.not_found:
                report.not_found(f"Consumer group '{group}' does not exist.")
            else:
                report.error(exc, f"group '{group}'")
            sections.append(Section(group, error=exc))
            continue
        sections.append(Section(group, [
            {"group": group, "topic": tp.topic, "partition": tp.partition, "current_offset": off}
            for tp, off in paused.items()]))
    columns = [Column("group", "GROUP", grows=True), Column("topic", "TOPIC", grows=True),
               Column("partition", "PARTITION", 10), Column("current_offset", "CURRENT-OFFSET")]
    _emit(report, opts, sections, columns)


def _emit(report: Reporter, opts: Options, sections: list[Section], columns: list[Column]) -> None:
    rows = [r for s in sections for r in s.rows]
    if opts.output == "json":
        report.print(sections_json(sections, "partitions", with_state=False))
    elif opts.output == "csv":
        report.print(rows_csv(columns, rows))
    elif rows:
        report.print()
        for line in format_table(columns, rows):
            report.print(line)
