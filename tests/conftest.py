"""Shared fixtures: a kcsim server as a subprocess, and unique names (the in-process
brokers are the plugin's: `kcsim`, `kcsim_persistent`, `kcsim_trio`)."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
import uuid
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.processes import stop_process

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator

REPO = Path(__file__).resolve().parent.parent
READY = re.compile(r"kcsim ready on (\S+):(\d+)")
START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0


class KcsimProcess:
    """`kcsim serve` in a subprocess; stderr goes to a log file kept across restarts."""

    def __init__(self, data_dir: Path, log_path: Path, **settings: Any) -> None:
        self.data_dir = Path(data_dir)
        self.log_path = Path(log_path)
        self.settings = settings
        self.host = str(settings.pop("host", "127.0.0.1"))
        self.port: int = int(settings.pop("port", 0))
        self.proc: subprocess.Popen[str] | None = None
        self.ready_line = ""
        self._log_offset = 0

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "kcsim", "serve",
               "--data-dir", str(self.data_dir), "--log-level", "INFO"]
        if "listeners" not in self.settings:  # else the listeners say where
            cmd += ["--host", self.host, "--port", str(self.port)]
        for name, value in self.settings.items():
            flag = "--" + name.replace("_", "-")
            if value is True:
                cmd.append(flag)
            elif value is False:
                cmd.append("--no-" + name.replace("_", "-"))
            elif isinstance(value, (list, tuple)):  # a repeatable flag
                for item in value:
                    cmd += [flag, str(item)]
            else:
                cmd += [flag, str(value)]
        return cmd

    def start(self) -> KcsimProcess:
        """Start the server and wait for its ready line; the first start picks the port."""
        assert self.proc is None, "already running"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "a") as log:
            self._log_offset = log.tell()
            log.write(f"--- {' '.join(self.command())}\n")
            log.flush()
            self.proc = subprocess.Popen(
                self.command(), cwd=REPO, stdout=subprocess.PIPE, stderr=log,
                stdin=subprocess.DEVNULL, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, args=(self.proc, lines), daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            remaining = deadline - time.monotonic()
            try:
                line = lines.get(timeout=max(remaining, 0.01))
            except queue.Empty:
                line = ""
            if line is None or remaining <= 0:
                try:
                    code = self.proc.wait(2) if line is None else self.proc.poll()
                except subprocess.TimeoutExpired:
                    code = None
                self._kill()
                why = (f"exited with code {code}" if code is not None
                       else f"did not report ready within {START_TIMEOUT_S:.0f}s")
                raise RuntimeError(f"kcsim {why}; stderr:\n" + self.stderr(all_runs=False))
            match = READY.search(line)
            if match:
                self.port = int(match.group(2))
                self.ready_line = line.strip()
                return self

    @staticmethod
    def _pump(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after a grace period; returns the exit code."""
        proc, self.proc = self.proc, None
        return stop_process(proc, STOP_TIMEOUT_S)

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self) -> KcsimProcess:
        """Stop and start again on the same port and data dir."""
        self.stop()
        return self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stderr(self, all_runs: bool = True) -> str:
        try:
            with open(self.log_path) as log:
                if not all_runs:
                    log.seek(self._log_offset)
                return log.read()
        except OSError:
            return ""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[Any]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the stderr of every kcsim subprocess a failed test used to its report."""
    report = yield
    if not report.failed:
        return report
    seen: set[int] = set()
    for value in getattr(item, "funcargs", {}).values():
        servers = getattr(value, "servers", None) if not isinstance(value, KcsimProcess) else [value]
        for server in servers or ():
            if isinstance(server, KcsimProcess) and id(server) not in seen:
                seen.add(id(server))
                text = server.stderr()
                if len(text) > 20000:
                    text = "...\n" + text[-20000:]
                report.sections.append((f"kcsim stderr ({server.log_path})", text))
    return report


class _Factory:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.servers: list[KcsimProcess] = []

    def __call__(self, **settings: Any) -> KcsimProcess:
        n = len(self.servers)
        server = KcsimProcess(self.base / f"data{n}", self.base / f"kcsim{n}.stderr.log", **settings)
        self.servers.append(server)
        return server.start()

    def close(self) -> None:
        for server in self.servers:
            server.stop()


@pytest.fixture
def kcsim_factory(tmp_path: Path) -> Iterator[Callable[..., KcsimProcess]]:
    """Start `kcsim serve` subprocesses with extra settings, e.g. factory(default_partitions=3)."""
    factory = _Factory(tmp_path)
    try:
        yield factory
    finally:
        factory.close()


@pytest.fixture
def kcsim_server(kcsim_factory: Callable[..., KcsimProcess]) -> KcsimProcess:
    """A `kcsim serve` subprocess on a free port with a fresh data dir."""
    return kcsim_factory()


@pytest.fixture(scope="module")
def kcsim_module_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KcsimProcess]:
    """One `kcsim serve` subprocess shared by the tests of a module."""
    base = tmp_path_factory.mktemp("kcsim")
    server = KcsimProcess(base / "data", base / "kcsim.stderr.log").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def unique_name(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """unique_name("orders") -> a valid topic/group name unique to this call."""
    test = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name).strip("-")[:60]

    def make(prefix: str = "t") -> str:
        return f"{prefix}-{test}-{uuid.uuid4().hex[:8]}"

    return make


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One real Apache Kafka broker (KRaft, loopback) for the whole session: PLAINTEXT, and
    SASL_SSL under the standard authorizer (tests/oracle/secured.py).

    Fetched with Maven on first use (tests/oracle/kafka.py). Where Kafka cannot be
    fetched or started, every test asking for it is skipped with the reason, and
    the reason is repeated at the end of the run; KCSIM_REQUIRE_KAFKA=1 makes
    that a failure instead.
    """
    from tests.oracle.kafka import KafkaBroker, KafkaUnavailable, jmx_exporter
    from tests.oracle.secured import key_store, secured_broker_args

    base = tmp_path_factory.mktemp("kafka")
    store, ca_file = key_store(tmp_path_factory.mktemp("kafka-tls"))
    # The Prometheus JMX exporter's agent, for the metric names' check (test_metrics_names).
    jvm_args, metrics_url = jmx_exporter(base)
    broker = KafkaBroker(base, jvm_args=jvm_args, **secured_broker_args(store))
    broker.key_store, broker.ca_file = store, ca_file
    broker.metrics_url = metrics_url  # a str, or why there is none (KafkaUnavailable)
    try:
        broker.start()
    except KafkaUnavailable as exc:
        reason = f"Apache Kafka is not available here, oracle tests NOT RUN: {exc}"
        _KAFKA_SKIPS.append(reason)
        warnings.warn(reason, stacklevel=1)
        if os.environ.get("KCSIM_REQUIRE_KAFKA") == "1":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    try:
        yield broker
    finally:
        broker.stop()


_KAFKA_SKIPS: list[str] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say loudly, at the end, that the Kafka oracle did not run and why."""
    for reason in _KAFKA_SKIPS:
        terminalreporter.write_sep("!", "KAFKA ORACLE SKIPPED", red=True, bold=True)
        terminalreporter.write_line(reason, red=True)


# Tiers are markers, given by where a test lives: `pytest -m clients` runs the
# real-client tests, `-m "not durability"` skips the crash and restart tests,
# `-m oracle` runs only the comparisons with a real Kafka broker, `-m "not spark"` skips
# the Spark pipeline's.
_TIERS = {
    ("server", "clients"): "clients",
    ("server", "durability"): "durability",
    ("containers",): "containers",
    ("oracle",): "oracle",
    ("pipeline",): "spark",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(item.path).relative_to(REPO / "tests").parts
        tier = _TIERS.get(tuple(parts[:2])) or _TIERS.get(tuple(parts[:1]))
        if tier is not None:
            item.add_marker(tier)
