# After merging evcore + evhttp + evfile: add as tests/server/test_events_end_to_end.py (passed on a trial merge).
"""A real client's group events, as `kcsim events` tails them, as `--event-log` writes them and
as `kcsim events --data-dir` reads them after the broker stopped: the same events, each once,
over a restart too."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

QUIET = {"log_level": 0}


def join_and_leave(bootstrap: str, group: str) -> None:
    """A KIP-848 consumer joins `group`, is assigned the topic's partitions, and leaves."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "group.protocol": "consumer", **QUIET})
    consumer.subscribe(["orders"])
    for _ in range(100):
        consumer.poll(0.1)
        if len(consumer.assignment()) == 2:
            break
    assert len(consumer.assignment()) == 2
    consumer.close()


def kcsim_events(*args: str) -> list[dict[str, Any]]:
    done = subprocess.run([sys.executable, "-m", "kcsim", "events", "--json", *args],
                          capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_tailed_logged_and_read_back_events_agree(
        kcsim_factory: Callable[..., Any], tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    server = kcsim_factory(control_port=0, event_log=str(path))
    url = re.search(r"control API (http://\S+)", server.ready_line)
    assert url
    admin = AdminClient({"bootstrap.servers": server.bootstrap, **QUIET})
    admin.create_topics([NewTopic("orders", 2, 1)])["orders"].result(30)
    tail = subprocess.Popen(
        [sys.executable, "-m", "kcsim", "events", "--control", url.group(1), "--group", "g",
         "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    timer = threading.Timer(60, tail.kill)
    timer.start()
    try:
        join_and_leave(server.bootstrap, "g")
        assert tail.stdout is not None
        tailed = []
        while not tailed or tailed[-1]["kind"] != "empty":
            tailed.append(json.loads(tail.stdout.readline()))
    finally:
        timer.cancel()
        tail.kill()
        tail.communicate()
    kinds = [e["kind"] for e in tailed]
    assert kinds[:2] == ["group-created", "member-joined"]
    assert ("member-left", "leave-request") in [(e["kind"], e["cause"]) for e in tailed]
    assert server.stop() == 0
    logged = [json.loads(line) for line in path.read_text().splitlines()]
    assert logged == tailed
    assert kcsim_events("--data-dir", str(server.data_dir)) == logged

    server.start()  # the replayed events are not written again; new ones are numbered on
    join_and_leave(server.bootstrap, "g")
    assert server.stop() == 0
    again = [json.loads(line) for line in path.read_text().splitlines()]
    assert again[:len(logged)] == logged
    assert [e["seq"] for e in again] == list(range(len(again)))
    assert len(again) > len(logged)
    assert kcsim_events("--data-dir", str(server.data_dir)) == again
