"""What `kcsim share-groups` does, printed as Kafka's kafka-share-groups prints it.

Kafka's tool formats each table with printf: a column is as wide as its longest value
(at least 15), some have fixed widths, every line starts with a newline and the table
ends with one; the same format strings are used here. Its errors go to stdout as
"Error: ..."; the exit codes are kcsim's (see `report.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.admin import AdminError, TopicPartition
from kcsim.protocol.errors import ErrorCode

from .groups import groups_of_kind, target_groups
from .render import Section
from .reset import Planner, print_plan, reset_inputs
from .scope import missing_partitions, partitions_do_not_exist, resolve_partitions

if TYPE_CHECKING:
    from kcsim.admin import AdminClient, ShareGroupDescription, SharePartitionOffset

    from .options import Options
    from .report import Reporter

MIN_WIDTH = 15
MISSING = "-"
INACTIVE = ("Empty", "Dead")


def _w(values: list[str], least: int = MIN_WIDTH) -> int:
    return max([least] + [len(v) for v in values])


def _table(report: Reporter, fmt: str, rows: list[tuple[object, ...]]) -> None:
    """Kafka's printf("\\n" + fmt) per line, then println: a blank line before the table."""
    report.print()
    for row in rows:
        report.print(fmt % row)


# -- --list ----------------------------------------------------------------------------


def list_groups(admin: AdminClient, opts: Options, report: Reporter) -> None:
    listings = groups_of_kind(admin, "share", opts.timeout_s)
    if not opts.show_state:
        for listing in listings:
            report.print(listing.group_id)
        return
    if opts.states:
        listings = [g for g in listings if g.state in opts.states]
    fmt = f"%-{_w([g.group_id for g in listings])}s %s"
    report.print(fmt % ("GROUP", "STATE"))
    for g in listings:
        report.print(fmt % (g.group_id, g.state or "Unknown"))


# -- --describe ------------------------------------------------------------------------


def describe(admin: AdminClient, opts: Options, report: Reporter) -> None:
    for group in sorted(target_groups(admin, opts)):
        try:
            desc = admin.describe_share_groups(group, timeout=opts.timeout_s)[group]
        except AdminError as exc:
            if exc.not_found:
                report.not_found(f"Share group '{group}' does not exist.")
            else:
                report.error(exc, f"group '{group}'")
            continue
        if opts.view == "members":
            _members(report, desc, opts.verbose)
        elif opts.view == "state":
            _empty_note(report, desc)
            _state(report, desc, opts.verbose)
        else:
            offsets = admin.list_share_group_offsets(group, timeout=opts.timeout_s)[group]
            _offsets(report, group, offsets, opts.verbose)


def _empty_note(report: Reporter, desc: ShareGroupDescription) -> None:
    if desc.state == "Empty":
        report.warn(f"\nShare group '{desc.group_id}' has no active members.")


def _offsets(report: Reporter, group: str, offsets: dict[TopicPartition, SharePartitionOffset],
             verbose: bool) -> None:
    if not offsets:
        report.print(f"\nShare group '{group}' has no offset information.")
        return
    g, t = _w([group]), _w([tp.topic for tp in offsets])
    head = ("GROUP", "TOPIC", "PARTITION")
    rows: list[tuple[object, ...]] = []
    for tp, info in sorted(offsets.items()):
        known = info.start_offset >= 0
        start = str(info.start_offset) if known else MISSING
        lag = str(info.lag) if known and info.lag >= 0 else MISSING
        epoch = str(info.leader_epoch) if known and info.leader_epoch is not None else MISSING
        rows.append((group, tp.topic, tp.partition) + ((epoch,) if verbose else ()) + (start, lag))
    if verbose:
        fmt = f"%-{g}s %-{t}s %-10s %-13s %-13s %s"
        rows.insert(0, head + ("LEADER-EPOCH", "START-OFFSET", "LAG"))
    else:
        fmt = f"%-{g}s %-{t}s %-10s %-13s %s"
        rows.insert(0, head + ("START-OFFSET", "LAG"))
    _table(report, fmt, rows)


def _state(report: Reporter, desc: ShareGroupDescription, verbose: bool) -> None:
    c = desc.coordinator
    coordinator = f"{c.host}:{c.port}  ({c.node_id})"
    g, w = _w([desc.group_id]), _w([coordinator], 25)
    rows: list[tuple[object, ...]]
    if verbose:
        fmt = f"%-{g}s %-{w}s %-15s %-12s %-17s %s"
        rows = [("GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH",
                 "#MEMBERS"),
                (desc.group_id, coordinator, desc.state, desc.group_epoch,
                 desc.target_assignment_epoch, len(desc.members))]
    else:
        fmt = f"%-{g}s %-{w}s %-15s %s"
        rows = [("GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS"),
                (desc.group_id, coordinator, desc.state, len(desc.members))]
    _table(report, fmt, rows)


