"""Damaged `meta/` logs as `kcsim serve` meets them at start-up.

A damaged tail (a crash mid-write) is cut with a warning and the server starts
with everything before it; damage before the tail stops start-up with exit code
1 and a message naming the file and byte, until `--repair` cuts the log there.
A missing segment and a second server on the same data dir are refused clearly.

Each test commits offsets 1..N for one partition, one record each, right after
the two topic records (`__consumer_offsets`, written at the first start, then the
test's topic): the record at log position i + 1 holds offset i, so the offset a
restarted server returns tells exactly which records it kept.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from ...conftest import REPO, KcsimProcess
from .wire import Wire

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.timeout(120)

TOPIC, GROUP = "t", "g"
SEGMENT_HEADER = 32  # bytes before the first frame of a segment file
FRAME_PREFIX = 8  # length u32 + crc u32; length counts the bytes after them
# Without the group event log, whose commit summaries would fall between the commits.
SMALL_SEGMENTS = {"segment_bytes": 1024, "compaction_interval_ms": 0, "events": False}
FIRST_COMMIT_AT = 2  # log position of offset 1: after the two topic records


def commit_sequence(server: Any, count: int) -> None:
    """Offsets 1..count for partition 0, one commit (one record) each."""
    with Wire.to(server) as wire:
        wire.create_topic(TOPIC, 1)
        for offset in range(1, count + 1):
            wire.commit(GROUP, TOPIC, {0: offset})


def committed(server: Any) -> int:
    with Wire.to(server) as wire:
        return wire.fetch({GROUP: (TOPIC, [0])})[(GROUP, 0)]


def segments(server: Any) -> list[Path]:
    return sorted((server.data_dir / "meta").glob("*.log"))


def frame_starts(path: Path) -> list[int]:
    """Byte position of every frame in a segment file (walking the length prefixes)."""
    data = path.read_bytes()
    starts, pos = [], SEGMENT_HEADER
    while pos + FRAME_PREFIX <= len(data):
        starts.append(pos)
        pos += FRAME_PREFIX + struct.unpack_from("<I", data, pos)[0]
    return starts


def flip_byte(path: Path, position: int) -> None:
    with open(path, "r+b") as f:
        f.seek(position)
        byte = f.read(1)[0]
        f.seek(position)
        f.write(bytes([byte ^ 0x5A]))


def start_fails(server: Any, **extra: Any) -> tuple[int, str]:
    """Run `kcsim serve` for this server's data dir, expecting it to exit: (code, stderr)."""
    settings = {**server.settings, **extra}
    argv = KcsimProcess(server.data_dir, server.log_path, port=0, **settings).command()
    log = server.log_path.with_suffix(".refused.log")
    with open(log, "w") as err:
        proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=err,
                                stdin=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            if "ready on" in line:
                proc.kill()
                proc.wait()
                pytest.fail(f"kcsim started although it should have refused:\n{log.read_text()}")
        code = proc.wait(20)
    return code, log.read_text()


@pytest.fixture
def small_server(kcsim_factory: Callable[..., Any]) -> Any:
    """A server whose `meta/` rolls a segment every ~20 records, never compacted, and holds
    only the test's records (no group events)."""
    return kcsim_factory(**SMALL_SEGMENTS)


def test_truncated_tail_is_cut_and_earlier_state_kept(small_server: Any) -> None:
    commit_sequence(small_server, 30)
    assert small_server.stop() == 0
    last = segments(small_server)[-1]
    final_frame = frame_starts(last)[-1]
    os.truncate(last, final_frame + 11)  # the last frame is now partial

    small_server.start()
    assert committed(small_server) == 29
    log = small_server.stderr(all_runs=False)
    assert re.search(rf"WARNING .*truncating torn tail of {re.escape(str(last))} "
                     rf"at byte {final_frame}", log), log

    commit_sequence(small_server, 31)  # the cut log takes appends that replay later
    small_server.restart()
    assert committed(small_server) == 31


@pytest.mark.parametrize("where", ["length", "crc", "body"])
def test_flipped_bits_in_tail_are_cut(small_server: Any, where: str) -> None:
    commit_sequence(small_server, 30)
    assert small_server.stop() == 0
    last = segments(small_server)[-1]
    final_frame = frame_starts(last)[-1]
    offset = {"length": 1, "crc": 5, "body": last.stat().st_size - final_frame - 2}[where]
    flip_byte(last, final_frame + offset)

    small_server.start()
    assert committed(small_server) == 29
    log = small_server.stderr(all_runs=False)
    assert re.search(rf"WARNING .*truncating torn tail of {re.escape(str(last))} "
                     rf"at byte {final_frame}", log), log


def test_corrupt_middle_segment_refuses_start_until_repair(small_server: Any) -> None:
    commit_sequence(small_server, 70)
    assert small_server.stop() == 0
    files = segments(small_server)
    assert len(files) >= 3, f"expected several segments, got {[f.name for f in files]}"
    middle = files[1]
    base = int(middle.stem)
    starts = frame_starts(middle)
    damaged = 5
    flip_byte(middle, starts[damaged] + FRAME_PREFIX + 20)

    code, log = start_fails(small_server)
    assert code == 1, log
    assert f"corrupt log file {middle} at byte {starts[damaged]}" in log, log

    small_server.settings["repair"] = True
    small_server.start()
    assert committed(small_server) == base + damaged - FIRST_COMMIT_AT
    log = small_server.stderr(all_runs=False)
    assert f"cutting the log at byte {starts[damaged]} of {middle}" in log, log

    small_server.settings["repair"] = False  # the repaired log needs no further repair
    small_server.restart()
    assert committed(small_server) == base + damaged - FIRST_COMMIT_AT


def test_missing_segment_refuses_start(small_server: Any) -> None:
    commit_sequence(small_server, 70)
    assert small_server.stop() == 0
    files = segments(small_server)
    assert len(files) >= 3, f"expected several segments, got {[f.name for f in files]}"
    files[1].unlink()

    code, log = start_fails(small_server)
    assert code == 1, log
    assert re.search(rf"{re.escape(str(files[2]))} at byte 0: missing segment: expected a "
                     rf"segment starting at position \d+, found {int(files[2].stem)}", log), log

    small_server.settings["repair"] = True
    small_server.start()
    assert committed(small_server) == int(files[1].stem) - FIRST_COMMIT_AT


def test_second_server_on_same_data_dir_is_refused(kcsim_server: Any) -> None:
    commit_sequence(kcsim_server, 3)
    code, log = start_fails(kcsim_server)
    assert code == 1, log
    pid = kcsim_server.proc.pid
    assert (f"data directory {kcsim_server.data_dir} is already in use by pid {pid}"
            in log), log
    assert committed(kcsim_server) == 3  # the first server is unaffected
