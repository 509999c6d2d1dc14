"""The streams tool's actions that differ from the consumer tool's: which partitions are a
group's input, the checks before deleting a group, and the reset plan as Kafka's
kafka-streams-groups prints it. Everything else is the shared action with `kind` "streams".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.admin import AdminClient, AdminError, StreamsGroupDescription, TopicPartition
from kcsim.protocol.errors import ErrorCode

from . import deletion, pausing
from .groups import STREAMS, groups_of_kind, target_groups
from .reset import plan_resets, reset_inputs

if TYPE_CHECKING:
    from .options import Options
    from .render import Section
    from .report import Reporter


def _describe(admin: AdminClient, group: str, timeout: float) -> StreamsGroupDescription:
    return admin.describe_streams_groups(group, timeout=timeout)[group]


def input_partitions(admin: AdminClient, group: str, timeout: float) -> list[TopicPartition]:
    """Every partition of the topics the group's topology reads from outside the group."""
    topics = sorted(_describe(admin, group, timeout).source_topics)
    described = admin.describe_topics(topics, timeout=timeout) if topics else None
    return sorted(tp for t in topics if described is not None and described.error(t) is None
                  for tp in described[t].topic_partitions)


def _pause_scope(admin: AdminClient, action: str, group: str, timeout: float
                 ) -> list[TopicPartition]:
    """--all-input-topics: for --resume the paused partitions; for --pause every input one."""
    if action == "resume":
        return sorted(admin.list_paused_partitions(group, timeout=timeout))
    return input_partitions(admin, group, timeout)


def change_pause(admin: AdminClient, opts: Options, report: Reporter) -> None:
    pausing.change_pause(admin, opts, report, partitions_of=_pause_scope)


def delete_offsets(admin: AdminClient, opts: Options, report: Reporter) -> None:
    """--all-input-topics: the group's committed offsets of the topics its topology reads."""
    partitions = None
    if opts.all_topics:
        group = opts.groups[0]
        try:
            inputs = _describe(admin, group, opts.timeout_s).source_topics
        except AdminError as exc:
            if not exc.not_found:
                raise
            report.not_found(f"{opts.title} '{group}' does not exist.")
            return
        committed = admin.list_group_offsets(group, timeout=opts.timeout_s)[group]
        partitions = sorted(tp for tp in committed if tp.topic in inputs)
    deletion.delete_offsets(admin, opts, report, partitions)


def delete_groups(admin: AdminClient, opts: Options, report: Reporter) -> None:
    """Only empty streams groups are deleted, as Kafka's tool checks before it asks."""

    def refused(groups: list[str]) -> dict[str, AdminError]:
        listed = {g.group_id: g.state for g in groups_of_kind(admin, STREAMS, opts.timeout_s)}
        out = {}
        for group in groups:
            if group not in listed:
                out[group] = AdminError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group '{group}' does "
                                        "not exist or is not a streams group.")
            elif listed[group] not in ("Empty", None):
                out[group] = AdminError(ErrorCode.NON_EMPTY_GROUP,
                                        f"Streams group '{group}' is not EMPTY.")
        return out

    deletion.delete_groups(admin, opts, report, refused)


def reset_offsets(admin: AdminClient, opts: Options, report: Reporter) -> None:
    file_plan = reset_inputs(opts)
    groups = target_groups(admin, opts)
    described = dict(admin.describe_streams_groups(groups, timeout=opts.timeout_s).items()) \
        if groups else {}
    sections = plan_resets(admin, opts, report, groups, described, file_plan)
    print_plan(report, opts, sections)


def print_plan(report: Reporter, opts: Options, sections: list[Section]) -> None:
    """Kafka's table (fixed widths, every column padded), or with --export its CSV."""
    rows = sorted((r["group"], r["topic"], r["partition"], r["new_offset"])
                  for s in sections for r in s.rows)
    if opts.export:
        with_group = len(opts.groups) != 1
        report.print("".join(",".join(str(f) for f in (row if with_group else row[1:])) + "\n"
                             for row in rows))
        return
    if sections:
        fmt = "%-30s %-30s %-10s %-15s"
        report.print()
        report.print(fmt % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"))
        for row in rows:
            report.print(fmt % row)
    else:
        report.print()
