"""--reset-offsets: plan new offsets per group, show them, and commit them with --execute.

As in Kafka, an inactive group (Empty, or unknown) can be reset. An active group can
be reset only for partitions it has paused (KIP-1249, kcsim); any other partition in
scope is named in the refusal and nothing of that group changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kcsim.admin import (
    AdminClient,
    AdminError,
    GroupDescription,
    OffsetAndMetadata,
    OffsetSpec,
    StreamsGroupDescription,
    TopicPartition,
)

from .groups import describe_all, target_groups
from .progress import tracked
from .render import Column, Section, format_table, rows_csv, sections_json
from .report import Reporter, UsageError
from .scope import (
    missing_partitions,
    parse_reset_plan,
    partitions_do_not_exist,
    resolve_partitions,
)
from .timespec import now_ms, parse_datetime_ms, parse_duration

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .options import Options

INACTIVE = ("Empty", "Dead")
NO_EXECUTE_WARNING = (
    "WARN: No action will be performed as the --execute option is missing. In a future major "
    "release, the default behavior of this command will be to prompt the user before executing "
    "the reset rather than doing a dry run. You should add the --dry-run option explicitly if "
    "you are scripting this command and want to keep the current default behavior without "
    "prompting."
)

Plan = dict[TopicPartition, int]


class Refused(Exception):
    """The group's state forbids this reset; the message says why."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class Planner:
    """Computes one group's new offsets for the chosen scenario."""

    def __init__(self, admin: AdminClient, opts: Options, report: Reporter) -> None:
        self.admin = admin
        self.opts = opts
        self.report = report
        self.timeout = opts.timeout_s

    def offsets(self, partitions: list[TopicPartition], spec: int) -> dict[TopicPartition, int]:
        found = self.admin.list_offsets(dict.fromkeys(partitions, spec), timeout=self.timeout)
        return {tp: found[tp].offset for tp in partitions}

    def clamp(self, requested: Plan) -> Plan:
        """Offsets outside [earliest, latest] move to the nearest end, with Kafka's warnings."""
        partitions = list(requested)
        starts = self.offsets(partitions, OffsetSpec.EARLIEST)
        ends = self.offsets(partitions, OffsetSpec.LATEST)
        out = {}
        for tp, offset in requested.items():
            if offset > ends[tp]:
                self.report.warn(f"New offset ({offset}) is higher than latest offset for topic "
                                 f"partition {tp}. Value will be set to {ends[tp]}.")
                offset = ends[tp]
            elif offset < starts[tp]:
                self.report.warn(f"New offset ({offset}) is lower than earliest offset for topic "
                                 f"partition {tp}. Value will be set to {starts[tp]}.")
                offset = starts[tp]
            out[tp] = offset
        return out

    def at_timestamp(self, partitions: list[TopicPartition], timestamp_ms: int) -> Plan:
        found = self.offsets(partitions, timestamp_ms)
        empty = [tp for tp, offset in found.items() if offset < 0]
        for tp in empty:
            # On stdout, before the plan, as Kafka's tool prints it.
            self.report.print(f"\nWarn: Partition {tp.partition} from topic {tp.topic} is empty. "
                             "Falling back to latest known offset.")
        if empty:
            found.update(self.offsets(empty, OffsetSpec.LATEST))
        return found

    def plan(self, partitions: list[TopicPartition], committed: dict[TopicPartition, int],
             from_file: Plan | None) -> Plan:
        scenario, value = self.opts.scenario, self.opts.scenario_value
        if scenario == "to_earliest":
            return self.offsets(partitions, OffsetSpec.EARLIEST)
        if scenario == "to_latest":
            return self.offsets(partitions, OffsetSpec.LATEST)
        if scenario == "to_current":
            without = [tp for tp in partitions if tp not in committed]
            latest = self.offsets(without, OffsetSpec.LATEST) if without else {}
            return {tp: committed[tp] if tp in committed else latest[tp] for tp in partitions}
        if scenario == "to_offset":
            return self.clamp(dict.fromkeys(partitions, value))
        if scenario == "shift_by":
            for tp in partitions:
                if tp not in committed:
                    raise UsageError(f"Cannot shift offset for partition {tp} since there is no "
                                     "current committed offset")
            return self.clamp({tp: committed[tp] + value for tp in partitions})
        if scenario == "to_datetime":
            return self.at_timestamp(partitions, parse_datetime_ms(value))
        if scenario == "by_duration":
            ago = parse_duration(value)
            return self.at_timestamp(partitions, now_ms() - int(ago.total_seconds() * 1000))
        assert scenario == "from_file" and from_file is not None
        return self.clamp(from_file)


def reset_offsets(admin: AdminClient, opts: Options, report: Reporter) -> None:
    if not opts.execute and not opts.dry_run:
        report.warn(NO_EXECUTE_WARNING)
    file_plan = reset_inputs(opts)
    groups = target_groups(admin, opts)
    described = describe_all(admin, groups, opts.timeout_s)
    print_plan(report, opts, plan_resets(admin, opts, report, groups, described, file_plan))


