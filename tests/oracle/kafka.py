"""A real Apache Kafka broker for tests: fetched with Maven, one KRaft node on loopback.

`kafka_jars()` resolves `org.apache.kafka:kafka_2.13` and its run-time dependencies
with Maven into `<repo>/.cache/kafka/<version>/lib` once (Maven's own repository
goes to `<repo>/.cache/m2`, so later runs work offline). `KafkaBroker` formats a
single-node broker+controller data dir in a temp folder, starts `kafka.Kafka` with
test-friendly settings on free loopback ports and waits until it answers Metadata
and coordinates groups. Anything that goes wrong on the way raises
`KafkaUnavailable` with the reason, which the fixtures turn into a loud skip.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class
from tests.processes import stop_process
from tests.server.durability.wire import Closed, Wire

if TYPE_CHECKING:
    from collections.abc import Mapping

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache"
DEFAULT_KAFKA_VERSION = "4.4.0"
KAFKA_VERSION = os.environ.get("KCSIM_ORACLE_KAFKA_VERSION", DEFAULT_KAFKA_VERSION)
LOG4J_VERSION = "2.25.5"
MAVEN_TIMEOUT_S = 420
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0

# Group settings that kcsim is given too where both are compared (tests/oracle):
# (kcsim setting, Kafka property, value).
GROUP_SETTINGS: tuple[tuple[str, str, int], ...] = (
    ("initial_rebalance_delay_ms", "group.initial.rebalance.delay.ms", 0),
    ("min_session_timeout_ms", "group.min.session.timeout.ms", 1000),
    ("max_session_timeout_ms", "group.max.session.timeout.ms", 300000),
    ("default_partitions", "num.partitions", 1),
    # group.consumer.session.timeout.ms and group.consumer.heartbeat.interval.ms are left at
    # Kafka's defaults (45 s, 5 s), kcsim's too: DescribeConfigs of a group shows them so.
    # Both assign in the heartbeat that changes a group, so the scenarios can step the
    # protocol one heartbeat at a time; a scenario that wants Kafka 4.3+'s interval sets
    # the group's own consumer.assignment.interval.ms.
    ("consumer_group_assignment_interval_ms", "group.consumer.assignment.interval.ms", 0),
    ("offsets_topic_num_partitions", "offsets.topic.num.partitions", 1),
    # Streams groups assign at once too (Kafka's defaults delay a new group's first
    # assignment by 3 s, and each next by 1 s); tests/coordinator covers both.
    ("streams_group_initial_rebalance_delay_ms", "group.streams.initial.rebalance.delay.ms", 0),
    ("streams_group_assignment_interval_ms", "group.streams.assignment.interval.ms", 0),
)

# Settings every test broker gets; `KafkaBroker(settings=...)` adds or overrides.
TEST_SETTINGS: dict[str, str] = {
    **{prop: str(value) for _, prop, value in GROUP_SETTINGS},
    "auto.create.topics.enable": "true",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "log.cleaner.enable": "false",
    # Kafka's floor and max of a group's consumer.assignment.interval.ms, spelled out
    # (its defaults, kcsim's too), and no assignor offload (kcsim has none).
    "group.consumer.min.assignment.interval.ms": "0",
    "group.consumer.max.assignment.interval.ms": "15000",
    "group.consumer.assignor.offload.enable": "false",
    # kcsim computes a share group's target in the heartbeat that changes the group (it has
    # no share assignment interval, differences.py); Kafka too at interval 0.
    "group.share.assignment.interval.ms": "0",
}


class KafkaUnavailable(RuntimeError):
    """Kafka cannot be fetched or started on this machine; the message says why."""


def _pom(name: str, version: str, deps: list[tuple[str, str, str]]) -> str:
    body = "".join(f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
                   f"<version>{v}</version></dependency>" for g, a, v in deps)
    return ('<project xmlns="http://maven.apache.org/POM/4.0.0">'
            "<modelVersion>4.0.0</modelVersion><groupId>kcsim.tests</groupId>"
            f"<artifactId>{name}</artifactId><version>{version}</version>"
            f"<packaging>pom</packaging><dependencies>{body}</dependencies></project>\n")


def _maven(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = ["mvn", "-q", "-B", "-Dstyle.color=never", f"-Dmaven.repo.local={CACHE / 'm2'}", *args]
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                              timeout=MAVEN_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise KafkaUnavailable(f"`{' '.join(cmd)}` took more than {MAVEN_TIMEOUT_S}s") from exc


def _first_error(output: str) -> str:
    """Maven's first error line, without colour codes (the whole output if none)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", output)
    errors = [line for line in text.splitlines() if line.startswith("[ERROR]") and line[7:].strip()]
    return errors[0] if errors else text[-2000:]


