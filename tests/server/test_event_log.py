"""`kcsim serve --event-log FILE`: the events of a run as JSON lines, never holding the
broker back (a bounded queue, drops counted in the file), never written twice over restarts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio

from kcsim.coordinator.shared.events import EventHistory, event_fields
from kcsim.server.event_log import EventLogFile
from tests.processes import stop_process

from .event_dirs import SAMPLE, record_events, serving, write_events

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def fold(history: EventHistory, count: int, group: str = "g") -> list[dict[str, Any]]:
    """`count` events folded into `history` at once (no checkpoint between them)."""
    folded = []
    for _ in range(count):
        record = history.event(history.issued, group, "classic", "member-joined",
                               member=f"m-{history.issued}")
        history.apply(record)
        folded.append(event_fields(record.value))
    return folded


@asynccontextmanager
async def writing(path: Path, **settings: Any) -> AsyncIterator[
        tuple[EventHistory, EventLogFile, trio.Nursery]]:
    """An event log file written from a history, its writer running in the nursery."""
    history = EventHistory()
    log = EventLogFile(str(path), **settings)
    log.open()
    async with trio.open_nursery() as nursery:
        await nursery.start(log.run, history)
        yield history, log, nursery


async def test_each_event_is_a_json_line_of_its_fields(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    async with writing(path) as (history, log, nursery):
        first = fold(history, 2)
        await log.caught_up()
        assert lines(path) == first
        history.apply(history.event(5, "h", "consumer", "epoch-bumped", "member-joined",
                                    "c-1", {"epoch": 3, "added": ["t-0"]}))
        await log.caught_up()
        nursery.cancel_scope.cancel()
    assert lines(path)[2] == {"seq": 2, "time_ms": 5, "group": "h", "group_type": "consumer",
                        "kind": "epoch-bumped", "cause": "member-joined", "member": "c-1",
                        "detail": {"epoch": 3, "added": ["t-0"]}}


async def test_a_writer_behind_drops_past_its_bound_and_says_how_many(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "events.jsonl"
    async with writing(path, bound=3) as (history, log, nursery):
        burst = fold(history, 10)  # the writer gets no turn: 3 are queued, 7 dropped
        assert log.dropped == 7
        await log.caught_up()
        assert lines(path) == [*burst[:3], {"dropped": 7}]
        after = fold(history, 1, group="later")  # the queue has room again
        await log.caught_up()
        nursery.cancel_scope.cancel()
    assert lines(path) == [*burst[:3], {"dropped": 7}, *after]
    assert "fell behind: 7 events dropped" in caplog.text


async def test_events_queued_at_shutdown_are_written(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    async with writing(path) as (history, _log, nursery):
        folded = fold(history, 4)
        nursery.cancel_scope.cancel()  # before the writer had a turn
    assert lines(path) == folded
    fold(history, 1)  # stopped: no longer listening
    assert lines(path) == folded


async def test_after_a_restart_replayed_events_are_not_written_again(tmp_path: Path) -> None:
    data, path = tmp_path / "data", tmp_path / "events.jsonl"
    for run, events in enumerate((SAMPLE[:3], SAMPLE[3:])):
        async with serving(data) as server:
            assert server.state.groups is not None
            history = server.state.groups.events
            assert len(history) == (0 if run == 0 else 3)  # replayed from the log
            log = EventLogFile(str(path))
            log.open()
            async with trio.open_nursery() as nursery:
                await nursery.start(log.run, history)
                record_events(server, events)
                await log.caught_up()
                nursery.cancel_scope.cancel()
    written = lines(path)
    assert [e["seq"] for e in written] == list(range(len(SAMPLE)))
    assert [(e["group"], e["kind"]) for e in written] == [(e[0], e[2]) for e in SAMPLE]


def serve(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KCSIM_")}
    return subprocess.Popen(
        [sys.executable, "-m", "kcsim", "serve", "--port", "0", "--log-level", "WARNING",
         *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean,
        cwd=tmp_path)


def test_kcsim_serve_appends_only_the_events_of_its_own_run(tmp_path: Path) -> None:
    data, path = tmp_path / "data", tmp_path / "events.jsonl"
    write_events(data)
    path.write_text('{"seq": -1}\n')  # a file from before is appended to, not replaced
    proc = serve(tmp_path, "--data-dir", str(data), "--event-log", str(path))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("kcsim ready on ")
    finally:
        assert stop_process(proc, 10) == 0
    assert lines(path) == [{"seq": -1}]  # the replayed events are not written again


def test_an_event_log_that_cannot_be_written_stops_the_start_with_status_1(
        tmp_path: Path) -> None:
    path = tmp_path / "missing" / "events.jsonl"
    proc = serve(tmp_path, "--in-memory", "--event-log", str(path))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert "kcsim ready" not in out
    assert f"cannot write the event log {path}: [Errno 2]" in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
async def test_a_file_that_cannot_be_written_is_given_up_and_the_broker_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    async with writing(Path("/dev/full")) as (history, log, _nursery):  # no space left
        fold(history, 2)
        await log.caught_up()
        assert "cannot write the event log /dev/full: [Errno 28]" in caplog.text
        fold(history, 1)  # no longer listened to: nothing queued, nothing raised
        await log.caught_up()
    assert log.written == 0
    assert len(history) == 3
