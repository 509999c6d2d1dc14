"""The container tier: the image built and run the way users run it, on a real Docker engine.

The engine is the one that answers (DOCKER_HOST, or the default socket). Where none
does, one is started for the session with `docker/ci-engine.sh start --no-install`
where that can work (root, dockerd installed), and stopped after. Where no engine
can be had, every test here is skipped and the run ends with a banner saying why.

The image is built once per session with docker/build-offline.sh (which works with or
without a package index reachable from inside the build); KCSIM_TEST_IMAGE names a
ready image instead. Containers publish their ports on 127.0.0.1 only, and every
container, volume and network a test makes is removed after it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.server.health import Unhealthy, probe

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[2]
BASE_IMAGE = "python:3.11-slim"
READY_TIMEOUT_S = 60.0
REPORT: dict[str, str] = {}  # what the tier measured, printed at the end of the run
_SKIPPED: list[str] = []


def docker(*args: str, timeout: float = 120, check: bool = True,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the docker CLI; a failure that was not expected shows its command and output."""
    proc = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout,
                          env=env, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"docker {shlex.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def wait_until_answers(port: int, timeout: float = READY_TIMEOUT_S, what: str = "") -> float:
    """Seconds until a Kafka ApiVersions round trip to 127.0.0.1:port succeeds."""
    start = time.monotonic()
    problem = ""
    while time.monotonic() - start < timeout:
        try:
            probe("127.0.0.1", port, 2.0)
            return time.monotonic() - start
        except Unhealthy as exc:
            problem = str(exc)
            time.sleep(0.05)
    raise AssertionError(f"nothing answers Kafka on 127.0.0.1:{port} after {timeout:.0f}s "
                         f"({problem}){what}")


class Docker:
    """Containers, volumes and networks of one test, all removed after it."""

    def __init__(self, image: str) -> None:
        self.image = image
        self.prefix = f"kcsim-tier-{uuid.uuid4().hex[:8]}"
        self.containers: list[str] = []
        self.volumes: list[str] = []

    def name(self, what: str) -> str:
        return f"{self.prefix}-{what}"

    def run(self, *args: str, image: str | None = None, command: tuple[str, ...] = ()) -> str:
        """`docker run -d` with the test's image; returns the container id."""
        cid = docker("run", "-d", *args, image or self.image, *command).stdout.strip()
        self.containers.append(cid)
        return cid

    def volume(self) -> str:
        name = self.name(f"data-{len(self.volumes)}")
        docker("volume", "create", name)
        self.volumes.append(name)
        return name

    def logs(self, cid: str) -> str:
        proc = docker("logs", cid, check=False)
        return proc.stdout + proc.stderr

    def inspect(self, cid: str, template: str) -> str:
        return docker("inspect", "-f", template, cid).stdout.strip()

    def wait_ready(self, cid: str, port: int) -> float:
        """Seconds until the container answers Kafka on host port `port`."""
        return wait_until_answers(port, what=f"; container log:\n{self.logs(cid)[-3000:]}")

    def close(self) -> None:
        if self.containers:
            docker("rm", "-f", "-v", *self.containers, check=False)
        if self.volumes:
            docker("volume", "rm", "-f", *self.volumes, check=False)
        self.containers, self.volumes = [], []


def client_in_container(containers: Docker, network: str, bootstrap: str, topic: str,
                        group: str) -> dict[str, Any]:
    """tests/clientflows.py's kafka-python flow in a container on `network` (kafka-python
    mounted from this machine's environment); what it saw, as JSON."""
    import kafka

    script = ("import clientflows, json; print(json.dumps(clientflows.kafka_python_flow("
              f"{bootstrap!r}, {topic!r}, {group!r}).as_json()))")
    cid = containers.run(
        "--network", network, "-e", "PYTHONPATH=/clients", "--entrypoint", "python3",
        "-v", f"{Path(kafka.__file__).parent}:/clients/kafka:ro",
        "-v", f"{REPO / 'tests' / 'clientflows.py'}:/clients/clientflows.py:ro",
        command=("-c", script))
    code = docker("wait", cid, timeout=180).stdout.strip()
    log = containers.logs(cid)
    assert code == "0", f"the client container exited {code}:\n{log[-3000:]}"
    return dict(json.loads(log.strip().splitlines()[-1]))


