"""--delete (whole groups) and --delete-offsets (one group's offsets of some topics)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from kcsim.admin import AdminClient, AdminError, Outcomes, TopicPartition

from .groups import target_groups
from .render import Column, Section, error_json, format_table, rows_csv, sections_json
from .scope import parse_topic_args

if TYPE_CHECKING:
    from collections.abc import Callable

    from .options import Options
    from .report import Reporter


def delete_groups(
    admin: AdminClient, opts: Options, report: Reporter,
    refused: Callable[[list[str]], dict[str, AdminError]] | None = None,
) -> None:
    """Delete the groups in scope; `refused` names those not to be sent to the broker
    (the streams tool's check that each is an empty streams group), with their errors."""
    groups = target_groups(admin, opts)
    if not groups:
        report.print(f"No {opts.kind} groups to delete.")
        return
    failed = refused(groups) if refused is not None else {}
    sent = [g for g in groups if g not in failed]
    results = admin.delete_groups(sent, timeout=opts.timeout_s) if sent else Outcomes({})
    if failed:
        results = Outcomes({g: failed[g] if g in failed else results.error(g) for g in groups})
    deleted = [g for g in results if results.error(g) is None]
    for group, error in results.failed.items():
        report.error(error, f"group '{group}' could not be deleted")
    if opts.output == "json":
        report.print(json.dumps([
            {"group": g, "deleted": results.error(g) is None, "error": error_json(results.error(g))}
            for g in results], indent=2))
    elif opts.output == "csv":
        rows = [{"group": g, "deleted": results.error(g) is None,
                 "error": _name(results.error(g))} for g in results]
        columns = [Column("group", ""), Column("deleted", ""), Column("error", "")]
        report.print(rows_csv(columns, rows))
    elif not results.failed:
        names = ", ".join(f"'{g}'" for g in deleted)
        report.print(f"Deletion of requested {opts.kind} groups ({names}) was successful.")
    elif deleted:
        report.print(f"These {opts.kind} groups were deleted successfully: "
                     + ", ".join(f"'{g}'" for g in deleted))


def _name(error: AdminError | None) -> str | None:
    return None if error is None else error.name


def delete_offsets(
    admin: AdminClient, opts: Options, report: Reporter,
    chosen: list[TopicPartition] | None = None,
) -> None:
    """Delete one group's offsets of the --topic partitions, and of those `chosen`."""
    group = opts.groups[0]
    statuses: dict[TopicPartition, AdminError | None] = {}
    explicit: list[TopicPartition] = list(chosen or ())
    whole: list[str] = []
    for topic, partitions in parse_topic_args(opts.topics):
        if partitions is None:
            whole.append(topic)
        else:
            explicit.extend(TopicPartition(topic, p) for p in partitions)
    if whole:
        described = admin.describe_topics(whole, timeout=opts.timeout_s)
        for topic in whole:
            error = described.error(topic)
            if error is None:
                explicit.extend(described[topic].topic_partitions)
            else:
                statuses[TopicPartition(topic, -1)] = error
    try:
        results = admin.delete_group_offsets(group, explicit, timeout=opts.timeout_s)
    except AdminError as exc:
        report.error(exc, f"group '{group}'")
        if opts.output == "json":
            report.print(sections_json([Section(group, error=exc)], "partitions"))
        return
    statuses.update(results.items())
    rows = [{"topic": tp.topic, "partition": tp.partition if tp.partition >= 0 else None,
             "status": "Successful" if error is None else f"Error: {error.name}: {error.message}"}
            for tp, error in sorted(statuses.items(), key=lambda kv: (kv[0].topic, kv[0].partition))]
    for tp, error in statuses.items():
        if error is not None:
            subject = f"topic '{tp.topic}'" if tp.partition < 0 else f"partition {tp}"
            report.error(error, subject)
    if opts.output == "json":
        report.print(sections_json([Section(group, rows)], "partitions", with_state=False))
    elif opts.output == "csv":
        columns = [Column("group", ""), Column("topic", ""), Column("partition", ""),
                   Column("status", "")]
        report.print(rows_csv(columns, [{"group": group, **r} for r in rows]))
    else:
        if all(e is None for e in statuses.values()):
            report.print(f"Request succeeded for deleting offsets from group {group}.")
        report.print()
        columns = [Column("topic", "TOPIC", grows=True), Column("partition", "PARTITION", 10),
                   Column("status", "STATUS")]
        for line in format_table(columns, rows):
            report.print(line)
