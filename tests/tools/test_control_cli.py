"""`kcsim control` against `kcsim serve --control-port`: each subcommand prints the API's
JSON answer, and a refusal prints its message and exits 1."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.server.cli import main

if TYPE_CHECKING:
    from collections.abc import Callable


@pytest.fixture
def url(kcsim_factory: Callable[..., Any]) -> str:
    server = kcsim_factory(in_memory=True, control_port=0)
    found = re.search(r"control API (http://\S+)", server.ready_line)
    assert found
    return found.group(1)


def control(capsys: pytest.CaptureFixture[str], url: str, *args: str) -> tuple[int, Any, str]:
    """Run `kcsim control --url URL ARGS`: (exit status, JSON printed, stderr)."""
    code = main(["control", "--url", url, *args])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else None, err


def test_the_command_line_entry_point_prints_the_clock(url: str) -> None:
    done = subprocess.run([sys.executable, "-m", "kcsim", "control", "--url", url,
                           "clock", "advance", "45000"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)) == {"now_ms", "frozen"}


def test_clock_subcommands(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, now, _ = control(capsys, url, "clock", "now")
    _, frozen, _ = control(capsys, url, "clock", "freeze")
    assert frozen["frozen"] is True and frozen["now_ms"] >= now["now_ms"]
    _, advanced, _ = control(capsys, url, "clock", "advance", "45000")
    assert advanced == {"now_ms": frozen["now_ms"] + 45_000, "frozen": True}
    _, resumed, _ = control(capsys, url, "clock", "resume")
    assert resumed["frozen"] is False


def test_fault_subcommands_add_list_get_release_remove_and_clear(
        url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, added, _ = control(capsys, url, "faults", "add", "--api", "OffsetCommit",
                             "--error", "NOT_COORDINATOR", "--times", "2", "--group", "g")
    assert code == 0
    assert added["rule"] == {"api": "OffsetCommit", "group": "g", "times": 2,
                             "error": "NOT_COORDINATOR"}
    _, held, _ = control(capsys, url, "faults", "add", "--api", "SyncGroup", "--api", "Heartbeat",
                         "--hold", "--times", "always", "--latency-ms", "5")
    assert held["rule"] == {"api": ["SyncGroup", "Heartbeat"], "times": None,
                            "latency_ms": 5, "hold": True}
    _, listed, _ = control(capsys, url, "faults", "list")
    assert [r["id"] for r in listed["rules"]] == [added["id"], held["id"]]
    _, got, _ = control(capsys, url, "faults", "get", str(added["id"]))
    assert got == added
    _, released, _ = control(capsys, url, "faults", "release")
    assert released == {"released": 0}
    _, removed, _ = control(capsys, url, "faults", "remove", str(added["id"]))
    assert removed == {**added, "active": False}
    _, cleared, _ = control(capsys, url, "faults", "clear")
    assert [r["id"] for r in cleared["removed"]] == [held["id"]]
    _, coordinator, _ = control(capsys, url, "coordinator", "g", "loading")
    assert coordinator["group"] == "g" and coordinator["state"] == "loading"


def test_requests_state_and_waits(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, found, _ = control(capsys, url, "requests", "--api", "OffsetFetch", "--group", "g")
    assert (code, found) == (0, {"requests": [], "last_seq": 0})
    assert control(capsys, url, "requests", "--clear")[1] == {"cleared": True}
    assert control(capsys, url, "state", "groups")[1] == {"groups": []}
    assert control(capsys, url, "state", "members", "g")[1] == {"group": "g", "members": []}
    assert control(capsys, url, "state", "offsets", "--group", "g")[1] == {"offsets": []}
    assert control(capsys, url, "state", "paused")[1] == {"paused": []}
    assert control(capsys, url, "state", "lag", "--group", "g")[1] == {"lag": []}
    assert control(capsys, url, "log-maintenance", "--roll")[1] == {"retention": [],
                                                                    "cleaned": []}
    assert control(capsys, url, "wait", "committed", "g")[1] == {"group": "g", "offsets": []}

    code, _, err = control(capsys, url, "wait", "group", "G", "--state", "Stable",
                           "--members", "3", "--timeout", "0.2")
    assert code == 1
    assert err == ("kcsim control: HTTP 408: timed out after 0.2 s waiting for group 'G' to be "
                   "Stable and 3 members; there is no such group\n")
    code, _, err = control(capsys, url, "wait", "request", "--api", "Fetch", "--timeout", "0.2")
    assert code == 1 and "HTTP 408: timed out after 0.2 s waiting for 1 request(s)" in err


def test_refusals_exit_1_with_the_apis_message(url: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = control(capsys, url, "faults", "add", "--api", "OffsetComit",
                             "--error", "NOT_COORDINATOR")
    assert (code, out) == (1, None)
    assert err == ("kcsim control: HTTP 400: api: unknown API 'OffsetComit' "
                   "(did you mean OffsetCommit?)\n")
    code, _, err = control(capsys, url, "faults", "remove", "7")
    assert code == 1 and err == "kcsim control: HTTP 400: rule_id: no fault rule 7 is installed\n"
    code, _, err = control(capsys, url, "clock", "advance", "-5")
    assert code == 1 and "HTTP 400: ms: expected a whole number of milliseconds" in err


def test_an_unreachable_api_exits_1_saying_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = control(capsys, "http://127.0.0.1:1", "clock", "now")
    assert code == 1 and err.startswith("kcsim control: cannot reach http://127.0.0.1:1: ")


def test_the_url_is_required_and_checked(capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KCSIM_CONTROL_URL", raising=False)
    with pytest.raises(SystemExit) as exited:
        main(["control", "clock", "now"])
    assert exited.value.code == 2
    assert "--url is required (or set KCSIM_CONTROL_URL)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["control", "--url", "127.0.0.1:9644", "clock", "now"])
    assert "--url: expected a URL like http://127.0.0.1:9644" in capsys.readouterr().err