def _engine_problem() -> str | None:
    if shutil.which("docker") is None:
        return "no docker command"
    proc = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"],
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines() or ["no answer"]
        return f"no Docker engine answers at {os.environ.get('DOCKER_HOST', 'the default socket')}: {lines[-1]}"
    return None


def _start_engine() -> tuple[dict[str, str], str]:
    """Start an engine with ci-engine.sh: (the variables it exported, what it said)."""
    proc = subprocess.run([str(REPO / "docker" / "ci-engine.sh"), "start", "--no-install"],
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    exported = dict(word.split("=", 1) for line in proc.stdout.splitlines()
                    if line.startswith("export ") for word in shlex.split(line)[1:])
    return exported, proc.stderr.strip()


@pytest.fixture(scope="session")
def engine() -> Iterator[None]:
    """A Docker engine that answers, or every container test skipped saying why."""
    problem = _engine_problem()
    started: dict[str, str] = {}
    if problem is not None:
        started, said = _start_engine()
        os.environ.update(started)
        if _engine_problem() is not None:
            reason = f"{problem}; docker/ci-engine.sh could not start one" + (
                f" ({said.splitlines()[-1]})" if said else "")
            _SKIPPED.append(reason)
            pytest.skip(f"container tier skipped: {reason}")
        REPORT["engine"] = f"started for this run by docker/ci-engine.sh ({started['DOCKER_HOST']})"
    try:
        yield
    finally:
        if started:
            subprocess.run([str(REPO / "docker" / "ci-engine.sh"), "stop"], capture_output=True,
                           timeout=120, stdin=subprocess.DEVNULL)
            for name in started:
                os.environ.pop(name, None)


@pytest.fixture(scope="session")
def image(engine: None) -> str:
    """The kcsim image: KCSIM_TEST_IMAGE, or built here with docker/build-offline.sh."""
    given = os.environ.get("KCSIM_TEST_IMAGE")
    if given:
        return given
    tag = "kcsim:tier-test"
    if docker("image", "inspect", BASE_IMAGE, check=False).returncode != 0:
        reason = (f"the engine has no {BASE_IMAGE} to build on and none can be pulled "
                  "(docker/ci-engine.sh start makes a stand-in)")
        _SKIPPED.append(reason)
        pytest.skip(f"container tier skipped: {reason}")
    start = time.monotonic()
    proc = subprocess.run([str(REPO / "docker" / "build-offline.sh"), tag], capture_output=True,
                          text=True, timeout=900, stdin=subprocess.DEVNULL, cwd=REPO)
    assert proc.returncode == 0, f"the image did not build:\n{proc.stdout[-4000:]}{proc.stderr[-4000:]}"
    REPORT["image build"] = f"{time.monotonic() - start:.1f} s (docker/build-offline.sh)"
    return tag


@pytest.fixture
def containers(image: str) -> Iterator[Docker]:
    made = Docker(image)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def names() -> Any:
    """names("topic") -> a topic or group name unique to this call."""
    return lambda prefix: f"{prefix}-{uuid.uuid4().hex[:10]}"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _SKIPPED:
        terminalreporter.write_sep("!", "CONTAINER TIER SKIPPED", red=True, bold=True)
        terminalreporter.write_line(_SKIPPED[0])
        terminalreporter.write_line('Run it with a Docker engine: eval "$(docker/ci-engine.sh start)" '
                                    "(as root; it installs and starts one), then make test.")
    elif REPORT:
        terminalreporter.write_sep("-", "container tier")
        for what, value in REPORT.items():
            terminalreporter.write_line(f"{what}: {value}")