def maven_jars(home: Path, deps: list[tuple[str, str, str]]) -> list[Path]:
    """`deps` and their run-time dependencies as jars in `home/lib`, fetched with Maven once.

    Maven's repository is `<repo>/.cache/m2`, so a second fetch of the same jars
    (another folder, another pom) works offline.
    """
    lib = home / "lib"
    done = home / ".complete"
    if done.exists():
        return sorted(lib.glob("*.jar"))
    group, artifact, version = deps[0]
    if shutil.which("mvn") is None:
        raise KafkaUnavailable(f"mvn (Maven) not found on PATH: cannot fetch {group}:{artifact}")
    home.mkdir(parents=True, exist_ok=True)
    (home / "pom.xml").write_text(_pom(home.parent.name, version, deps))
    shutil.rmtree(lib, ignore_errors=True)
    goal = ["dependency:copy-dependencies", f"-DoutputDirectory={lib}"]
    proc = _maven(["-o", *goal], home) if (CACHE / "m2").is_dir() else None
    if proc is None or proc.returncode != 0:
        proc = _maven(goal, home)
    if proc.returncode != 0:
        raise KafkaUnavailable(
            f"Maven could not fetch {group}:{artifact}:{version} (exit {proc.returncode}): "
            + _first_error(proc.stdout + proc.stderr))
    jars = sorted(lib.glob("*.jar"))
    if not any(j.name.startswith(f"{artifact}-") for j in jars):
        raise KafkaUnavailable(f"Maven ran but left no {artifact} jar in {lib}")
    done.write_text("\n".join(j.name for j in jars) + "\n")
    return jars


def kafka_jars(version: str = KAFKA_VERSION) -> list[Path]:
    """The broker's class path, fetched with Maven the first time (offline once cached)."""
    return maven_jars(CACHE / "kafka" / version, [
        ("org.apache.kafka", "kafka_2.13", version),
        ("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
        ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION)])


def kafka_clients_jars(version: str) -> list[Path]:
    """kafka-clients `version` and what it needs at run time (compression codecs, slf4j)."""
    return maven_jars(CACHE / "kafka-clients" / version,
                      [("org.apache.kafka", "kafka-clients", version)])


def kafka_streams_jars(version: str) -> list[Path]:
    """kafka-streams `version` with what it needs at run time (kafka-clients, rocksdbjni),
    and a log4j binding so its errors reach stderr."""
    return maven_jars(CACHE / "kafka-streams" / version, [
        ("org.apache.kafka", "kafka-streams", version),
        ("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
        ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION)])


JACKSON = "2.21.7"  # what Kafka 4.4 is built with


def kafka_clients_oauth_jars(version: str) -> list[Path]:
    """kafka-clients `version` with jackson-databind, which its OAUTHBEARER login needs (an
    optional dependency: an application using OAUTHBEARER adds it)."""
    return maven_jars(CACHE / "kafka-clients-oauth" / version,
                      [("org.apache.kafka", "kafka-clients", version),
                       ("com.fasterxml.jackson.core", "jackson-databind", JACKSON)])


