"""`kcsim health`: exit 0 only when every listener answers ApiVersions, whatever listens on its port."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


def health(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KCSIM_")}
    return subprocess.run([sys.executable, "-m", "kcsim", "health", "--timeout", "2", *args],
                          capture_output=True, text=True, timeout=60, env={**clean, **(env or {})})


def test_healthy_when_every_listener_answers(kcsim_factory):
    server = kcsim_factory(listeners="HOST://127.0.0.1:0", in_memory=True)
    other = kcsim_factory(in_memory=True)
    listeners = f"A://127.0.0.1:{server.port},B://127.0.0.1:{other.port}"
    proc = health(env={"KCSIM_LISTENERS": listeners})  # read from the environment, as in the image
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"A on 127.0.0.1:{server.port}: ok",
                                        f"B on 127.0.0.1:{other.port}: ok"]


@contextlib.contextmanager
def silent_listener() -> Iterator[int]:
    """A port that accepts connections and closes them unanswered (an open port, no broker)."""
    sock = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        sock.close()


def test_unhealthy_when_a_listener_does_not_speak_kafka(kcsim_server):
    with silent_listener() as silent:
        proc = health("--listeners", f"A://127.0.0.1:{kcsim_server.port},B://:{silent}")
        assert proc.returncode == 1
        assert proc.stdout == f"A on 127.0.0.1:{kcsim_server.port}: ok\n"
        assert proc.stderr.startswith(f"B on 127.0.0.1:{silent}: ")


def test_unhealthy_when_nothing_listens():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused
        proc = health("--port", str(port))
    assert proc.returncode == 1
    assert proc.stderr == f"PLAINTEXT on 127.0.0.1:{port}: Connection refused\n"


def test_settings_that_do_not_fit_exit_2():
    proc = health("--listeners", "nonsense")
    assert proc.returncode == 2
    assert proc.stderr == "kcsim: --listeners nonsense: 'nonsense' is not NAME://host:port\n"


def test_secured_listeners_are_probed_over_tls(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(listeners="SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0,"
                                           "SASL_PLAINTEXT://127.0.0.1:0")
    ports = {name: srv.bootstrap_of(name).rsplit(":", 1)[1]
             for name in ("SASL_SSL", "SSL", "SASL_PLAINTEXT")}
    listeners = ",".join(f"{name}://127.0.0.1:{port}" for name, port in ports.items())
    proc = health("--listeners", listeners)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [f"{name} on 127.0.0.1:{port}: ok"
                                        for name, port in ports.items()]
