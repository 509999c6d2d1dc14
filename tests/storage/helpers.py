"""Record types and samples, state folding and crash images shared by the storage tests."""

from __future__ import annotations

import os
import shutil
import stat
import struct
import threading
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from kcsim.storage import Record, RecordLog, RecordType, RecordTypes

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path


# -- record types of the storage tests: storage as a key/value store ------------------


class EntryKey(Struct, frozen=True, array_like=True):
    owner: str
    bucket: str
    slot: int


class EntryValue(Struct, array_like=True):
    position: int
    note: str | None = ""


class Part(Struct, array_like=True):
    name: str
    items: list[int]


class NameKey(Struct, frozen=True, array_like=True):
    name: str


class DocumentValue(Struct, array_like=True):
    blob: bytes
    size: int
    labels: dict[str, str] = {}
    parts: list[Part] = []
    author: str | None = None


class CounterKey(Struct, frozen=True, array_like=True):
    """Encodes exactly like NameKey: only the type id tells the two apart."""

    name: str


class CounterValue(Struct, array_like=True):
    count: int


class PairKey(Struct, frozen=True, array_like=True):
    left: str
    right: int


class PairValue(Struct, array_like=True):
    pairs: list[tuple[str, bytes]]


ENTRY = RecordType(1, "entry", EntryKey, EntryValue)
DOCUMENT = RecordType(2, "document", NameKey, DocumentValue, version=1)
COUNTER = RecordType(3, "counter", CounterKey, CounterValue)
PAIR = RecordType(0xBEEF, "pair", PairKey, PairValue)  # both bytes of the type id in use
TYPES = RecordTypes([ENTRY, DOCUMENT, COUNTER, PAIR])


def open_record_log(path: Path | str, **options: Any) -> RecordLog:
    """A RecordLog of the test record types."""
    return RecordLog.open(path, types=options.pop("types", TYPES), **options)


def one_of_each_type(n: int = 0) -> list[Record]:
    """A record of every test type (values vary with ``n``)."""
    return [
        Record(EntryKey("g", "bucket", n), EntryValue(n, "note")),
        Record(NameKey("d"), DocumentValue(b"\x00\x01blob", n, {"k": "v"},
                                           [Part("p", [0, 1, n])], None if n % 2 else "me")),
        Record(CounterKey("d"), CounterValue(n)),
        Record(PairKey("l", n), PairValue([("a", b"\x00"), ("b", bytes([n % 256]))])),
    ]


def entry(owner: str, slot: int, position: int) -> Record:
    return Record(EntryKey(owner, "bucket", slot), EntryValue(position))


def fold(records: Iterable[Record]) -> dict[Any, Any]:
    """The key -> value map a replay of ``records`` leaves (tombstones delete)."""
    state: dict[Any, Any] = {}
    for record in records:
        if record.value is None:
            state.pop(record.key, None)
        else:
            state[record.key] = record.value
    return state


def frame_starts(path: Path) -> list[int]:
    """Byte offsets of the frames of the segment file ``path``, walked by their lengths."""
    data = path.read_bytes()
    starts, pos = [], 32  # after the segment header
    while pos < len(data):
        starts.append(pos)
        pos += 8 + struct.unpack_from("<I", data, pos)[0]
    return starts


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
