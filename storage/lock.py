"""One server per data directory, enforced with flock on ``<dir>/.lock``.

Two servers appending to the same log would interleave frames and corrupt it.
The lock is released by the kernel when the process dies, so a crash never
leaves a stale lock behind; the pid in the file only serves the error message.
"""

from __future__ import annotations

import fcntl
import os
from typing import Self

from .errors import DataDirLockedError
from .fsutil import make_dirs_durably

LOCK_FILE_NAME = ".lock"


class DataDirLock:
    """An exclusive hold on a data directory. Use :meth:`acquire` or ``with``."""

    def __init__(self, directory: str, fd: int) -> None:
        self.directory = directory
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, directory: str | os.PathLike[str]) -> DataDirLock:
        """Lock ``directory`` (created if missing) or raise DataDirLockedError."""
        directory = os.fspath(directory)
        make_dirs_durably(directory)
        path = os.path.join(directory, LOCK_FILE_NAME)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            raise DataDirLockedError(directory, holder) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(directory, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Give the directory up (the file stays: unlinking it would race a new locker)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).decode().strip())
    except (OSError, ValueError):
        return None  # the holder has not written its pid yet
