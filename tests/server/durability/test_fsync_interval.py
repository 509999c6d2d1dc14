"""`--fsync interval --fsync-interval-ms N` fsyncs the log every N ms under load.

A server configured through `kcsim serve` flags runs in-process on a real
socket; a client commits offsets steadily while the test counts the writer's
fsyncs over a window. The count must match window / N, and a five times longer
interval must give about a fifth of the fsyncs.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from kcsim.server import cli
from kcsim.server.embedded import EmbeddedServer

from .wire import Wire

if TYPE_CHECKING:
    from pathlib import Path

WINDOW_S = 1.2
TOPIC = "fsync-interval"
PARTITIONS = 2
COMMIT_GAP_S = 0.001  # a steady load, many commits per interval, without hogging a core


def _syncs_under_load(data_dir: Path, interval_ms: int) -> tuple[int, float]:
    """(fsyncs, seconds) over a window of steady commits."""
    args = cli.parser().parse_args([
        "serve", "--port", "0", "--data-dir", str(data_dir),
        "--fsync", "interval", "--fsync-interval-ms", str(interval_ms)])
    with EmbeddedServer(cli.serve_config(args, env={})) as srv, \
            Wire("127.0.0.1", srv.port) as wire:
        assert srv.server is not None
        writer = srv.server.durability.writer
        assert (writer.policy, writer.interval_ms) == ("interval", interval_ms)

        def syncs() -> int:
            return int(srv.run_sync(lambda: writer.stats.syncs))

        wire.create_topic(TOPIC, PARTITIONS)
        offset = 0

        def commit_for(seconds: float) -> None:
            nonlocal offset
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                offset += 1
                wire.commit("fsync-interval", TOPIC, dict.fromkeys(range(PARTITIONS), offset))
                time.sleep(COMMIT_GAP_S)

        commit_for(2 * interval_ms / 1000)  # past the first, irregular, fsync
        before, started = syncs(), time.monotonic()
        commit_for(WINDOW_S)
        after, elapsed = syncs(), time.monotonic() - started
    return after - before, elapsed


def _assert_about(count: int, elapsed: float, interval_ms: int) -> None:
    expected = elapsed * 1000 / interval_ms
    # Never more often than the interval; a loaded machine may stretch a period a bit.
    assert 0.65 * expected <= count <= expected + 1, (
        f"{count} fsyncs in {elapsed:.2f} s with --fsync-interval-ms {interval_ms}, "
        f"expected about {expected:.1f}")


def test_fsync_interval_sets_the_rate_of_fsyncs(tmp_path):
    short, short_s = _syncs_under_load(tmp_path / "short", 40)
    long, long_s = _syncs_under_load(tmp_path / "long", 200)
    _assert_about(short, short_s, 40)
    _assert_about(long, long_s, 200)
    ratio = (short / short_s) / (long / long_s)
    assert 3 <= ratio <= 7, f"fsync rates {short / short_s:.1f}/s and {long / long_s:.1f}/s"
