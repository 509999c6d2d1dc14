"""`kcsim control nodes|leader|move-coordinator|shuffle-leaders` against `kcsim serve
--brokers 3 --control-port`: the node controls over HTTP, and their refusals."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from .test_control_cli import control

if TYPE_CHECKING:
    from collections.abc import Callable


@pytest.fixture
def url(kcsim_factory: Callable[..., Any]) -> str:
    server = kcsim_factory(in_memory=True, control_port=0, brokers=3)
    found = re.search(r"control API (http://\S+)", server.ready_line)
    assert found
    return found.group(1)


def live(answer: Any) -> dict[int, bool]:
    return {n["node"]: n["live"] for n in answer["nodes"]}


def test_nodes_stop_and_start(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, listed, _ = control(capsys, url, "nodes", "list")
    assert code == 0 and live(listed) == {1: True, 2: True, 3: True}
    ports = {n["node"]: int(n["listeners"]["PLAINTEXT"].rsplit(":", 1)[1])
             for n in listed["nodes"]}
    assert ports[2] != ports[1] != ports[3]
    _, stopped, _ = control(capsys, url, "nodes", "stop", "2")
    assert live(stopped) == {1: True, 2: False, 3: True}
    _, started, _ = control(capsys, url, "nodes", "start", "2")
    assert live(started) == {1: True, 2: True, 3: True}
    assert started["nodes"][1]["listeners"] == listed["nodes"][1]["listeners"]


def test_moves(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, moved, _ = control(capsys, url, "move-coordinator", "g", "3", "--load-ms", "100")
    assert code == 0 and moved["coordinator"] == 3
    code, moved, _ = control(capsys, url, "move-coordinator", "tx", "2", "--transactional")
    assert code == 0 and moved["coordinator"] == 2
    code, led, _ = control(capsys, url, "leader", "__consumer_offsets", "0", "2")
    assert code == 0 and led["leader"] == 2
    code, _, _ = control(capsys, url, "shuffle-leaders", "--seed", "3")
    assert code == 0


def test_refusals_name_the_problem(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = control(capsys, url, "nodes", "stop", "9")
    assert code == 1 and "no node 9" in err
    control(capsys, url, "nodes", "stop", "1")
    control(capsys, url, "nodes", "stop", "2")
    code, _, err = control(capsys, url, "nodes", "stop", "3")
    assert code == 1 and "last live node" in err
    code, _, err = control(capsys, url, "leader", "t", "0", "1")
    assert code == 1 and "node 1 is stopped" in err