JMX_EXPORTER_VERSION = "1.0.1"


def jmx_exporter_agent(version: str = JMX_EXPORTER_VERSION) -> Path:
    """The Prometheus JMX exporter's Java agent jar, fetched with Maven the first time."""
    jars = maven_jars(CACHE / "jmx-exporter" / version,
                      [("io.prometheus.jmx", "jmx_prometheus_javaagent", version)])
    return next(j for j in jars if j.name.startswith("jmx_prometheus_javaagent-"))


# The exporter's default rules: every bean, named `<domain>_<type>_<attribute>`.
JMX_EXPORTER_CONFIG = 'rules:\n- pattern: ".*"\n'


def jmx_exporter(base: Path) -> tuple[tuple[str, ...], str | KafkaUnavailable]:
    """(the JVM options that run the JMX exporter agent on a free loopback port, the URL
    of its /metrics); where the agent cannot be fetched, no options and the reason."""
    try:
        agent = jmx_exporter_agent()
    except KafkaUnavailable as exc:
        return (), exc
    config = base / "jmx-exporter.yaml"
    base.mkdir(parents=True, exist_ok=True)
    config.write_text(JMX_EXPORTER_CONFIG)
    port = free_port()
    return (f"-javaagent:{agent}=127.0.0.1:{port}:{config}",), f"http://127.0.0.1:{port}/metrics"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cluster_id() -> str:
    """A fresh Kafka cluster id: a UUID in Kafka's URL-safe base64 form. One that starts
    with "-" is drawn again: `kafka-storage format -t` would read it as an option."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


def _die_with_parent() -> None:
    """Child side of Popen: the JVM gets SIGKILL if the test process dies first (Linux)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


