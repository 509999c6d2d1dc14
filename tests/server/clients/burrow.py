"""Burrow, LinkedIn's lag monitor, and the ZooKeeper it needs, on loopback for a test.

Both come from Debian packages (`burrow`, `zookeeper`). Where they are missing the test
tries `apt-get install` once (as root, where apt-get exists) and skips, saying why, when
that fails. Burrow reads `__consumer_offsets` to learn committed offsets and asks the
broker for log-end offsets; its HTTP API reports each group's lag per partition.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.processes import stop_process

if TYPE_CHECKING:
    from collections.abc import Callable

BURROW = "Burrow"
ZOOKEEPER_JARS = ("zookeeper.jar", "zookeeper-jute.jar", "slf4j-api.jar", "slf4j-nop.jar",
                  "metrics-core.jar")
JAVA_LIB = Path("/usr/share/java")
INSTALL_TIMEOUT_S = 900


def _missing() -> list[str]:
    absent = []
    if shutil.which(BURROW) is None:
        absent.append("burrow")
    if not all((JAVA_LIB / jar).exists() for jar in ZOOKEEPER_JARS) or not shutil.which("java"):
        absent.append("zookeeper")
    return absent


def ensure_installed() -> None:
    """Install the packages if missing and possible; skip loudly otherwise."""
    absent = _missing()
    if not absent:
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip(f"Burrow test: {' and '.join(absent)} not installed, and apt-get cannot "
                    "install them here (not root, or no apt-get)")
    try:
        for cmd in (["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", "burrow", "zookeeper"]):
            subprocess.run(cmd, capture_output=True, timeout=INSTALL_TIMEOUT_S, check=True,
                           stdin=subprocess.DEVNULL)
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"Burrow test: could not install {' and '.join(absent)}: {exc}")
    if _missing():
        pytest.skip(f"Burrow test: {' and '.join(_missing())} still missing after apt-get")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Burrow:
    """A ZooKeeper and a Burrow watching one kcsim, all on loopback, under `base`."""

    def __init__(self, base: Path, bootstrap: str) -> None:
        self.base = base
        self.bootstrap = bootstrap
        self.zk_port = free_port()
        self.http_port = free_port()
        self.procs: list[subprocess.Popen[str]] = []

    def start(self) -> Burrow:
        zk_dir = self.base / "zookeeper"
        zk_dir.mkdir(parents=True)
        (zk_dir / "zoo.cfg").write_text(
            f"tickTime=2000\ndataDir={zk_dir / 'data'}\nclientPort={self.zk_port}\n"
            "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
            "4lw.commands.whitelist=srvr\n")
        classpath = os.pathsep.join(str(JAVA_LIB / jar) for jar in ZOOKEEPER_JARS)
        self._spawn(["java", "-Xmx128m", "-cp", classpath,
                     "org.apache.zookeeper.server.ZooKeeperServerMain", str(zk_dir / "zoo.cfg")],
                    zk_dir / "out.log")
        self._wait_until(self._zookeeper_serves, "ZooKeeper to serve")
        burrow_dir = self.base / "burrow"
        burrow_dir.mkdir()
        (burrow_dir / "burrow.toml").write_text(self._config(burrow_dir))
        self._spawn([BURROW, "--config-dir", str(burrow_dir)], burrow_dir / "out.log",
                    cwd=burrow_dir)
        self._wait_until(lambda: self._listens(self.http_port), "Burrow's HTTP server")
        return self

    def _zookeeper_serves(self) -> bool:
        """ZooKeeper accepts connections before it serves sessions: ask it (`srvr`)."""
        try:
            with socket.create_connection(("127.0.0.1", self.zk_port), timeout=2) as sock:
                sock.sendall(b"srvr")
                return b"Mode:" in sock.recv(4096)
        except OSError:
            return False

    @staticmethod
    def _listens(port: int) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            return False

    def _wait_until(self, ready: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        """Return once `ready()`; fail at once if the process being waited for exited."""
        deadline = time.monotonic() + timeout
        while not ready():
            if self.procs[-1].poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}:\n{self.logs()}")
            time.sleep(0.1)

    def _spawn(self, cmd: list[str], log: Path, cwd: Path | None = None) -> None:
        with open(log, "w") as out:
            self.procs.append(subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                               stdin=subprocess.DEVNULL, cwd=cwd, text=True))

    def _config(self, directory: Path) -> str:
        servers = json.dumps([self.bootstrap])
        return f"""
[general]
pidfile="{directory / 'burrow.pid'}"
[logging]
level="info"
[zookeeper]
servers=["127.0.0.1:{self.zk_port}"]
timeout=6
root-path="/burrow"
[client-profile.kcsim]
client-id="burrow"
kafka-version="2.0.0"
[cluster.kcsim]
class-name="kafka"
servers={servers}
client-profile="kcsim"
topic-refresh=2
offset-refresh=1
[consumer.kcsim]
class-name="kafka"
cluster="kcsim"
servers={servers}
client-profile="kcsim"
offsets-topic="__consumer_offsets"
start-latest=false
group-blacklist=""
[httpserver.default]
address="127.0.0.1:{self.http_port}"
[storage.default]
class-name="inmemory"
workers=4
intervals=10
expire-group=604800
min-distance=1
"""

    def get(self, path: str) -> Any:
        """A JSON answer of Burrow's HTTP API, or None while it does not answer."""
        url = f"http://127.0.0.1:{self.http_port}/v3/kafka/kcsim{path}"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError):
            return None

    def logs(self) -> str:
        return "\n".join(f"--- {p}\n{p.read_text(errors='replace')[-4000:]}"
                         for p in sorted(self.base.glob("*/out.log")))

    def stop(self) -> None:
        for proc in reversed(self.procs):
            stop_process(proc, 10)
        self.procs.clear()
