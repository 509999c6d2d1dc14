"""--describe: the offsets view (default), --members and --state, as Kafka prints them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kcsim.admin import (
    AdminClient,
    AdminError,
    GroupDescription,
    OffsetAndMetadata,
    OffsetSpec,
    TopicPartition,
)

from .groups import STREAMS, describe_all, groups_of_kind, offsets_of_all, target_groups
from .render import Column, Section, error_json, format_table, rows_csv, sections_json

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .options import Options
    from .report import Reporter

REBALANCING = ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling")


def describe(admin: AdminClient, opts: Options, report: Reporter) -> None:
    groups = target_groups(admin, opts)
    described = describe_all(admin, groups, opts.timeout_s)
    if opts.view == "offsets":
        sections = offsets_sections(admin, described, opts.timeout_s)
    elif opts.view == "members":
        sections = [members_section(g, d) for g, d in sorted(described.items())]
    else:
        sections = [state_section(g, d) for g, d in sorted(described.items())]
    missing = [s.group for s in sections if s.error is not None and s.error.not_found]
    streams = streams_among(admin, missing, opts.timeout_s) if missing else set()
    for section in sections:
        announce(report, section, streams)
        if opts.view == "offsets":
            note_pending(admin, report, section, opts.timeout_s)
    if opts.view == "offsets":
        emit(report, opts.output, sections, "partitions", offsets_columns(opts.verbose),
             skip_empty=True)
    elif opts.view == "members":
        emit(report, opts.output, sections, "members", members_columns(opts.verbose, True),
             table_columns=lambda s: members_columns(opts.verbose, _has_instance_ids(s)))
    else:
        emit_states(report, opts.output, sections, opts.verbose)


def streams_among(admin: AdminClient, groups: Sequence[str], timeout: float) -> set[str]:
    """Which of these groups are streams groups (none where the broker cannot say)."""
    try:
        listed = {g.group_id for g in groups_of_kind(admin, STREAMS, timeout)}
    except AdminError:
        return set()
    return listed.intersection(groups)


def announce(report: Reporter, section: Section, streams: set[str] | frozenset[str] = frozenset()
             ) -> None:
    """Kafka's per-group notes on stderr: missing groups (or streams groups, with the tool
    that describes them), empty and rebalancing groups."""
    if section.error is not None:
        if section.group in streams:
            report.not_found(f"Group {section.group} is not a consumer group. It is a streams "
                             "group: describe it with `kcsim streams-groups --describe "
                             f"--group {section.group}` (kafka-streams-groups).")
        elif section.error.not_found:
            report.not_found(f"Consumer group '{section.group}' does not exist.")
        else:
            report.error(section.error, f"group '{section.group}'")
    elif section.state == "Empty":
        report.warn(f"\nConsumer group '{section.group}' has no active members.")
    elif section.state in REBALANCING:
        report.warn(f"\nWarning: Consumer group '{section.group}' is rebalancing.")


def note_pending(admin: AdminClient, report: Reporter, section: Section, timeout: float) -> None:
    """Name the partitions whose offset is pending in an open transaction: CURRENT-OFFSET
    shows the last committed one until that transaction commits."""
    if section.error is not None or not section.rows:
        return
    partitions = [TopicPartition(r["topic"], r["partition"]) for r in section.rows]
    try:
        pending = admin.pending_transactional_offsets(section.group, partitions, timeout=timeout)
    except AdminError:
        return  # a broker without RequireStable (before Kafka 2.5): nothing to say
    if pending:
        names = ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(pending))
        report.warn(f"\nConsumer group '{section.group}' has offsets pending in an open "
                    f"transaction for {names}; CURRENT-OFFSET is the last committed offset.")


def emit(
    report: Reporter, output: str, sections: Sequence[Section], rows_key: str,
    columns: Sequence[Column], *, skip_empty: bool = False,
    table_columns: Callable[[Section], Sequence[Column]] | None = None,
) -> None:
    if output == "json":
        report.print(sections_json(sections, rows_key))
    elif output == "csv":
        report.print(rows_csv(columns, [r for s in sections for r in s.rows]))
    else:
        for section in sections:
            if section.error is not None or (skip_empty and not section.rows):
                continue
            report.print()
            cols = table_columns(section) if table_columns else columns
            for line in format_table(cols, section.rows):
                report.print(line)


# -- offsets ---------------------------------------------------------------


def offsets_columns(verbose: bool) -> list[Column]:
    cols = [Column("group", "GROUP", grows=True), Column("topic", "TOPIC", grows=True),
            Column("partition", "PARTITION", 10)]
    if verbose:
        cols.append(Column("leader_epoch", "LEADER-EPOCH"))
    return cols + [
        Column("current_offset", "CURRENT-OFFSET"), Column("log_end_offset", "LOG-END-OFFSET"),
        Column("lag", "LAG"), Column("consumer_id", "CONSUMER-ID", grows=True),
        Column("host", "HOST", grows=True), Column("client_id", "CLIENT-ID"),
    ]


def offsets_sections(
    admin: AdminClient, described: dict[str, GroupDescription | AdminError], timeout: float
) -> list[Section]:
    live = [g for g, d in described.items() if not isinstance(d, AdminError)]
    committed = offsets_of_all(admin, live, timeout) if live else {}
    wanted: set[TopicPartition] = set()
    for group in live:
        desc = described[group]
        assert isinstance(desc, GroupDescription)
        wanted.update(desc.assigned_partitions)
        offsets = committed.get(group)
        if isinstance(offsets, dict):
            wanted.update(offsets)
    ends = admin.list_offsets(dict.fromkeys(wanted, OffsetSpec.LATEST), timeout=timeout) \
        if wanted else None
    log_end = {tp: ends[tp].offset for tp in wanted if ends is not None and ends.error(tp) is None}
    sections = []
    for group, desc in sorted(described.items()):
        offsets = committed.get(group)
        if isinstance(desc, AdminError):
            sections.append(Section(group, error=desc))
        elif isinstance(offsets, AdminError):
            sections.append(Section(group, state=desc.state, error=offsets))
        else:
            rows = offset_rows(desc, offsets or {}, log_end)
            sections.append(Section(group, rows, state=desc.state))
    return sections


def offset_rows(
    desc: GroupDescription, committed: dict[TopicPartition, OffsetAndMetadata],
    log_end: dict[TopicPartition, int],
) -> list[dict[str, Any]]:
    """Assigned partitions member by member (largest assignment first), then partitions with
    an offset but no consumer, as Kafka orders them."""
    rows = []

    def row(tp: TopicPartition, consumer: str | None, host: str | None,
            client: str | None) -> dict[str, Any]:
        om = committed.get(tp)
        offset = om.offset if om is not None else None
        end = log_end.get(tp)
        return {
            "group": desc.group_id, "topic": tp.topic, "partition": tp.partition,
            "leader_epoch": om.leader_epoch if om is not None else None,
            "current_offset": offset, "log_end_offset": end,
            "lag": end - offset if offset is not None and end is not None else None,
            "consumer_id": consumer, "host": host, "client_id": client,
        }

    members = sorted((m for m in desc.members if m.assignment),
                     key=lambda m: len(m.assignment), reverse=True)
    assigned: set[TopicPartition] = set()
    for m in members:
        for tp in sorted(m.assignment):
            assigned.add(tp)
            rows.append(row(tp, m.member_id, m.host, m.client_id))
    for tp in sorted(set(committed) - assigned):
        rows.append(row(tp, None, None, None))
    return rows


# -- members ---------------------------------------------------------------


def members_columns(verbose: bool, with_instance_ids: bool) -> list[Column]:
    cols = [Column("group", "GROUP", grows=True), Column("consumer_id", "CONSUMER-ID", grows=True)]
    if with_instance_ids:
        cols.append(Column("group_instance_id", "GROUP-INSTANCE-ID", 17, grows=True))
    cols += [Column("host", "HOST", grows=True), Column("client_id", "CLIENT-ID", grows=True),
             Column("partitions", "#PARTITIONS")]
    if verbose:
        cols += [Column("current_epoch", "CURRENT-EPOCH"),
                 Column("current_assignment", "CURRENT-ASSIGNMENT", 20, grows=True),
                 Column("target_epoch", "TARGET-EPOCH"),
                 Column("target_assignment", "TARGET-ASSIGNMENT", 20, grows=True)]
    return cols


def _has_instance_ids(section: Section) -> bool:
    return any(r.get("group_instance_id") for r in section.rows)


def assignment_text(partitions: Sequence[TopicPartition] | None) -> str | None:
    """Kafka's 'topic:0,1;other:2', or None for no partitions."""
    if not partitions:
        return None
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ";".join(f"{t}:{','.join(str(p) for p in sorted(ps))}"
                    for t, ps in sorted(by_topic.items()))


