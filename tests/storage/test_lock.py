"""DataDirLock: one server per data directory."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from kcsim.storage import DataDirLock, DataDirLockedError


def test_second_opener_is_refused_with_dir_and_holder_pid(tmp_path):
    with DataDirLock.acquire(tmp_path) as lock:
        assert lock.held
        assert (tmp_path / ".lock").read_text().strip() == str(os.getpid())
        with pytest.raises(DataDirLockedError) as err:
            DataDirLock.acquire(tmp_path)
        assert err.value.holder_pid == os.getpid()
        assert str(tmp_path) in str(err.value) and f"pid {os.getpid()}" in str(err.value)
    assert not lock.held
    with DataDirLock.acquire(tmp_path):  # released: free again
        pass


def test_lock_held_by_another_process(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            from kcsim.storage import DataDirLock
            lock = DataDirLock.acquire({str(tmp_path)!r})
            print("locked", flush=True)
            sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(DataDirLockedError) as err:
            DataDirLock.acquire(tmp_path)
        assert err.value.holder_pid == holder.pid
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    with DataDirLock.acquire(tmp_path):  # the kernel released it with the process
        pass


def test_lock_creates_the_directory(tmp_path):
    with DataDirLock.acquire(tmp_path / "new" / "dir"):
        assert (tmp_path / "new" / "dir" / ".lock").exists()
