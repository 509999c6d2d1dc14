"""KIP-1249's --pause, --resume and --paused-partitions (these need a kcsim broker)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.admin import AdminClient, AdminError, GroupDescription, TopicPartition

from .groups import STREAMS, describe_all, groups_of_kind, offsets_of_all, target_groups
from .render import Column, Section, format_table, rows_csv, sections_json
from .report import UsageError
from .scope import resolve_partitions

if TYPE_CHECKING:
    from collections.abc import Callable

    from .options import Options
    from .report import Reporter

DONE = {"pause": "Paused", "resume": "Resumed"}


def refuse_streams_groups(admin: AdminClient, opts: Options, groups: list[str]) -> None:
    """A streams group given to the consumer-groups tool: name the tool that pauses it."""
    if opts.kind == STREAMS:
        return
    try:
        streams = {g.group_id for g in groups_of_kind(admin, STREAMS, opts.timeout_s)}
    except AdminError:
        return  # a broker that cannot list groups by type has no streams groups
    named = [g for g in groups if g in streams]
    if named:
        raise UsageError(f"Group '{named[0]}' is a streams group: use `kcsim streams-groups "
                         f"--bootstrap-server {opts.bootstrap} {_flag(opts.action)} "
                         f"--group {named[0]} ...` (kafka-streams-groups)")


def _flag(action: str) -> str:
    return "--list-paused" if action == "paused_partitions" else "--" + action


def group_partitions(
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


def change_pause(
    admin: AdminClient, opts: Options, report: Reporter,
    partitions_of: Callable[[AdminClient, str, str, float], list[TopicPartition]] | None = None,
) -> None:
    """--pause or --resume the partitions in scope of each --group; `partitions_of` finds
    a group's partitions for --all-topics (default: `group_partitions`)."""
    groups = list(dict.fromkeys(opts.groups))
    refuse_streams_groups(admin, opts, groups)
    explicit = resolve_partitions(admin, opts.topics, opts.timeout_s) if opts.topics else None
    change = admin.pause_partitions if opts.action == "pause" else admin.resume_partitions
    find = partitions_of or group_partitions
    sections = []
    for group in groups:
        try:
            partitions = explicit if explicit is not None else find(
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
    groups = target_groups(admin, opts)
    refuse_streams_groups(admin, opts, groups)
    for group in groups:
        try:
            paused = admin.list_paused_partitions(group, timeout=opts.timeout_s)
        except AdminError as exc:
            if exc.not_found:
                report.not_found(f"{opts.title} '{group}' does not exist.")
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
