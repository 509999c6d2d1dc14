"""Record samples, state folding and crash images shared by the storage tests."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from typing import TYPE_CHECKING, Any

from kcsim.storage.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberKey,
    ConsumerGroupMemberValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    GroupMemberValue,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    PausedTopic,
    PausedTopicPartitionsKey,
    PausedTopicPartitionsValue,
    Record,
    TopicKey,
    TopicPartitions,
    TopicValue,
)

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

TOPIC_ID = bytes(range(16))


def one_of_each_type(n: int = 0) -> list[Record]:
    """A record of every type (values vary with ``n``)."""
    tps = [TopicPartitions(TOPIC_ID, [0, 1, n])]
    return [
        Record(OffsetCommitKey("g", "t", n), OffsetCommitValue(n, 2, "meta", 1000 + n, -1)),
        Record(GroupMetadataKey("g"), GroupMetadataValue(
            "consumer", n, "range", "m-1", 1234,
            [GroupMemberValue("m-1", None, "client", "/127.0.0.1", 30000, 10000, "consumer",
                              [("range", b"\x00\x01sub")], b"\x00assign")])),
        Record(TopicKey("t"), TopicValue(TOPIC_ID, 3 + n, {"cleanup.policy": "delete"})),
        Record(PausedTopicPartitionsKey("g"), PausedTopicPartitionsValue(
            [PausedTopic(TOPIC_ID, "t", [0, n])])),
        Record(ConsumerGroupMetadataKey("g"), ConsumerGroupMetadataValue(n)),
        Record(ConsumerGroupMemberKey("g", "m"), ConsumerGroupMemberValue(
            "inst", None, "client", "/10.0.0.1", ["t"], None, "uniform", 45000)),
        Record(ConsumerGroupTargetAssignmentMetadataKey("g"),
               ConsumerGroupTargetAssignmentMetadataValue(n)),
        Record(ConsumerGroupTargetAssignmentMemberKey("g", "m"),
               ConsumerGroupTargetAssignmentMemberValue(tps)),
        Record(ConsumerGroupCurrentMemberAssignmentKey("g", "m"),
               ConsumerGroupCurrentMemberAssignmentValue(n, n - 1, 0, tps, [])),
    ]


def offset_commit(group: str, partition: int, offset: int) -> Record:
    return Record(OffsetCommitKey(group, "topic", partition), OffsetCommitValue(offset))


def fold(records: Iterable[Record]) -> dict[Any, Any]:
    """The key -> value map a replay of ``records`` leaves (tombstones delete)."""
    state: dict[Any, Any] = {}
    for record in records:
        if record.value is None:
            state.pop(record.key, None)
        else:
            state[record.key] = record.value
    return state


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir() if p.is_file())


class DurabilityTracker:
    """Wraps os.fsync to remember what a power loss would keep.

    A file keeps the size it had at its last fsync; a directory keeps the
    entries it had at its last fsync. ``crash_image`` builds that state in a
    new directory, which is what the log would find after a power cut.
    """

    def __init__(self, real_fsync) -> None:
        self._real_fsync = real_fsync
        self._lock = threading.Lock()
        self.file_sizes: dict[tuple[int, int], int] = {}
        self.dir_entries: dict[tuple[int, int], dict[str, tuple[int, int]]] = {}
        self.file_fsyncs = 0
        self.dir_fsyncs = 0

    def fsync(self, fd: int) -> None:
        self._real_fsync(fd)
        st = os.fstat(fd)
        ident = (st.st_dev, st.st_ino)
        with self._lock:
            if stat.S_ISDIR(st.st_mode):
                self.dir_fsyncs += 1
                entries = {}
                path = os.readlink(f"/proc/self/fd/{fd}")
                for name in os.listdir(path):
                    try:
                        est = os.stat(os.path.join(path, name))
                    except FileNotFoundError:
                        continue
                    entries[name] = (est.st_dev, est.st_ino)
                self.dir_entries[ident] = entries
            else:
                self.file_fsyncs += 1
                self.file_sizes[ident] = st.st_size

    def crash_image(self, directory: Path, target: Path) -> Path:
        st = os.stat(directory)
        entries = self.dir_entries.get((st.st_dev, st.st_ino), {})
        target.mkdir(parents=True)
        for name, ident in entries.items():
            source = directory / name
            keep = self.file_sizes.get(ident, 0)
            try:
                with open(source, "rb") as f:
                    data = f.read(keep)
            except (FileNotFoundError, IsADirectoryError):
                continue
            (target / name).write_bytes(data)
        return target


def copy_dir(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target