def plan_resets(
    admin: AdminClient, opts: Options, report: Reporter, groups: Sequence[str],
    described: Mapping[str, GroupDescription | StreamsGroupDescription | AdminError],
    file_plan: dict[str, Plan] | None,
) -> list[Section]:
    """Plan (and with --execute commit) each described group's new offsets: one section per
    group, its rows the plan. A streams group's --all-topics are its committed offsets of
    the topics its topology reads."""
    topic_scope = (resolve_partitions(admin, opts.topics, opts.timeout_s)
                   if opts.topics else None)
    planner = Planner(admin, opts, report)
    sections: list[Section] = []
    for group in tracked(groups, "resetting offsets"):
        section = Section(group)
        sections.append(section)
        try:
            desc = described[group]
            if isinstance(desc, AdminError) and not desc.not_found:
                raise desc
            state = "Dead" if isinstance(desc, AdminError) else desc.state
            section.state = state
            inputs = desc.source_topics if isinstance(desc, StreamsGroupDescription) else None
            plan = _plan_group(admin, opts, planner, group, state, topic_scope, file_plan,
                               inputs)
            if plan is None:
                continue
            section.rows = [{"group": group, "topic": tp.topic, "partition": tp.partition,
                             "new_offset": offset} for tp, offset in sorted(plan.items())]
            if opts.execute and plan:
                _execute(admin, opts, report, group, plan)
            section.extra["executed"] = opts.execute
        except Refused as refusal:
            section.extra["refused"] = str(refusal)
            report.refuse(str(refusal), refusal.hint)
        except AdminError as exc:
            section.error = exc
            report.error(exc, f"group '{group}'")
    return sections


def reset_inputs(opts: Options) -> dict[str, Plan] | None:
    """Check the time arguments and read --from-file's plan (None without one) before
    anything is asked of the broker; a bad one is a usage error."""
    try:
        if opts.scenario == "to_datetime":
            parse_datetime_ms(opts.scenario_value)
        elif opts.scenario == "by_duration":
            parse_duration(opts.scenario_value)
        if opts.scenario != "from_file":
            return None
        return parse_reset_plan(Path(opts.scenario_value).read_text(), opts.groups)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from None


def _plan_group(
    admin: AdminClient, opts: Options, planner: Planner, group: str, state: str,
    topic_scope: list[TopicPartition] | None, file_plan: dict[str, Plan] | None,
    inputs: set[str] | None = None,
) -> Plan | None:
    committed_all = admin.list_group_offsets(group, timeout=opts.timeout_s)[group]
    committed = {tp: om.offset for tp, om in committed_all.items()
                 if inputs is None or tp.topic in inputs}
    from_file = None
    if file_plan is not None:
        from_file = file_plan.get(group)
        if from_file is None:
            planner.report.warn(f"Error: No reset plan for group {group} found.")
            return None
        partitions = list(from_file)
    elif opts.all_topics:
        partitions = list(committed)
    else:
        assert topic_scope is not None
        partitions = list(topic_scope)
    missing = missing_partitions(admin, partitions, opts.timeout_s) if partitions else []
    if missing:
        raise partitions_do_not_exist(missing)
    if state not in INACTIVE:
        require_paused(admin, opts, group, state, partitions)
    return planner.plan(partitions, committed, from_file) if partitions else {}


def require_paused(
    admin: AdminClient, opts: Options, group: str, state: str, partitions: list[TopicPartition]
) -> None:
    """An active group may be reset only where it has paused its partitions (KIP-1249)."""
    kafka_says = (f"Assignments can only be reset if the group '{group}' is inactive, "
                  f"but the current state is {state}.")
    if not admin.supports_pause(timeout=opts.timeout_s):
        raise Refused(kafka_says, "stop the group's consumers first")
    paused = admin.list_paused_partitions(group, timeout=opts.timeout_s)
    topic_flag = "--input-topic" if opts.kind == "streams" else "--topic"
    not_paused = [tp for tp in partitions if tp not in paused]
    if not_paused:
        names = ", ".join(str(tp) for tp in sorted(not_paused))
        raise Refused(
            f"{kafka_says} These partitions are not paused: {names}.",
            f"pause them first (--pause --group {group} {topic_flag} TOPIC:PARTITIONS), "
            "or stop the group's consumers")


def _execute(admin: AdminClient, opts: Options, report: Reporter, group: str, plan: Plan) -> None:
    results = admin.alter_group_offsets(
        group, {tp: OffsetAndMetadata(offset) for tp, offset in plan.items()},
        timeout=opts.timeout_s)
    for tp, error in results.failed.items():
        report.error(error, f"group '{group}', partition {tp}")


def print_plan(report: Reporter, opts: Options, sections: list[Section]) -> None:
    rows = [r for s in sections for r in s.rows]
    if opts.export:
        with_group = len(opts.groups) != 1
        for r in rows:
            fields = [r["topic"], r["partition"], r["new_offset"]]
            report.print(",".join(str(f) for f in ([r["group"]] if with_group else []) + fields))
        return
    if opts.output == "json":
        report.print(sections_json(sections, "partitions"))
        return
    columns = [Column("group", "GROUP", grows=True), Column("topic", "TOPIC", grows=True),
               Column("partition", "PARTITION", 10), Column("new_offset", "NEW-OFFSET")]
    if opts.output == "csv":
        report.print(rows_csv(columns, rows))
    elif rows:
        report.print()
        for line in format_table(columns, rows):
            report.print(line)
