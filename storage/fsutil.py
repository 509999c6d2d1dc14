"""Small filesystem helpers for durable directory changes.

A rename or a new file only survives a power loss once its directory has been
fsynced; these helpers keep that rule in one place.
"""

from __future__ import annotations

import os


def fsync_dir(directory: str) -> None:
    """Make the directory's entries (creates, renames, unlinks) durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_path(path: str) -> bool:
    """Fsync a file by name; False if it no longer exists (e.g. compacted away)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def write_file_durably(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` and fsync it (the caller renames or syncs the dir)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_durably(tmp_path: str, final_path: str) -> None:
    """Atomically move a fully written file into place and persist the rename."""
    os.replace(tmp_path, final_path)
    fsync_dir(os.path.dirname(final_path) or ".")


def write_all(fd: int, data: bytes | memoryview) -> None:
    """os.write until everything is written (regular files may write short)."""
    written = os.write(fd, data)
    if written == len(data):
        return
    view = memoryview(data)[written:]
    while view:
        view = view[os.write(fd, view):]


def make_dirs_durably(directory: str) -> None:
    """Create ``directory`` (and parents) and persist the new entries."""
    missing = []
    current = os.path.abspath(directory)
    while not os.path.isdir(current):
        missing.append(current)
        current = os.path.dirname(current)
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            pass
        fsync_dir(os.path.dirname(path))
