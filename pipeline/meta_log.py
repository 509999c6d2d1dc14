"""The coordinator's record log under ``<data-dir>/meta``, read one segment at a time.

Planning lists the segments as a read-only open of the log sees them (headers
checked, a committed compaction's outputs in place of its inputs), each with
its place in the chain. Reading a segment goes through storage's own reader
(``kcsim.storage.judge_segment``): the replay's scan validates it, start-up's
judge decides what stopped the scan and the replay's decoders decode it. The
torn tail of the last segment ends the read and is reported as a :class:`Tear`;
damage anywhere else, a record that does not decode or one this kcsim cannot
read raises the error the server would refuse to start with. Nothing on disk
is changed, so a live server's data directory can be read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kcsim.storage import SEGMENT_HEADER_SIZE, RecordLog, SegmentPlace, judge_segment

from .registry import TopicKey, record_types

if TYPE_CHECKING:
    from collections.abc import Iterator

    from kcsim.storage import JudgedSegment, PlacedRecord, RawRecord, RecordTypes


@dataclass(frozen=True)
class Tear:
    """Where a read stopped short: the torn tail a server's start-up would cut."""

    path: str
    position: int  # byte offset of the first invalid frame
    reason: str
    dropped_bytes: int


def meta_dir(data_dir: str | os.PathLike[str]) -> str:
    return os.path.join(os.fspath(data_dir), "meta")


def plan_segments(data_dir: str | os.PathLike[str]) -> list[SegmentPlace]:
    """The segments of the data directory's record log, oldest first (none if it has no log)."""
    directory = meta_dir(data_dir)
    if not os.path.isdir(directory):
        return []
    with RecordLog.open(directory, types=record_types(), read_only=True) as log:
        return log.places()


@dataclass
class SegmentRead:
    """What reading one segment found besides its records."""

    segment: SegmentPlace
    records: int = 0
    valid_bytes: int = SEGMENT_HEADER_SIZE
    file_bytes: int = 0
    tear: Tear | None = field(default=None)


def judged(segment: SegmentPlace, read: SegmentRead,
           types: RecordTypes | None = None) -> JudgedSegment:
    """The segment read and judged as start-up judges it; fills ``read`` (its torn tail
    included) and raises what start-up would refuse to start with."""
    found = judge_segment(segment, types or record_types())
    verdict = found.verdict
    read.records, read.valid_bytes = verdict.records, verdict.valid_bytes
    read.file_bytes = verdict.file_bytes
    verdict.raise_damage()
    if verdict.torn_tail is not None:
        read.tear = Tear(segment.path, verdict.valid_bytes, verdict.torn_tail,
                         verdict.file_bytes - verdict.valid_bytes)
    return found


def decoded_records(segment: SegmentPlace, read: SegmentRead, types: RecordTypes | None = None,
                    wanted: frozenset[int] | None = None) -> Iterator[PlacedRecord]:
    """(position, frame timestamp ms, record) of every record (of the ``wanted`` type ids,
    the others skipped undecoded). Fills ``read``; raises where start-up would refuse."""
    return judged(segment, read, types).records(wanted)


def raw_records(segment: SegmentPlace, read: SegmentRead,
                types: RecordTypes | None = None) -> Iterator[RawRecord]:
    """(position, timestamp ms, type id, value version, key, value or None) as encoded,
    a batch frame's records split out as compaction splits them."""
    return judged(segment, read, types).raw_records()


def topic_names(data_dir: str | os.PathLike[str], *, strict: bool = True) -> dict[bytes, str]:
    """Topic id -> name of the topics the log holds now (deleted ones left out).

    Only the topic records are decoded (with the replay's codecs); the other
    frames are validated by the same scan and skipped. Damage raises as in a
    read, or with ``strict=False`` ends the walk there (for diagnostics).
    """
    types = record_types()
    topic_type = frozenset((types.by_key[TopicKey].id,))
    ids: dict[str, bytes] = {}
    for segment in plan_segments(data_dir):
        found = judge_segment(segment, types)
        damaged = found.verdict.damage is not None
        if damaged and strict:
            found.verdict.raise_damage()
        for _position, _timestamp, record in found.records(topic_type):
            if record.value is None:
                ids.pop(record.key.name, None)
            else:
                ids[record.key.name] = record.value.topic_id
        if found.verdict.valid_bytes < found.verdict.file_bytes:
            break  # the walk stopped short of the file's end: nothing after it is read
    return {topic_id: name for name, topic_id in ids.items()}