_LOG4J = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = {level}
rootLogger.appenderRef.file.ref = file
logger.coordinator.name = org.apache.kafka.coordinator.group
logger.coordinator.level = INFO
"""


class KafkaBroker:
    """One Kafka node (process.roles=broker,controller) in `base`, listening on loopback."""

    expected_brokers = 1  # the brokers its Metadata lists once it is ready

    def __init__(self, base: Path, settings: Mapping[str, str] | None = None,
                 version: str = KAFKA_VERSION, listeners: tuple[str, ...] = (),
                 format_args: tuple[str, ...] = (), jvm_args: tuple[str, ...] = ()) -> None:
        self.base = Path(base)
        self.version = version
        self.host = "127.0.0.1"
        self.port = 0
        self.controller_port = 0
        # Listeners beside PLAINTEXT, each speaking the protocol it is named after
        # (SASL_SSL, ...; their settings in `settings`), and their ports once started.
        self.listeners = listeners
        self.ports: dict[str, int] = {}
        self.format_args = format_args  # more of kafka-storage format's (--add-scram ...)
        self.jvm_args = jvm_args  # more options of the broker's JVM (a -javaagent:...)
        self.settings = {**TEST_SETTINGS, **(settings or {})}
        self.cluster = cluster_id()  # the nodes of one cluster share it
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = self.base / "kafka.log"
        self.stdout_path = self.base / "kafka.stdout.log"

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def _properties(self) -> str:
        more = "".join(f",{name}://{self.host}:{port}" for name, port in self.ports.items())
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": f"{self.host}:{self.controller_port}",
            "listeners": f"PLAINTEXT://{self.host}:{self.port},CONTROLLER://{self.host}:{self.controller_port}{more}",
            "advertised.listeners": f"PLAINTEXT://{self.host}:{self.port}{more}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
                                              + "".join(f",{name}:{name}" for name in self.ports),
            "log.dirs": str(self.base / "data"),
            **self.settings,
        }
        return "".join(f"{k}={v}\n" for k, v in props.items())

    def _java(self, main: str, *args: str, heap: str = "256m",
              jvm_args: tuple[str, ...] = ()) -> list[str]:
        java = shutil.which("java")
        if java is None:
            raise KafkaUnavailable("java not found on PATH: Apache Kafka needs Java 17+")
        return [java, f"-Xmx{heap}", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Xshare:auto", "-Djava.awt.headless=true", *jvm_args,
                f"-Dlog4j2.configurationFile={self.base / 'log4j2.properties'}",
                "-cp", os.pathsep.join(map(str, kafka_jars(self.version))), main, *args]

    def start(self) -> KafkaBroker:
        """Format a fresh data dir, start the broker and wait until it coordinates groups."""
        self.launch()
        try:
            self._wait_ready(time.monotonic() + START_TIMEOUT_S)
        except BaseException:
            self.stop()
            raise
        return self

    def _format_args(self) -> tuple[str, ...]:
        """How kafka-storage format learns the controller quorum: this node alone."""
        return ("--standalone",)

    def launch(self) -> None:
        """Format a fresh data dir and start the process, without waiting for it (the nodes
        of a cluster are all launched before any can be ready). Ports already set are kept."""
        assert self.proc is None, "already running"
        self.base.mkdir(parents=True, exist_ok=True)
        self.port, self.controller_port = self.port or free_port(), self.controller_port or free_port()
        self.ports = {name: free_port() for name in self.listeners}
        config = self.base / "server.properties"
        config.write_text(self._properties())
        (self.base / "log4j2.properties").write_text(
            _LOG4J.format(log=self.log_path, level=os.environ.get("KCSIM_ORACLE_KAFKA_LOG", "WARN")))
        fmt = self._java("kafka.tools.StorageTool", "format", *self._format_args(),
                         "--ignore-formatted", "-t", self.cluster, "-c", str(config),
                         *self.format_args)
        proc = subprocess.run(fmt, capture_output=True, text=True, timeout=120, check=False,
                              stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise KafkaUnavailable(f"kafka-storage format failed (exit {proc.returncode}):\n"
                                   + (proc.stdout + proc.stderr)[-3000:])
        with open(self.stdout_path, "wb") as out:
            self.proc = subprocess.Popen(
                self._java("kafka.Kafka", str(config), heap="512m", jvm_args=self.jvm_args), stdout=out,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.base,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None)

    def _wait_ready(self, deadline: float) -> None:
        """Until Metadata lists `expected_brokers` nodes and FindCoordinator finds the offsets
        topic's leader."""
        last = "no answer yet"
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise KafkaUnavailable(f"Kafka exited with code {self.proc.returncode} at start:\n"
                                       + self.output()[-3000:])
            try:
                with Wire(self.host, self.port, timeout=5.0) as wire:
                    meta = wire.call(3, 12, request_class(3)(
                        topics=[], allow_auto_topic_creation=False,
                        include_topic_authorized_operations=False))
                    if len(meta.brokers) < self.expected_brokers:
                        last = f"Metadata lists {len(meta.brokers)} brokers"
                    else:
                        cls = request_class(10)
                        found = wire.call(10, 4, cls(key_type=0, coordinator_keys=["kcsim-oracle-warmup"]))
                        error = found.coordinators[0].error_code
                        if error == 0:
                            return
                        last = f"FindCoordinator answered error {error}"
            except (OSError, Closed) as exc:
                last = f"{type(exc).__name__}: {exc}"
            time.sleep(0.2)
        raise KafkaUnavailable(f"Kafka did not become ready within {START_TIMEOUT_S:.0f}s "
                               f"({last}); output:\n" + self.output()[-3000:])

    def output(self) -> str:
        parts = []
        for path in (self.stdout_path, self.log_path):
            with contextlib.suppress(OSError):
                parts.append(path.read_text(errors="replace"))
        return "\n".join(parts)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> int | None:
        """SIGTERM (a controlled shutdown), SIGKILL after a grace period; the exit code."""
        proc, self.proc = self.proc, None
        return stop_process(proc, STOP_TIMEOUT_S)

    def __enter__(self) -> KafkaBroker:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
