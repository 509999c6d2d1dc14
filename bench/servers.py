"""The servers under test, each in its own process so its CPU time can be read from /proc.

kcsim runs as `kcsim serve` from the project's venv; the floor as
`python -m bench.floor`. Both print `... ready on HOST:PORT` once they accept.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Self

from . import floor as floor_mod

ROOT = Path(__file__).resolve().parent.parent
_SCRIPT = Path(sys.executable).parent / "kcsim"
KCSIM = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "kcsim"]
_READY = re.compile(rb"ready on (\S+):(\d+)")


class ServerError(Exception):
    """A server process failed to start or died."""


class ServerProcess:
    """One server process; `.pid`, `.host`, `.port` once `start()` returned."""

    def __init__(self, name: str, argv: list[str], cleanup: list[str] | None = None,
                 cpu: int | None = None, env: dict[str, str] | None = None,
                 cwd: Path = ROOT) -> None:
        self.name = name
        self.argv = argv
        self.env = env  # None: the bench's own environment
        self.cwd = cwd
        self.cleanup = cleanup or []
        self.cpu = cpu
        self.proc: subprocess.Popen[bytes] | None = None
        self.host = "127.0.0.1"
        self.port = 0
        self.started_at = 0.0
        self.ready_at = 0.0
        self.ready_line = ""  # what it printed once ready (kcsim adds its control API's URL)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - outlives start() on purpose
        self._lines: queue.Queue[bytes] = queue.Queue()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 20.0) -> ServerProcess:
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=self._stderr,
                                     stdin=subprocess.DEVNULL, cwd=self.cwd, env=self.env)
        threading.Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise ServerError(f"{self.name} printed no ready line within {timeout:g}s"
                                  + self.stderr_tail()) from None
            if not line:
                code = self.proc.wait()
                raise ServerError(f"{self.name} exited with {code} before it was ready"
                                  + self.stderr_tail())
            m = _READY.search(line)
            if m:
                self.ready_at = time.perf_counter()
                self.ready_line = line.decode(errors="replace").strip()
                self.host, self.port = m.group(1).decode(), int(m.group(2))
                break
        if self.cpu is not None:
            os.sched_setaffinity(self.proc.pid, {self.cpu})
        return self

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stderr_tail(self, lines: int = 12) -> str:
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace").strip().splitlines()
        return ("\n  stderr: " + "\n  stderr: ".join(text[-lines:])) if text else ""

    def stop(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for path in self.cleanup:
            shutil.rmtree(path, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()  # stderr stays readable for error reports until garbage collection


def kcsim(extra: list[str] | None = None, cpu: int | None = None,
          listeners: str | None = None, path: Path | None = None,
          data_dir: Path | None = None, log_level: str = "WARNING") -> ServerProcess:
    """An unstarted `kcsim serve` on a free port (or on `listeners`, as --listeners takes
    them) with `data_dir` (a fresh one, removed at stop, if None); with `path`, the kcsim
    found there (a baseline)."""
    cleanup = []
    if data_dir is None:
        data_dir = Path(tempfile.mkdtemp(prefix="kcsim-bench-"))
        cleanup.append(str(data_dir))
    address = (["--listeners", listeners] if listeners is not None
               else ["--host", "127.0.0.1", "--port", "0"])
    args = ["serve", *address, "--data-dir", str(data_dir), "--log-level", log_level,
            *(extra or [])]
    if path is None:
        return ServerProcess("kcsim", [*KCSIM, *args], cleanup=cleanup, cpu=cpu)
    env = {**os.environ, "PYTHONPATH": str(path)}
    return ServerProcess("kcsim", [sys.executable, "-m", "kcsim", *args], cleanup=cleanup,
                         cpu=cpu, env=env, cwd=path)


def floor(table: dict[int, bytes] | None = None, cpu: int | None = None) -> ServerProcess:
    """An unstarted floor server answering from `table` (api key -> fixed response)."""
    argv = [sys.executable, "-m", "bench.floor", "--port", "0"]
    cleanup = []
    if table:
        tmp = tempfile.mkdtemp(prefix="kcsim-floor-")
        path = os.path.join(tmp, "responses.bin")
        floor_mod.write_table(path, table)
        argv += ["--responses", path]
        cleanup.append(tmp)
    return ServerProcess("floor", argv, cleanup=cleanup, cpu=cpu)