def members_section(group: str, desc: GroupDescription | AdminError) -> Section:
    if isinstance(desc, AdminError):
        return Section(group, error=desc)
    rows = [{
        "group": group, "consumer_id": m.member_id, "group_instance_id": m.group_instance_id,
        "host": m.host, "client_id": m.client_id, "partitions": len(m.assignment),
        "current_epoch": m.member_epoch, "current_assignment": assignment_text(m.assignment),
        "target_epoch": desc.target_assignment_epoch,
        "target_assignment": assignment_text(m.target_assignment),
    } for m in desc.members]
    return Section(group, rows, state=desc.state)


# -- state -----------------------------------------------------------------


def state_section(group: str, desc: GroupDescription | AdminError) -> Section:
    if isinstance(desc, AdminError):
        return Section(group, error=desc)
    c = desc.coordinator
    row = {
        "group": group, "coordinator": f"{c.host}:{c.port}  ({c.node_id})",
        "assignment_strategy": desc.assignment_strategy or None, "state": desc.state,
        "group_epoch": desc.group_epoch, "target_assignment_epoch": desc.target_assignment_epoch,
        "members": len(desc.members),
    }
    extra = {"coordinator": {"id": c.node_id, "host": c.host, "port": c.port}}
    return Section(group, [row], state=desc.state, extra=extra)


def state_columns(verbose: bool) -> list[Column]:
    cols = [Column("group", "GROUP", grows=True),
            Column("coordinator", "COORDINATOR (ID)", 25, grows=True),
            Column("assignment_strategy", "ASSIGNMENT-STRATEGY", 20),
            Column("state", "STATE", 20)]
    if verbose:
        cols += [Column("group_epoch", "GROUP-EPOCH"),
                 Column("target_assignment_epoch", "TARGET-ASSIGNMENT-EPOCH", 25)]
    return cols + [Column("members", "#MEMBERS")]


def emit_states(report: Reporter, output: str, sections: Sequence[Section], verbose: bool) -> None:
    columns = state_columns(verbose)
    if output == "json":
        out = []
        for s in sections:
            if s.error is not None:
                out.append({"group": s.group, "error": error_json(s.error)})
                continue
            row = dict(s.rows[0])
            row["coordinator"] = s.extra["coordinator"]
            out.append(row)
        report.print(json.dumps(out, indent=2))
    elif output == "csv":
        report.print(rows_csv(state_columns(True), [r for s in sections for r in s.rows]))
    else:
        for s in sections:
            if s.error is None:
                report.print()
                for line in format_table(columns, s.rows):
                    report.print(line)
