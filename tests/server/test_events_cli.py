"""`kcsim events`: a data dir's events read as start-up reads them, or a broker's tailed over
its control API's event stream (here a stand-in serving the agreed `/events/stream`)."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.server.cli import main

from .event_dirs import write_events

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict[str, Any]]]:
    """A data dir a broker wrote the sample events to, and those events' fields."""
    data = tmp_path_factory.mktemp("events") / "data"
    return str(data), write_events(data)


def events(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = main(["events", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_a_data_dirs_events_as_json_lines_in_order(
        logged: tuple[str, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]) -> None:
    data, fields = logged
    code, out, _ = events(capsys, "--data-dir", data, "--json")
    assert code == 0
    assert [json.loads(line) for line in out] == fields
    assert len(fields) == 8


@pytest.mark.parametrize(("filters", "wanted"), [
    (("--group", "audit"), lambda e: e["group"] == "audit"),
    (("--kind", "group-created"), lambda e: e["kind"] == "group-created"),
    (("--type", "classic", "--kind", "member-left"),
     lambda e: e["group_type"] == "classic" and e["kind"] == "member-left"),
    (("--since", "5"), lambda e: e["seq"] >= 5),
    (("--group", "nobody"), lambda e: False),
])
def test_filters_select_the_events_the_history_query_does(
        logged: tuple[str, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str],
        filters: tuple[str, ...], wanted: Any) -> None:
    data, fields = logged
    code, out, _ = events(capsys, "--data-dir", data, "--json", *filters)
    assert code == 0
    assert [json.loads(line) for line in out] == [e for e in fields if wanted(e)]


def test_readable_lines_say_when_who_what_and_why(
        logged: tuple[str, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]) -> None:
    data, _ = logged
    code, out, _ = events(capsys, "--data-dir", data, "--group", "billing")
    assert code == 0
    assert out[0] == "1970-01-01 00:00:01.000  #0  billing (classic)  group-created"
    assert out[2] == ("1970-01-01 00:00:01.002  #2  billing (classic)  rebalance-started  "
                      "member-joined  member m-1")
    assert out[3] == ("1970-01-01 00:00:01.003  #3  billing (classic)  assignment-changed  "
                      "member m-1  added=orders-0,orders-1 removed=")
    assert out[-2].endswith("member-left  session-timeout  member m-1")


@pytest.mark.parametrize(("args", "option"), [
    (("--kind", "member-exploded"), "--kind: unknown kind 'member-exploded'"),
    (("--type", "cluster"), "--type: unknown type 'cluster'"),
    (("--since", "-1"), "--since: -1 is not an event's number"),
    (("--since", "x"), "--since: invalid int value: 'x'"),
])
def test_bad_filters_exit_2_naming_the_option(
        logged: tuple[str, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str],
        args: tuple[str, ...], option: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["events", "--data-dir", logged[0], *args])
    assert exited.value.code == 2
    assert f"argument {option}" in capsys.readouterr().err


def test_without_a_source_it_exits_2_saying_what_to_give(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KCSIM_CONTROL_URL", raising=False)
    with pytest.raises(SystemExit) as exited:
        main(["events"])
    assert exited.value.code == 2
    assert "give --control URL (or $KCSIM_CONTROL_URL) or --data-dir D" in capsys.readouterr().err


def test_a_directory_without_a_record_log_exits_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = events(capsys, "--data-dir", str(tmp_path))
    assert (code, out) == (1, [])
    assert f"kcsim events: {tmp_path} holds no kcsim record log" in err


# -- tailing a broker ------------------------------------------------------------

STREAMED = [{"seq": 4, "time_ms": 61_000, "group": "g", "group_type": "consumer",
             "kind": "member-joined", "cause": "", "member": "c-1", "detail": {}},
            {"seq": 5, "time_ms": 61_500, "group": "g", "group_type": "consumer",
             "kind": "epoch-bumped", "cause": "member-joined", "member": "",
             "detail": {"epoch": 2}}]


class FakeBroker(ThreadingHTTPServer):
    """`/events/stream` as the control API serves it: the first event, a keep-alive, and
    the second once `go_on` is set; the group `refused` is refused with 400."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _StreamHandler)
        self.paths: list[str] = []
        self.go_on = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _StreamHandler(BaseHTTPRequestHandler):
    server: FakeBroker

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        if "group=refused" in self.path:
            body = json.dumps({"error": "not a group id", "field": "group"}).encode()
            self.send_response(400)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        first, second = (f"id: {e['seq']}\ndata: {json.dumps(e)}\n\n".encode() for e in STREAMED)
        self.wfile.write(first + b": keep-alive\n\n")
        self.wfile.flush()
        self.server.go_on.wait(30)
        self.wfile.write(second)


@pytest.fixture
def broker() -> Iterator[FakeBroker]:
    server = FakeBroker()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.go_on.set()
        server.shutdown()
        server.server_close()


def test_it_passes_the_filters_to_the_stream_and_prints_each_event(
        broker: FakeBroker, capsys: pytest.CaptureFixture[str]) -> None:
    broker.go_on.set()
    code, out, _ = events(capsys, "--control", broker.url, "--group", "g", "--kind",
                          "member-joined", "--type", "consumer", "--since", "4", "--json")
    assert code == 0
    assert [json.loads(line) for line in out] == STREAMED
    assert broker.paths == ["/events/stream?group=g&kind=member-joined&type=consumer&since=4"]


def test_each_event_is_printed_as_it_comes(broker: FakeBroker, tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "kcsim", "events", "--control", broker.url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == (
            "1970-01-01 00:01:01.000  #4  g (consumer)  member-joined  member c-1\n")
        broker.go_on.set()  # the second event only once the first was shown
        assert proc.stdout.readline() == (
            "1970-01-01 00:01:01.500  #5  g (consumer)  epoch-bumped  member-joined  epoch=2\n")
        assert proc.wait(30) == 0  # the broker ended the stream
    finally:
        proc.kill()
        proc.communicate()


def test_a_filter_the_broker_refuses_exits_2_naming_it(
        broker: FakeBroker, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["events", "--control", broker.url, "--group", "refused"])
    assert exited.value.code == 2
    assert "argument --group: not a group id" in capsys.readouterr().err
    assert broker.paths == ["/events/stream?group=refused"]


def test_a_broker_that_cannot_be_reached_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    with socket_taken() as port:
        code, out, err = events(capsys, "--control", f"http://127.0.0.1:{port}")
    assert (code, out) == (1, [])
    assert f"kcsim events: cannot reach the control API at http://127.0.0.1:{port}" in err


@contextlib.contextmanager
def socket_taken() -> Iterator[int]:
    """A port bound but not listening: connections to it are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
