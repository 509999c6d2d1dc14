"""Node.js clients (kafkajs) for the client tests: the packages of `node/package.json`
installed once with npm into `<repo>/.cache/node/`, and the scripts of `node/` run on them.
Without node or npm, or when npm cannot install, the tests that need them skip and say why."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SOURCES = Path(__file__).resolve().parent / "node"
CACHE = REPO / ".cache" / "node"
INSTALL_TIMEOUT_S = 600


def modules() -> Path:
    """The node_modules of node/package.json, installed once (skips if it cannot be)."""
    absent = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if absent:
        pytest.skip(f"Node.js client tests need {' and '.join(absent)} on PATH")
    manifest = (SOURCES / "package.json").read_bytes()
    home = CACHE / hashlib.sha256(manifest).hexdigest()[:16]
    if (home / ".complete").exists():
        return home / "node_modules"
    CACHE.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(dir=CACHE, prefix=".build-"))
    (build / "package.json").write_bytes(manifest)
    cmd = ["npm", "install", "--no-audit", "--no-fund", "--omit=dev", "--prefix", str(build)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                          check=False)
    if proc.returncode != 0:
        shutil.rmtree(build, ignore_errors=True)
        pytest.skip(f"npm could not install {SOURCES / 'package.json'}: {proc.stderr[-2000:]}")
    (build / ".complete").touch()
    if home.exists():
        shutil.rmtree(build, ignore_errors=True)
    else:
        os.replace(build, home)
    return home / "node_modules"


def run(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run node/`script` with the installed packages; its stdout and stderr as text."""
    env = {**os.environ, "NODE_PATH": str(modules())}
    return subprocess.run(["node", str(SOURCES / script), *args], capture_output=True,
                          text=True, timeout=timeout, env=env, check=False)


def json_steps(proc: subprocess.CompletedProcess[str]) -> list[dict]:
    """The JSON objects a script printed, one a line, once it exited 0."""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
