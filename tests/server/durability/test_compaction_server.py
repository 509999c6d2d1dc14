"""Compaction in a running server: overwriting commits keep `meta/` small, state intact.

Four clients overwrite the same 32 committed offsets as fast as the server
acknowledges them, with 16 KiB segments compacted every 100 ms. Without
compaction `meta/` would hold every record ever written; with it, its typical
(median) size over the second half of the load is a small fraction of that,
it falls back to about one segment once the load stops, and a restart replays
exactly the last committed offsets.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from .wire import COMMIT_V, OFFSET_COMMIT, Wire, commit_request

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.timeout(120)

SEGMENT_BYTES = 16 * 1024
COMPACTION_MS = 100
CLIENTS = 4
PARTITIONS = 8
IN_FLIGHT = 16
LOAD_S = 4.0
FRAME_HEADER_BYTES = 26  # every record also holds its group and topic names
TOPIC = "overwrites"


def meta_bytes(data_dir: Path) -> int:
    total = 0
    for f in (data_dir / "meta").iterdir():
        try:
            total += f.stat().st_size
        except FileNotFoundError:
            pass  # removed by a compaction between listing and stat
    return total


class Overwriter(threading.Thread):
    """Commits offset n to every partition of its group in request n, pipelined."""

    def __init__(self, server: Any, group: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.server, self.group, self.stop = server, group, stop
        self.acked: dict[int, int] = {}
        self.acked_requests = 0
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            self._load()
        except BaseException as exc:
            self.failure = exc

    def _load(self) -> None:
        with Wire.to(self.server) as wire:
            n = 0
            while not self.stop.is_set() or wire.in_flight:
                while not self.stop.is_set() and wire.in_flight < IN_FLIGHT:
                    n += 1
                    wire.send(OFFSET_COMMIT, COMMIT_V, commit_request(
                        self.group, TOPIC, dict.fromkeys(range(PARTITIONS), n)))
                resp = wire.receive()
                parts = {p.partition_index: p.error_code for t in resp.topics
                         for p in t.partitions}
                assert set(parts.values()) == {0}, f"{self.group}: OffsetCommit answered {parts}"
                self.acked_requests += 1  # answers come in request order: this is request n
                self.acked = dict.fromkeys(range(PARTITIONS), self.acked_requests)


def fetch_all(server: Any, groups: list[str]) -> dict[tuple[str, int], int]:
    with Wire.to(server) as wire:
        return wire.fetch({g: (TOPIC, list(range(PARTITIONS))) for g in groups})


def test_meta_stays_bounded_under_overwrites(
    kcsim_factory: Callable[..., Any], unique_name: Callable[[str], str]
) -> None:
    server = kcsim_factory(segment_bytes=SEGMENT_BYTES, compaction_interval_ms=COMPACTION_MS,
                           fsync="never")
    with Wire.to(server) as wire:
        wire.create_topic(TOPIC, PARTITIONS)
    stop = threading.Event()
    clients = [Overwriter(server, unique_name(f"g{i}"), stop) for i in range(CLIENTS)]
    for c in clients:
        c.start()
    samples = []
    started = time.monotonic()
    while time.monotonic() < started + LOAD_S:
        samples.append((time.monotonic() - started, meta_bytes(server.data_dir)))
        time.sleep(0.01)
    stop.set()
    for c in clients:
        c.join(20)
        assert not c.is_alive(), f"{c.group} did not finish"
        if c.failure is not None:
            raise AssertionError(f"{c.group} failed") from c.failure

    written = sum(c.acked_requests * PARTITIONS * (FRAME_HEADER_BYTES + len(c.group) + len(TOPIC))
                  for c in clients)  # a lower bound of the bytes appended to meta/
    assert written > 50 * SEGMENT_BYTES, f"the load wrote only about {written} bytes"
    typical = statistics.median(size for t, size in samples if t > LOAD_S / 2)
    largest = max(size for _, size in samples)
    assert typical < written / 10, (
        f"meta/ held {typical} bytes (median; largest {largest}) over the second half of "
        f"the load, which appended at least {written} bytes")
    settle = time.monotonic() + 10 * COMPACTION_MS / 1000 + 5
    while meta_bytes(server.data_dir) > 2 * SEGMENT_BYTES:
        assert time.monotonic() < settle, (
            f"meta/ still holds {meta_bytes(server.data_dir)} bytes after the load stopped")
        time.sleep(COMPACTION_MS / 1000)

    groups = [c.group for c in clients]
    expected = {(c.group, p): o for c in clients for p, o in c.acked.items()}
    assert fetch_all(server, groups) == expected
    server.restart()
    assert fetch_all(server, groups) == expected
