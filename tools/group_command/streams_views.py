"""--list and --describe of streams groups, printed as Kafka's kafka-streams-groups prints them.

Kafka's tool formats each table with printf: a column is as wide as its longest value
(at least 15), some have fixed widths, and the last is not padded; the same format
strings are used here. Where Kafka's tool prints rows in hash order, these are sorted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.admin import AdminError, OffsetSpec, StreamsGroupDescription, TopicPartition

from .groups import groups_of_kind, target_groups

if TYPE_CHECKING:
    from kcsim.admin import AdminClient, StreamsMemberDescription, TaskAssignment, TaskIds

    from .options import Options
    from .report import Reporter

MIN_WIDTH = 15


def _width(values: list[str], least: int = MIN_WIDTH) -> int:
    return max([least] + [len(v) for v in values])


def list_groups(admin: AdminClient, opts: Options, report: Reporter) -> None:
    listings = groups_of_kind(admin, "streams", opts.timeout_s)
    if opts.states:
        listings = [g for g in listings if g.state in opts.states]
    if not opts.show_state:
        for listing in listings:
            report.print(listing.group_id)
        return
    fmt = f"%-{_width([g.group_id for g in listings])}s %s"
    report.print(fmt % ("GROUP", "STATE"))
    for g in listings:
        report.print(fmt % (g.group_id, g.state or "Unknown"))


def describe(admin: AdminClient, opts: Options, report: Reporter) -> None:
    for group in target_groups(admin, opts):
        try:
            desc = admin.describe_streams_groups(group, timeout=opts.timeout_s)[group]
        except AdminError as exc:
            if exc.not_found:
                report.not_found(f"{opts.title} '{group}' does not exist.")
            else:
                report.error(exc, f"group '{group}'")
            continue
        if opts.view == "state":
            _announce(report, desc)
            print_state(report, desc, opts.verbose)
        elif desc.members:  # Kafka's tool prints nothing for a group without members
            _announce(report, desc)
            if opts.view == "members":
                print_members(report, desc, opts.verbose)
            else:
                print_offsets(report, desc, offsets_of(admin, desc, opts.timeout_s), opts.verbose)
        else:
            _announce(report, desc)


def _announce(report: Reporter, desc: StreamsGroupDescription) -> None:
    """Kafka's note on a group without members (on stderr here, with kcsim's other notes)."""
    if desc.state == "Empty":
        report.warn(f"\nStreams group '{desc.group_id}' has no active members.")


# -- --state ---------------------------------------------------------------


def print_state(report: Reporter, desc: StreamsGroupDescription, verbose: bool) -> None:
    c = desc.coordinator
    coordinator = f"{c.host}:{c.port} ({c.node_id})"
    assignor = desc.assignor or "-"
    head = (f"%-{_width([desc.group_id])}s %-{_width([coordinator], 25)}s "
            f"%-{_width([assignor])}s %-25s ")
    if verbose:
        fmt = head + "%-15s %-25s %s"
        report.print(fmt % ("GROUP", "COORDINATOR (ID)", "ASSIGNOR", "STATE", "GROUP-EPOCH",
                            "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"))
        report.print(fmt % (desc.group_id, coordinator, assignor, desc.state, desc.group_epoch,
                            desc.target_assignment_epoch, len(desc.members)))
    else:
        fmt = head + "%s"
        report.print(fmt % ("GROUP", "COORDINATOR (ID)", "ASSIGNOR", "STATE", "#MEMBERS"))
        report.print(fmt % (desc.group_id, coordinator, assignor, desc.state, len(desc.members)))


# -- --members -------------------------------------------------------------


def tasks_text(tasks: tuple[TaskIds, ...], kind: str) -> str:
    """Kafka's 'ACTIVE: 0:[1,2]; 1:[0]; ' for one kind of tasks ('' for none)."""
    if not tasks:
        return ""
    return f"{kind}: " + "".join(
        f"{t.subtopology_id}:[{','.join(str(p) for p in t.partitions)}]; " for t in tasks)