def _members(report: Reporter, desc: ShareGroupDescription, verbose: bool) -> None:
    _empty_note(report, desc)
    if not desc.members:
        return
    members = sorted(desc.members, key=lambda m: m.member_id)
    g = _w([desc.group_id])
    i, h, c = (_w([m.member_id for m in members]), _w([m.host for m in members]),
               _w([m.client_id for m in members]))
    head: tuple[object, ...] = ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
    if verbose:
        fmt = f"%-{g}s %-{i}s %-{h}s %-{c}s %-12s %-13s %s"
        rows = [head + ("MEMBER-EPOCH", "ASSIGNMENT")] + [
            (desc.group_id, m.member_id, m.host, m.client_id, len(m.assignment), m.member_epoch,
             _assignment(m.assignment)) for m in members]
    else:
        fmt = f"%-{g}s %-{i}s %-{h}s %-{c}s %-12s %s"
        rows = [head + ("ASSIGNMENT",)] + [
            (desc.group_id, m.member_id, m.host, m.client_id, len(m.assignment),
             _assignment(m.assignment)) for m in members]
    _table(report, fmt, rows)


def _assignment(assigned: tuple[TopicPartition, ...]) -> str:
    by_topic: dict[str, list[int]] = {}
    for tp in assigned:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ";".join(sorted(f"{t}:" + ",".join(str(p) for p in sorted(ps))
                           for t, ps in by_topic.items()))


# -- --delete and --delete-offsets -----------------------------------------------------


def delete_groups(admin: AdminClient, opts: Options, report: Reporter) -> None:
    """Kafka's checks on the listing first (not a share group, not empty), then DeleteGroups."""
    listed = {g.group_id: g.state for g in groups_of_kind(admin, "share", opts.timeout_s)}
    wanted = list(listed if opts.all_groups else dict.fromkeys(opts.groups))
    failed: dict[str, str] = {}
    for group in wanted:
        if group not in listed:
            failed[group] = ("org.apache.kafka.common.errors.GroupIdNotFoundException: "
                             f"Group '{group}' is not a share group.")
        elif listed[group] == "Dead":
            failed[group] = f"java.lang.IllegalStateException: Share group '{group}' group state is DEAD."
        elif listed[group] not in INACTIVE:
            failed[group] = ("org.apache.kafka.common.errors.GroupNotEmptyException: "
                             f"Share group '{group}' is not EMPTY.")
    to_delete = [g for g in wanted if g not in failed]
    deleted: list[str] = []
    if to_delete:
        outcomes = admin.delete_groups(to_delete, timeout=opts.timeout_s)
        for group in to_delete:
            error = outcomes.error(group)
            if error is None:
                deleted.append(group)
            else:
                failed[group] = f"{error.name}: {error.message}"
    names = ", ".join(f"'{g}'" for g in deleted)
    if not failed:
        report.print(f"Deletion of requested share groups ({names}) was successful.")
        return
    report.print("\nError: Deletion of some share groups failed:")
    for group, why in failed.items():
        report.print(f"* Group '{group}' could not be deleted due to: {why}")
    if deleted:
        report.print(f"\nThese share groups were deleted successfully: {names}")
    report.fail(3 if all("GroupIdNotFound" in why for why in failed.values()) else 4)


def delete_offsets(admin: AdminClient, opts: Options, report: Reporter) -> None:
    group = opts.groups[0]
    topics = list(dict.fromkeys(opts.topics))
    try:
        outcomes = admin.delete_share_group_offsets(group, topics, timeout=opts.timeout_s)
        results = {t: outcomes.error(t) for t in topics}
    except AdminError as exc:
        report.print(f"\nError: {exc.message}")
        report.fail(3 if exc.not_found else 4 if exc.code == ErrorCode.NON_EMPTY_GROUP else 1)
        results = dict.fromkeys(topics, exc)
    fmt = f"%-{_w(topics)}s %s"
    report.print()
    report.print(fmt % ("TOPIC", "STATUS"), )
    for topic in sorted(results):
        error = results[topic]
        report.print(fmt % (topic, "Successful" if error is None else f"Error: {error.message}"))
        if error is not None and error.code != ErrorCode.NON_EMPTY_GROUP:
            report.fail(3 if error.not_found else 1)


# -- --reset-offsets -------------------------------------------------------------------


def reset_offsets(admin: AdminClient, opts: Options, report: Reporter) -> None:
    """One group, Empty or unknown; without --execute only the plan (Kafka's dry run)."""
    group = opts.groups[0]
    file_plan = reset_inputs(opts)
    try:
        state = admin.describe_share_groups(group, timeout=opts.timeout_s)[group].state
    except AdminError as exc:
        if not exc.not_found:
            raise
        state = "Dead"
    if state not in INACTIVE:
        report.refuse(f"Share group '{group}' is not empty.")
        return
    current = {tp: o.start_offset for tp, o in
               admin.list_share_group_offsets(group, timeout=opts.timeout_s)[group].items()
               if o.start_offset >= 0}
    from_file = None if file_plan is None else file_plan.get(group, {})
    if from_file is not None:
        partitions = list(from_file)
    elif opts.all_topics:
        partitions = list(admin.list_share_group_offsets(group, timeout=opts.timeout_s)[group])
    else:
        partitions = resolve_partitions(admin, opts.topics, opts.timeout_s)
    missing = missing_partitions(admin, partitions, opts.timeout_s) if partitions else []
    if missing:
        raise partitions_do_not_exist(missing)
    plan = Planner(admin, opts, report).plan(partitions, current, from_file) if partitions else {}
    if opts.execute and plan:
        for tp, error in admin.alter_share_group_offsets(
                group, plan, timeout=opts.timeout_s).failed.items():
            report.error(error, f"group '{group}', partition {tp}")
    section = Section(group, state=state, rows=[
        {"group": group, "topic": tp.topic, "partition": tp.partition, "new_offset": offset}
        for tp, offset in sorted(plan.items())])
    print_plan(report, opts, [section])
