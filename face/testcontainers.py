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

Secured mode (`with_security("SASL_SSL")`, or "SSL"): the port clients on this machine use
speaks TLS, with SASL/PLAIN for SASL_SSL. A CA and a server certificate for the container's
host are made on this machine (trustme) and handed to kcsim as its key store, so the CA is
here before the broker starts: `client_config()` gives confluent-kafka's (librdkafka's)
settings, CA included, and `ssl_ca_file` the CA for any other client. Readiness is then a
TLS handshake checked against that CA and host, and an ApiVersions answer, through the host
port. The listener for other containers stays PLAINTEXT.
Where the Ryuk reaper's image cannot be pulled, set TESTCONTAINERS_RYUK_DISABLED=true
(containers are then removed only by `stop()` or the `with` block).
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import ssl
import struct
import tarfile
import tempfile
import time
from typing import TYPE_CHECKING, Any, NoReturn

from kcsim.admin import AdminClient

if TYPE_CHECKING:
    from collections.abc import Callable

try:
    from testcontainers.core.container import DockerContainer
except ModuleNotFoundError as exc:
    raise ImportError("kcsim.testcontainers needs testcontainers-python: "
                      f"pip install 'kcsim[testcontainers]' ({exc})") from exc

__all__ = ["KcsimContainer"]

