"""Stopping the servers tests start as subprocesses (kcsim, Kafka)."""

from __future__ import annotations

import signal
import subprocess


def stop_process(proc: subprocess.Popen[str] | None, grace_s: float) -> int | None:
    """SIGTERM (a controlled shutdown), SIGKILL after `grace_s`; the exit code."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode
