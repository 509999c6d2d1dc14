"""`kcsim serve --metrics-port` serves GET /metrics in Prometheus' text format, the control
port serves it too, and a metrics port already in use stops start-up with status 2,
naming the port."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest

from ..conftest import REPO

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..conftest import KcsimProcess

METRICS = re.compile(r"metrics (http://\S+/metrics)")
CONTROL = re.compile(r"control API (http://\S+)")


def get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.headers["content-type"], answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["content-type"], exc.read().decode()


def test_the_metrics_port_serves_prometheus_text(
        kcsim_factory: Callable[..., KcsimProcess]) -> None:
    server = kcsim_factory(metrics_port=0)
    found = METRICS.search(server.ready_line)
    assert found, server.ready_line
    status, content_type, body = get(found.group(1))
    assert status == 200
    assert content_type.startswith("text/plain; version=0.0.4")
    assert "# TYPE kafka_server_group_coordinator_metrics_group_count untyped" in body
    assert 'kafka_server_group_coordinator_metrics_group_count{protocol="classic"} 0' in body
    assert "process_cpu_seconds_total" in body
    status, _, _ = get(found.group(1).removesuffix("/metrics") + "/other")
    assert status == 404


def test_the_control_port_serves_metrics_too(
        kcsim_factory: Callable[..., KcsimProcess]) -> None:
    server = kcsim_factory(control_port=0)
    assert METRICS.search(server.ready_line) is None  # no metrics port asked for
    found = CONTROL.search(server.ready_line)
    assert found, server.ready_line
    status, content_type, body = get(found.group(1) + "/metrics")
    assert (status, content_type.split(";")[0]) == (200, "text/plain")
    assert "kafka_consumergroup_lag" in body or "kafka_network_RequestMetrics_Count" in body
    status, content_type, _ = get(found.group(1) + "/clock")  # the API's routes are still there
    assert (status, content_type) == (200, "application/json")


def test_a_metrics_port_in_use_exits_2_naming_it(tmp_path: Any) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "kcsim", "serve", "--in-memory", "--port", "0",
             "--metrics-port", str(port)],
            cwd=REPO, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert f"cannot serve metrics on 127.0.0.1:{port} (--metrics-port {port})" in proc.stderr
    assert "kcsim ready" not in proc.stdout


@pytest.mark.parametrize("value", ["70000", "x"])
def test_a_bad_metrics_port_is_refused(value: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "kcsim", "serve", "--metrics-port", value],
                          cwd=REPO, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert "metrics_port" in proc.stderr or "metrics-port" in proc.stderr
