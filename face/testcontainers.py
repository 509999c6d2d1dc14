"""kcsim for testcontainers-python, as its KafkaContainer runs Kafka.

    from kcsim.testcontainers import KcsimContainer

    with KcsimContainer() as kcsim:
        producer = Producer({"bootstrap.servers": kcsim.get_bootstrap_server()})

Needs the `testcontainers` extra (`pip install 'kcsim[testcontainers]'`) and the kcsim
image (`docker build -f docker/Dockerfile -t kcsim .`).

A Kafka broker must advertise the address clients reach it by, and with
testcontainers' random host ports that address is known only once the container
runs. So, as KafkaContainer does, the container starts a shell that waits for a
file; once the port mapping is known, the file is written with the advertised
listeners and kcsim starts. Readiness is a Kafka round trip through the host port
(DescribeCluster, checked to name that same address), not a log line.

Containers on a shared network (`with_network`) reach the PLAINTEXT listener on
INTERNAL_PORT, advertised under the container's first network alias, else its IP.
Where the Ryuk reaper's image cannot be pulled, set TESTCONTAINERS_RYUK_DISABLED=true
(containers are then removed only by `stop()` or the `with` block).
"""

from __future__ import annotations

import io
import tarfile
import time
from typing import Any

from kcsim.admin import AdminClient

try:
    from testcontainers.core.container import DockerContainer
except ModuleNotFoundError as exc:
    raise ImportError("kcsim.testcontainers needs testcontainers-python: "
                      f"pip install 'kcsim[testcontainers]' ({exc})") from exc

__all__ = ["KcsimContainer"]

_LISTENERS_FILE = "/tmp/kcsim-advertised-listeners"
# Wait for the advertised listeners, then become kcsim serve (PID 1 gets SIGTERM).
_START = (f"while [ ! -f {_LISTENERS_FILE} ]; do sleep 0.05; done; "
          f'. {_LISTENERS_FILE}; export KCSIM_ADVERTISED_LISTENERS; exec kcsim serve "$@"')


class KcsimContainer(DockerContainer):
    """A kcsim broker in a container; `get_bootstrap_server()` once started."""

    INTERNAL_PORT = 29092

    def __init__(self, image: str = "kcsim:latest", port: int = 9092, **kwargs: Any) -> None:
        super().__init__(image, entrypoint=["sh", "-c", _START, "kcsim"], **kwargs)
        self.port = port
        self.with_exposed_ports(port)
        self.with_env("KCSIM_LISTENERS", f"PLAINTEXT_HOST://0.0.0.0:{port},"
                                         f"PLAINTEXT://0.0.0.0:{self.INTERNAL_PORT}")
        self.with_env("KCSIM_INITIAL_REBALANCE_DELAY_MS", "0")  # as KafkaContainer sets it

    def get_bootstrap_server(self) -> str:
        """host:port of the broker for clients on this machine."""
        return f"{self.get_container_host_ip()}:{self.get_exposed_port(self.port)}"

    def start(self, timeout: float = 60.0) -> KcsimContainer:
        super().start()
        self._advertise()
        self._wait_ready(timeout)
        return self

    def _advertise(self) -> None:
        """Write the listeners file the container waits for."""
        aliases = self._network_aliases or []
        internal = aliases[0] if aliases else "$(hostname -i | cut -d' ' -f1)"
        text = (f'KCSIM_ADVERTISED_LISTENERS="PLAINTEXT_HOST://{self.get_bootstrap_server()},'
                f'PLAINTEXT://{internal}:{self.INTERNAL_PORT}"\n').encode()
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w") as tar:
            info = tarfile.TarInfo(_LISTENERS_FILE.lstrip("/"))
            info.size, info.mtime, info.mode = len(text), int(time.time()), 0o644
            tar.addfile(info, io.BytesIO(text))
        self.get_wrapped_container().put_archive("/", archive.getvalue())

    def _wait_ready(self, timeout: float) -> None:
        """Until the broker answers DescribeCluster through the host port with that address."""
        bootstrap = self.get_bootstrap_server()
        deadline = time.monotonic() + timeout
        problem = "no answer yet"
        while time.monotonic() < deadline:
            self.get_wrapped_container().reload()
            if self.get_wrapped_container().status not in ("created", "running"):
                break
            try:
                with AdminClient(bootstrap, timeout=2.0) as admin:
                    brokers = [b.address for b in admin.describe_cluster(timeout=2.0).brokers]
            except Exception as exc:  # not listening yet, or the port is not forwarded yet
                problem = f"{type(exc).__name__}: {exc}"
                time.sleep(0.1)
                continue
            if brokers == [bootstrap]:
                return
            problem = f"the broker advertises {brokers}, not {bootstrap}"
            break
        stdout, stderr = self.get_logs()
        raise TimeoutError(f"kcsim at {bootstrap} is not ready ({problem}); container log:\n"
                           + (stdout + stderr).decode(errors="replace")[-4000:])