_LISTENERS_FILE = "/tmp/kcsim-advertised-listeners"
_KEYSTORE_FILE = "/tmp/kcsim-keystore.pem"
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_SSL")
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
        self.security_protocol = "PLAINTEXT"
        self.username, self.password = "kcsim", "kcsim-secret"
        self._tls_dir: str | None = None
        self._keystore = b""

    def with_security(self, protocol: str = "SASL_SSL", username: str = "kcsim",
                      password: str = "kcsim-secret") -> KcsimContainer:
        """Serve this machine's clients over `protocol`: SSL, or SASL_SSL with the SASL/PLAIN
        user `username`; before `start()`."""
        protocol = protocol.upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise ValueError(f"protocol: expected one of {', '.join(SECURITY_PROTOCOLS)}, "
                             f"got {protocol!r}")
        self.security_protocol, self.username, self.password = protocol, username, password
        host_listener = "PLAINTEXT_HOST" if protocol == "PLAINTEXT" else protocol
        self.with_env("KCSIM_LISTENERS", f"{host_listener}://0.0.0.0:{self.port},"
                                         f"PLAINTEXT://0.0.0.0:{self.INTERNAL_PORT}")
        if protocol == "SASL_SSL":
            self.with_env("KCSIM_SASL_ENABLED_MECHANISMS", "PLAIN")
            self.with_env("KCSIM_SASL_PLAIN_USERS", f"{username}:{password}")
        return self

    @property
    def _secured(self) -> bool:
        return self.security_protocol != "PLAINTEXT"

    @property
    def ssl_ca_file(self) -> str | None:
        """The CA (PEM, on this machine) that signed the broker's certificate, once started
        in secured mode: what clients trust."""
        return None if self._tls_dir is None else os.path.join(self._tls_dir, "ca.pem")

    def client_config(self) -> dict[str, str]:
        """confluent-kafka's (librdkafka's) settings to reach the broker from this machine."""
        config = {"bootstrap.servers": self.get_bootstrap_server(),
                  "security.protocol": self.security_protocol}
        if self._secured:
            assert self.ssl_ca_file is not None, "start() the container first"
            config["ssl.ca.location"] = self.ssl_ca_file
        if self.security_protocol == "SASL_SSL":
            config |= {"sasl.mechanism": "PLAIN", "sasl.username": self.username,
                       "sasl.password": self.password}
        return config

    def get_bootstrap_server(self) -> str:
        """host:port of the broker for clients on this machine."""
        return f"{self.get_container_host_ip()}:{self.get_exposed_port(self.port)}"

    def start(self, timeout: float = 60.0) -> KcsimContainer:
        super().start()
        if self._secured:
            self._make_certificates()
        self._advertise()
        if self._secured:
            self._wait_ready_secured(timeout)
        else:
            self._wait_ready(timeout)
        return self

    def stop(self, force: bool = True, delete_volume: bool = True) -> None:
        super().stop(force, delete_volume)
        if self._tls_dir is not None:
            shutil.rmtree(self._tls_dir, ignore_errors=True)
            self._tls_dir = None

    def _make_certificates(self) -> None:
        """A CA here, and the broker's certificate for the host clients reach it by, as one
        PEM key store for the container (written with the listeners file)."""
        import trustme

        ca = trustme.CA()
        aliases = self._network_aliases or []
        names = dict.fromkeys([self.get_container_host_ip(), "localhost", "127.0.0.1", *aliases])
        server = ca.issue_cert(*names)
        self._keystore = b"".join(blob.bytes() for blob in server.cert_chain_pems) + \
            server.private_key_pem.bytes()
        self._tls_dir = tempfile.mkdtemp(prefix="kcsim-tc-tls-")
        ca.cert_pem.write_to_path(os.path.join(self._tls_dir, "ca.pem"))

    def _advertise(self) -> None:
        """Write the listeners file the container waits for."""
        aliases = self._network_aliases or []
        internal = aliases[0] if aliases else "$(hostname -i | cut -d' ' -f1)"
        host_listener = "PLAINTEXT_HOST" if not self._secured else self.security_protocol
        text = (f'KCSIM_ADVERTISED_LISTENERS="{host_listener}://{self.get_bootstrap_server()},'
                f'PLAINTEXT://{internal}:{self.INTERNAL_PORT}"\n')
        files = {}
        if self._secured:
            text += f"export KCSIM_SSL_KEYSTORE_LOCATION={_KEYSTORE_FILE}\n"
            files[_KEYSTORE_FILE] = self._keystore
        files[_LISTENERS_FILE] = text.encode()  # last: the container waits for it
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w") as tar:
            for path, data in files.items():
                info = tarfile.TarInfo(path.lstrip("/"))
                info.size, info.mtime, info.mode = len(data), int(time.time()), 0o644
                tar.addfile(info, io.BytesIO(data))
        self.get_wrapped_container().put_archive("/", archive.getvalue())

    def _wait_ready(self, timeout: float) -> None:
        """Until the broker answers DescribeCluster through the host port with that address."""
        bootstrap = self.get_bootstrap_server()

        def attempt() -> str | None:
            try:
                with AdminClient(bootstrap, timeout=2.0) as admin:
                    brokers = [b.address for b in admin.describe_cluster(timeout=2.0).brokers]
            except Exception as exc:  # not listening yet, or the port is not forwarded yet
                return f"{type(exc).__name__}: {exc}"
            if brokers != [bootstrap]:
                raise _GiveUp(f"the broker advertises {brokers}, not {bootstrap}")
            return None

        self._poll(timeout, attempt)

    def _wait_ready_secured(self, timeout: float) -> None:
        """Until a TLS handshake through the host port verifies against the CA, for the host
        clients use, and ApiVersions is answered (allowed before SASL authentication)."""
        host, port = self.get_bootstrap_server().rsplit(":", 1)
        context = ssl.create_default_context(cafile=self.ssl_ca_file)

        def attempt() -> str | None:
            try:
                with socket.create_connection((host, int(port)), timeout=2.0) as plain, \
                        context.wrap_socket(plain, server_hostname=host) as sock:
                    sock.sendall(_API_VERSIONS)
                    answer = b""
                    while len(answer) < 10 and (chunk := sock.recv(10 - len(answer))):
                        answer += chunk
            except ssl.SSLCertVerificationError as exc:
                raise _GiveUp(f"the broker's certificate does not verify: {exc}") from None
            except OSError as exc:  # not listening yet, or the port is not forwarded yet
                return f"{type(exc).__name__}: {exc}"
            if answer[4:8] == _API_VERSIONS[8:12] and answer[8:10] == b"\0\0":
                return None
            return f"not an ApiVersions answer: {answer!r}"

        self._poll(timeout, attempt)

    def _poll(self, timeout: float, attempt: Callable[[], str | None]) -> None:
        """Call `attempt` until it finds the broker ready (None; else it says what it saw, or
        raises _GiveUp), the container stops, or `timeout` s pass."""
        deadline = time.monotonic() + timeout
        problem = "no answer yet"
        while time.monotonic() < deadline:
            self.get_wrapped_container().reload()
            if self.get_wrapped_container().status not in ("created", "running"):
                break
            try:
                found = attempt()
            except _GiveUp as exc:
                problem = str(exc)
                break
            if found is None:
                return
            problem = found
            time.sleep(0.1)
        self._not_ready(self.get_bootstrap_server(), problem)

    def _not_ready(self, bootstrap: str, problem: str) -> NoReturn:
        stdout, stderr = self.get_logs()
        raise TimeoutError(f"kcsim at {bootstrap} is not ready ({problem}); container log:\n"
                           + (stdout + stderr).decode(errors="replace")[-4000:])


class _GiveUp(Exception):
    """What a readiness attempt saw that waiting longer will not change."""


# ApiVersions v0 (size, key 18, version 0, correlation id, client id): answered, before any
# SASL exchange, with the correlation id and error 0 first.
_CLIENT_ID = b"kcsim-testcontainers"
_API_VERSIONS = struct.pack(">ihhih", 10 + len(_CLIENT_ID), 18, 0, 0x6B63, len(_CLIENT_ID)) + \
    _CLIENT_ID
