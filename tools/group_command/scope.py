"""Which partitions a command touches: --topic arguments, whole topics, and reset plan files."""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING

from kcsim.admin import AdminClient, AdminError, TopicPartition
from kcsim.protocol.errors import ErrorCode

from .report import UsageError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


def parse_topic_arg(arg: str) -> tuple[str, list[int] | None]:
    """'topic' (every partition) or 'topic:0,1,2'."""
    if ":" not in arg:
        return arg, None
    pieces = arg.split(":")
    if len(pieces) != 2 or not pieces[0]:
        raise UsageError(f"Invalid topic arg '{arg}', expected topic name and partitions")
    topic, partitions = pieces
    out = []
    for p in partitions.split(","):
        try:
            out.append(int(p))
        except ValueError:
            raise UsageError(f"Invalid partition '{p}' specified in topic arg '{arg}'") from None
    return topic, out


def parse_topic_args(args: Iterable[str]) -> list[tuple[str, list[int] | None]]:
    return [parse_topic_arg(a) for a in args]


def resolve_partitions(
    admin: AdminClient, topic_args: Sequence[str], timeout: float
) -> list[TopicPartition]:
    """The partitions --topic names; a whole topic means all its partitions."""
    parsed = parse_topic_args(topic_args)
    whole = [t for t, ps in parsed if ps is None]
    described = admin.describe_topics(whole, timeout=timeout) if whole else None
    out: list[TopicPartition] = []
    for topic, partitions in parsed:
        if partitions is None:
            assert described is not None
            error = described.error(topic)
            if error is not None:
                if error.not_found:
                    raise AdminError(error.code, f"The topic '{topic}' does not exist")
                raise error
            out.extend(described[topic].topic_partitions)
        else:
            out.extend(TopicPartition(topic, p) for p in partitions)
    return list(dict.fromkeys(out))


def missing_partitions(
    admin: AdminClient, partitions: Iterable[TopicPartition], timeout: float
) -> list[TopicPartition]:
    """The partitions among these that do not exist."""
    partitions = list(partitions)
    topics = admin.describe_topics({tp.topic for tp in partitions}, timeout=timeout)
    existing: set[TopicPartition] = set()
    for topic in topics:
        error = topics.error(topic)
        if error is None:
            existing.update(topics[topic].topic_partitions)
        elif not error.not_found:
            raise error
    return [tp for tp in partitions if tp not in existing]


def partitions_do_not_exist(missing: Sequence[TopicPartition]) -> AdminError:
    names = ",".join(str(tp) for tp in missing)
    return AdminError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f'The partitions "{names}" do not exist')


def parse_reset_plan(text: str, groups: Sequence[str]) -> dict[str, dict[TopicPartition, int]]:
    """A CSV as --export writes it: 'topic,partition,offset' (one --group) or
    'group,topic,partition,offset'."""
    plan: dict[str, dict[TopicPartition, int]] = {}
    for number, fields in enumerate(csv.reader(io.StringIO(text)), start=1):
        fields = [f.strip() for f in fields]
        if not any(fields):
            continue
        try:
            if len(fields) == 3:
                if len(groups) != 1:
                    raise UsageError(f"line {number} of the reset plan has no group; "
                                     "that format needs exactly one --group")
                group, (topic, partition, offset) = groups[0], fields
            elif len(fields) == 4:
                group, topic, partition, offset = fields
            else:
                raise ValueError
            plan.setdefault(group, {})[TopicPartition(topic, int(partition))] = int(offset)
        except ValueError:
            raise UsageError(f"line {number} of the reset plan is not "
                             "'[group,]topic,partition,offset'") from None
    return plan