def assignment_text(assignment: TaskAssignment, prefix: str = "") -> str:
    return (tasks_text(assignment.active, prefix + "ACTIVE")
            + tasks_text(assignment.standby, prefix + "STANDBY")
            + tasks_text(assignment.warmup, prefix + "WARMUP"))


def print_members(report: Reporter, desc: StreamsGroupDescription, verbose: bool) -> None:
    members = desc.members
    g = _width([desc.group_id])
    m = _width([x.member_id for x in members])
    p = _width([x.process_id for x in members])
    c = _width([x.client_id for x in members])
    if not verbose:
        fmt = f"%-{g}s %-{m}s %-{p}s %-{c}s %s"
        report.print(fmt % ("GROUP", "MEMBER", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"))
        for x in members:
            report.print(fmt % (desc.group_id, x.member_id, x.process_id, x.client_id,
                                assignment_text(x.assignment)))
        return
    # As Kafka's format: no blank between TOPOLOGY-EPOCH and MEMBER.
    fmt = f"%-{g}s %-25s %-15s%-{m}s %-15s %-15s %-{p}s %-{c}s %s"
    report.print(fmt % ("GROUP", "TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER",
                        "MEMBER-PROTOCOL", "MEMBER-EPOCH", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"))
    for x in members:
        report.print(fmt % (desc.group_id, desc.target_assignment_epoch, desc.topology_epoch,
                            x.member_id, _protocol(x), x.member_epoch, x.process_id, x.client_id,
                            assignment_text(x.assignment)
                            + assignment_text(x.target_assignment, "TARGET-")))


def _protocol(member: StreamsMemberDescription) -> str:
    return "classic" if member.is_classic else "streams"


# -- --offsets -------------------------------------------------------------


def offsets_of(
    admin: AdminClient, desc: StreamsGroupDescription, timeout: float
) -> dict[TopicPartition, tuple[int | None, int | None, int, int]]:
    """For each partition an active task reads: (committed offset, its leader epoch, log end,
    lag). Lag is from the committed offset, or from the log start when there is none."""
    partitions = sorted({tp for m in desc.members for tp in desc.partitions_of(m.assignment.active)})
    if not partitions:
        return {}
    starts = admin.list_offsets(dict.fromkeys(partitions, OffsetSpec.EARLIEST), timeout=timeout)
    ends = admin.list_offsets(dict.fromkeys(partitions, OffsetSpec.LATEST), timeout=timeout)
    committed = admin.list_group_offsets(desc.group_id, timeout=timeout)[desc.group_id]
    out = {}
    for tp in partitions:
        om = committed.get(tp) if tp.topic in desc.source_topics else None
        end = ends[tp].offset
        current = om.offset if om is not None else None
        lag = end - (current if current is not None else starts[tp].offset)
        out[tp] = (current, om.leader_epoch if om is not None else None, end, lag)
    return out


def print_offsets(
    report: Reporter, desc: StreamsGroupDescription,
    offsets: dict[TopicPartition, tuple[int | None, int | None, int, int]], verbose: bool,
) -> None:
    g = _width([desc.group_id])
    t = _width([tp.topic for tp in offsets])
    if not verbose:
        fmt = f"%-{g}s %-{t}s %-10s %s"
        report.print(fmt % ("GROUP", "TOPIC", "PARTITION", "OFFSET-LAG"))
        for tp, (_, _, _, lag) in offsets.items():
            report.print(fmt % (desc.group_id, tp.topic, tp.partition, lag))
        return
    fmt = f"%-{g}s %-{t}s %-10s %-15s %-15s %-15s %-15s"
    report.print(fmt % ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LEADER-EPOCH",
                        "LOG-END-OFFSET", "OFFSET-LAG"))
    for tp, (current, epoch, end, lag) in offsets.items():
        report.print(fmt % (desc.group_id, tp.topic, tp.partition, _dash(current), _dash(epoch),
                            end, lag))


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)
