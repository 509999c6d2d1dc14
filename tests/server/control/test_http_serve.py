"""`kcsim serve` serves the HTTP control API only when asked, and stops, saying why, when
its port cannot be had."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import urllib.request
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


def test_without_a_control_port_no_control_api_is_served(
        kcsim_factory: Callable[..., Any]) -> None:
    server = kcsim_factory(in_memory=True)
    assert "control API" not in server.ready_line


def test_the_control_api_listens_where_the_settings_say(
        kcsim_factory: Callable[..., Any]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = kcsim_factory(in_memory=True, control_port=port, control_host="127.0.0.1")
    url = re.search(r"; control API (http://\S+)$", server.ready_line)
    assert url and url.group(1) == f"http://127.0.0.1:{port}"
    with urllib.request.urlopen(f"{url.group(1)}/clock", timeout=10) as answer:
        assert set(json.load(answer)) == {"now_ms", "frozen"}
    assert "for tests only" in server.stderr()


def test_a_control_port_in_use_stops_the_server_with_status_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        clean = {k: v for k, v in os.environ.items() if not k.startswith("KCSIM_")}
        proc = subprocess.run(
            [sys.executable, "-m", "kcsim", "serve", "--in-memory", "--port", "0"],
            capture_output=True, text=True, timeout=30,
            env={**clean, "KCSIM_CONTROL_PORT": str(port)})
    assert proc.returncode == 1
    assert "kcsim ready" not in proc.stdout
    assert f"cannot serve the control API on 127.0.0.1:{port}: [Errno 98]" in proc.stderr
